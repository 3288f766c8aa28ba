/**
 * `keysim serve --workers N`: throughput of `keys.verifyKey` with 1 and with N HTTP worker
 * processes (one engine owner either way), measured in one run with interleaved repetitions.
 *
 * Both simulators run in their own processes (http-server-child.ts `sim --workers N`), the load
 * generator in a third: wrk where it is installed (it needs far less CPU per request than
 * autocannon, which leaves the workers more of a small machine), else autocannon from here; the
 * common method — 100 connections, pipelining 10 (the target's), then pipelining 1.
 * Each repetition measures both, in alternating order, and gives one ratio (N workers / 1
 * worker); the table shows the ratios' min/median/max against the target of 0.7 × N. On a
 * machine with fewer cores than N + 2 (workers, owner, generator) the processes share cores and
 * the ratio says so rather than what more cores would give: run it where cores ≥ N + 2, and
 * pass a larger N with `KEYSIM_BENCH_WORKERS=N`.
 *
 * Where /proc can be read (Linux), each run also measures the CPU time per request of every role —
 * the single process; the owner; the workers together — and from them predicts the ratio a machine
 * with a core for each process would give: N workers serve at most N / (workers' CPU per request),
 * the owner at most 1 / (its CPU per request), against 1 / (the single process's). A model, printed
 * beside the measured ratio and never instead of it. The generator's CPU per request (wrk, read
 * when it exits) completes the budget of this machine's cores: a measured ratio well under what
 * that budget allows means something other than CPU holds the workers back.
 *
 * A second, short measurement uses few connections (10, pipelining 10): there the ratio depends
 * on each round trip, not on CPU, so a stall in the hand-over — as Nagle's algorithm on the
 * handed-over connections was, ~40 ms a round — shows as a ratio far under 1 on any machine.
 */
import { cpus } from 'node:os';
import { loadText } from './machine.js';
import { type ServerProcess, startServer } from './http-server.js';
import { type Endpoint, type RunResult, type RunSettings, type Workload, checksPassed, runLoad, workloadFor } from './http-load.js';
import { findWrk, runWrk } from './wrk.js';
import { progress } from './subprocess.js';
import { reapedChildrenCpuUs, treeCpu, treeCpuAvailable } from './process-tree-cpu.js';
import { type SummaryRow, fmtRate, fmtRatio, max, median, min, textTable, yesNo } from './stats.js';

const CONNECTIONS = 100;
/** The common method's pipelining (the target's figure), then one request at a time per connection. */
const PIPELINING = [10, 1] as const;
const RUN_SECONDS = 5;
const WARMUP_SECONDS = 2;
const REPEATS = 5;
/** The round-trip check: few connections, short runs. */
const FEW_CONNECTIONS = 10;
const FEW_RUN_SECONDS = 3;
const FEW_REPEATS = 3;
/** Throughput with N workers should reach this share of N × one process. */
export const WORKERS_EFFICIENCY_TARGET = 0.7;

/** CPU µs per request of each run: the single process (with any children), the owner, its workers; the generator against each. */
interface RoleCpu {
  single: number[];
  owner: number[];
  workers: number[];
  generatorOne: number[];
  generatorMany: number[];
}

/** One pipelining setting's interleaved runs. */
interface Series {
  pipelining: number;
  one: RunResult[];
  many: RunResult[];
  ratios: number[];
  cpu: RoleCpu;
}

/** What the CPU per request of each role says: the ratio with a core per process, and within this machine's cores. */
function roleLines(x: Series, n: number, cores: number, target: number): string[] {
  const cpu = x.cpu;
  if (cpu.single.length === 0 || cpu.owner.length === 0) return [];
  const [single, owner, workers] = [median(cpu.single), median(cpu.owner), median(cpu.workers)];
  const predicted = Math.min((n * single) / workers, single / owner);
  const bound = (n * single) / workers <= single / owner ? 'the workers' : 'the owner';
  const lines = [
    `   Pipelining ${x.pipelining}, CPU per request (median): one process ${single.toFixed(1)} µs; with ${n} workers, the owner ${owner.toFixed(1)} µs and the workers ${workers.toFixed(1)} µs together.`,
    `   With a core for each process (predicted from those figures, not measured): ${fmtRatio(predicted)} the single process, bound by ${bound}; target ${fmtRatio(target)}.`,
  ];
  if (cpu.generatorOne.length > 0 && cpu.generatorMany.length > 0) {
    const [genOne, genMany] = [median(cpu.generatorOne), median(cpu.generatorMany)];
    // Each side runs at most as fast as its busiest process allows and as all of them fit in the cores.
    const rateOne = Math.min(1 / single, cores / (single + genOne));
    const rateMany = Math.min(n / workers, 1 / owner, cores / (workers + owner + genMany));
    lines.push(
      `   The generator (wrk) per request: ${genOne.toFixed(1)} µs against one process, ${genMany.toFixed(1)} µs against ${n} workers. Within this machine's ${cores} cores those figures allow at most ${fmtRatio(rateMany / rateOne)}; a measured ratio well under that is held back by something other than CPU.`,
    );
  }
  return lines;
}

function workerCount(): number {
  const n = Number(process.env.KEYSIM_BENCH_WORKERS ?? 2);
  if (!Number.isInteger(n) || n < 2 || n > 64)
    throw new Error(`KEYSIM_BENCH_WORKERS must be an integer from 2 to 64, got ${String(process.env.KEYSIM_BENCH_WORKERS)}`);
  return n;
}

export async function serveWorkersReport(): Promise<{ text: string; summary: SummaryRow[] }> {
  const n = workerCount();
  const wrk = findWrk();
  const generator = wrk === undefined ? 'autocannon (wrk is not installed)' : 'wrk';
  const load = (server: ServerProcess, endpoint: Endpoint, workload: Workload, settings: RunSettings): Promise<RunResult> =>
    wrk === undefined ? runLoad(server, endpoint, workload, settings) : runWrk(wrk, server, endpoint, workload, settings);
  const servers: ServerProcess[] = [];
  try {
    const one = await startServer('sim', [], ['--workers', '1']);
    servers.push(one);
    const many = await startServer('sim', [], ['--workers', String(n)]);
    servers.push(many);
    const warm: RunSettings = { connections: CONNECTIONS, pipelining: PIPELINING[0], durationSeconds: WARMUP_SECONDS };
    progress(`serve --workers: warm-up`);
    await load(one, 'verifyKey', workloadFor('verifyKey', one.ready), warm);
    await load(many, 'verifyKey', workloadFor('verifyKey', many.ready), warm);

    const perRole = treeCpuAvailable();
    const measured = async (which: 'one' | 'many', runSettings: RunSettings, cpu?: RoleCpu): Promise<RunResult> => {
      const server = which === 'one' ? one : many;
      const before = perRole && cpu !== undefined ? treeCpu(server.ready.pid) : undefined;
      const generatorBefore = reapedChildrenCpuUs();
      const result = await load(server, 'verifyKey', workloadFor('verifyKey', server.ready), runSettings);
      if (cpu !== undefined && before !== undefined && result.completed > 0) {
        const after = treeCpu(server.ready.pid);
        const own = (after.ownUs - before.ownUs) / result.completed;
        const children = (after.descendantsUs - before.descendantsUs) / result.completed;
        if (which === 'one') cpu.single.push(own + children);
        else {
          cpu.owner.push(own);
          cpu.workers.push(children);
        }
        // wrk runs as a child and has exited by now; autocannon runs in this process (not counted).
        const generatorAfter = reapedChildrenCpuUs();
        if (wrk !== undefined && generatorBefore !== undefined && generatorAfter !== undefined) {
          (which === 'one' ? cpu.generatorOne : cpu.generatorMany).push((generatorAfter - generatorBefore) / result.completed);
        }
      }
      return result;
    };
    const series: Series[] = [];
    for (const pipelining of PIPELINING) {
      const settings: RunSettings = { connections: CONNECTIONS, pipelining, durationSeconds: RUN_SECONDS };
      const s: Series = { pipelining, one: [], many: [], ratios: [], cpu: { single: [], owner: [], workers: [], generatorOne: [], generatorMany: [] } };
      for (let r = 0; r < REPEATS; r++) {
        // Alternate which goes first, so a noisy moment hits both sides alike.
        const order = r % 2 === 0 ? (['one', 'many'] as const) : (['many', 'one'] as const);
        const got: Partial<Record<'one' | 'many', RunResult>> = {};
        for (const which of order) got[which] = await measured(which, settings, s.cpu);
        const a = got.one as RunResult;
        const b = got.many as RunResult;
        s.one.push(a);
        s.many.push(b);
        s.ratios.push(b.rate / a.rate);
        progress(
          `serve --workers: pipelining ${pipelining}, repetition ${r + 1}/${REPEATS}: ${fmtRate(b.rate)} vs ${fmtRate(a.rate)} (${fmtRatio(b.rate / a.rate)})`,
        );
      }
      series.push(s);
    }
    // Few connections: round trips, not CPU, set the pace.
    const few: RunSettings = { connections: FEW_CONNECTIONS, pipelining: PIPELINING[0], durationSeconds: FEW_RUN_SECONDS };
    const fewRuns: { one: RunResult[]; many: RunResult[]; ratios: number[] } = { one: [], many: [], ratios: [] };
    for (let r = 0; r < FEW_REPEATS; r++) {
      const order = r % 2 === 0 ? (['one', 'many'] as const) : (['many', 'one'] as const);
      const got: Partial<Record<'one' | 'many', RunResult>> = {};
      for (const which of order) got[which] = await measured(which, few);
      fewRuns.one.push(got.one as RunResult);
      fewRuns.many.push(got.many as RunResult);
      fewRuns.ratios.push((got.many as RunResult).rate / (got.one as RunResult).rate);
      progress(`serve --workers: ${FEW_CONNECTIONS} connections, repetition ${r + 1}/${FEW_REPEATS}`);
    }
    const load1 = loadText();
    const allChecked = [...series.flatMap((x) => [...x.one, ...x.many]), ...fewRuns.one, ...fewRuns.many].every(checksPassed);
    const target = WORKERS_EFFICIENCY_TARGET * n;
    const rates = (rs: RunResult[]) => rs.map((x) => x.rate);
    const range = (rs: RunResult[]) => `${fmtRate(min(rates(rs)))} – ${fmtRate(max(rates(rs)))}`;
    const rows = series.flatMap((x) => [
      [String(x.pipelining), '--workers 1', fmtRate(median(rates(x.one))), range(x.one), '—', '—'],
      [
        String(x.pipelining),
        `--workers ${n}`,
        fmtRate(median(rates(x.many))),
        range(x.many),
        `${fmtRatio(min(x.ratios))} / ${fmtRatio(median(x.ratios))} / ${fmtRatio(max(x.ratios))}`,
        x.pipelining === PIPELINING[0] ? `≥ ${fmtRatio(target)}` : '—',
      ],
    ]);
    const cores = cpus().length;
    const roles = series.flatMap((x) => roleLines(x, n, cores, target));
    const main = series[0] as Series;
    const text = [
      `serve --workers: keys.verifyKey requests/s, ${CONNECTIONS} connections, pipelining ${PIPELINING.join(' then ')}, ${RUN_SECONDS} s runs, ${REPEATS} interleaved repetitions (generator: ${generator}, each simulator in its own process)`,
      '',
      textTable(['pipelining', 'simulator', 'median', 'range (min – max)', `ratio to --workers 1 (min / median / max)`, 'target'], rows),
      '',
      `   meets target (median ratio at pipelining ${main.pipelining} ≥ 0.7 × ${n}): ${yesNo(median(main.ratios) >= target)}; every answer VALID and 2xx: ${yesNo(allChecked)}.`,
      `   ${cores} cores here for ${n} workers + 1 owner + the generator${cores < n + 2 ? ': fewer than they need, so the ratio shows shared cores, not the scaling more cores would give' : ''}.`,
      ...roles,
      `   ${FEW_CONNECTIONS} connections, pipelining ${PIPELINING[0]}, ${FEW_RUN_SECONDS} s runs, ${FEW_REPEATS} repetitions (round trips set the pace): --workers 1 ${fmtRate(median(rates(fewRuns.one)))}, --workers ${n} ${fmtRate(median(rates(fewRuns.many)))}, ratio ${fmtRatio(min(fewRuns.ratios))} / ${fmtRatio(median(fewRuns.ratios))} / ${fmtRatio(max(fewRuns.ratios))} (a ratio far under 1 here is a stall in the hand-over, not CPU).`,
      `   Load average at the end: ${load1}.`,
    ].join('\n');
    return {
      text,
      summary: [
        ...series.map((x) => ({
          figure: `serve --workers ${n} / --workers 1, keys.verifyKey, pipelining ${x.pipelining} (median ratio)`,
          median: fmtRatio(median(x.ratios)),
          target: x.pipelining === PIPELINING[0] ? `≥ ${fmtRatio(target)}` : '—',
        })),
        {
          figure: `serve --workers ${n} / --workers 1, keys.verifyKey, ${FEW_CONNECTIONS} connections (median ratio)`,
          median: fmtRatio(median(fewRuns.ratios)),
          target: '—',
        },
        ...series
          .filter((x) => x.cpu.owner.length > 0)
          .map((x) => ({
            figure: `serve --workers ${n}, pipelining ${x.pipelining}: CPU per request, one process / owner / workers together`,
            median: `${median(x.cpu.single).toFixed(1)} / ${median(x.cpu.owner).toFixed(1)} / ${median(x.cpu.workers).toFixed(1)} µs`,
            target: '—',
          })),
      ],
    };
  } finally {
    for (const server of servers) await server.stop();
  }
}
