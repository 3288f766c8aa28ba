/**
 * Figure 5: the load runner against autocannon, and its memory after 10 million recorded requests.
 *
 * The bare node:http server (bare-server.ts) runs alone in its own process; this process is the
 * generator. With the same connections, pipelining and request bytes (runner-generators.ts), two
 * comparisons, each repeated with the generators alternating and compared run by run (a ratio per
 * repetition, then min / median / max of the ratios, so a slow moment of the shared machine hits
 * both sides of a ratio):
 * - ceiling: autocannon alone at its maximum rate, and keysim's OpenModelExecutor asked for twice
 *   the best autocannon rate so far — an open model sends on schedule whatever happens, so asking
 *   for more than it can do and counting what it completes per second gives its ceiling;
 * - CPU per request at fixed moderate rates: both at each of FIXED_RATES requests per second
 *   (autocannon's `overallRate`), where neither is near its limit, so CPU time per request is what
 *   the generator takes from a machine it shares with the target; and keysim once more at the
 *   first rate with autocannon's arrivals (each second's requests due at its start:
 *   runner-generators.ts), which compares like with like — at 1,000/s the even schedule wakes the
 *   generator once or twice per request, autocannon's bursts a few times per hundred; at 5,000/s
 *   one wake-up of the even schedule serves several requests (docs/benchmarks.md#load-runner).
 *
 * Memory: see runner-memory.ts (a fresh process feeds one Recorder 10 million samples).
 */
import { loadText } from './machine.js';
import { type ServerProcess, startServer } from './http-server.js';
import { type RunnerModules, loadRunnerModules } from './runner-modules.js';
import { CONNECTIONS, type GeneratorRun, type Tool, runAutocannon, runKeysim } from './runner-generators.js';
import { CHECKPOINTS, RECORDED_TOTAL, memoryLines, runRecorderMemoryChild } from './runner-memory.js';
import { progress } from './subprocess.js';
import { type SummaryRow, fmtInt, fmtPercent, fmtRate, fmtRatio, max, median, min, secondsSince, textTable, yesNo } from './stats.js';

export const CEILING_TARGET = 0.9;
export const CPU_TARGET = 1.5;
const PIPELINING = [10, 1] as const;
const RUN_SECONDS = 4;
/** Once per generator and pipelining before the measured runs (JIT, connections). */
const WARMUP_SECONDS = 2;
const REPEATS = 5;
/** The open model is asked for this multiple of the best autocannon rate so far (warm-up included). */
const RATE_FACTOR = 2;
/**
 * The fixed moderate rates of the CPU comparison, requests per second: 1,000/s, where a request
 * is 1 ms from the next and the even schedule sleeps and wakes once per request, and 5,000/s.
 */
export const FIXED_RATES = [1_000, 5_000] as const;
/** The rate of the like-with-like row (autocannon's burst arrivals). */
const BURST_RATE = FIXED_RATES[0];
const TOOLS: readonly Tool[] = ['autocannon', 'keysim'];
const TOOL_LABEL: Record<Tool, string> = { autocannon: 'autocannon', keysim: 'keysim open model' };

interface PipeliningResults {
  pipelining: number;
  ceiling: Record<Tool, GeneratorRun[]>;
  /** Per rate of FIXED_RATES. */
  fixed: Map<number, Record<Tool, GeneratorRun[]>>;
  /** keysim at BURST_RATE with autocannon's burst arrivals, run in the same repetitions. */
  fixedBurst: GeneratorRun[];
}

async function measurePipelining(mods: RunnerModules, server: ServerProcess, pipelining: number): Promise<PipeliningResults> {
  progress(`runner, pipelining ${pipelining}: warm-up`);
  // Asked for twice the best autocannon rate seen so far (a single noisy warm-up could ask too little to saturate).
  let bestAutocannon = (await runAutocannon(server, pipelining, WARMUP_SECONDS)).rate;
  const asked = () => Math.ceil((RATE_FACTOR * bestAutocannon) / 1000) * 1000;
  await runKeysim(mods, server, pipelining, asked(), WARMUP_SECONDS);
  const ceiling: Record<Tool, GeneratorRun[]> = { autocannon: [], keysim: [] };
  const fixed = new Map<number, Record<Tool, GeneratorRun[]>>(FIXED_RATES.map((rate) => [rate, { autocannon: [], keysim: [] }]));
  const fixedBurst: GeneratorRun[] = [];
  const ceilingRun = async (tool: Tool): Promise<GeneratorRun> => {
    if (tool === 'keysim') return runKeysim(mods, server, pipelining, asked(), RUN_SECONDS);
    const run = await runAutocannon(server, pipelining, RUN_SECONDS);
    bestAutocannon = Math.max(bestAutocannon, run.rate);
    return run;
  };
  const fixedRun = (tool: Tool, rate: number): Promise<GeneratorRun> =>
    tool === 'keysim' ? runKeysim(mods, server, pipelining, rate, RUN_SECONDS) : runAutocannon(server, pipelining, RUN_SECONDS, rate);
  for (let rep = 0; rep < REPEATS; rep++) {
    // Each generator goes first as often as the other.
    const order = rep % 2 === 0 ? TOOLS : [...TOOLS].reverse();
    for (const tool of order) ceiling[tool].push(await ceilingRun(tool));
    for (const rate of FIXED_RATES) {
      const runs = fixed.get(rate) as Record<Tool, GeneratorRun[]>;
      for (const tool of order) runs[tool].push(await fixedRun(tool, rate));
    }
    fixedBurst.push(await runKeysim(mods, server, pipelining, BURST_RATE, RUN_SECONDS, 'burst'));
    const c = (t: Tool) => ceiling[t][rep] as GeneratorRun;
    const cpu = (rate: number, t: Tool) => fmtUs(((fixed.get(rate) as Record<Tool, GeneratorRun[]>)[t][rep] as GeneratorRun).generatorCpuUsPerRequest);
    progress(
      `runner, pipelining ${pipelining}, run ${rep + 1}/${REPEATS}: ceiling keysim ${fmtRate(c('keysim').rate)} vs autocannon ${fmtRate(c('autocannon').rate)} (${fmtRatio(c('keysim').rate / c('autocannon').rate)}); ` +
        `CPU/request keysim vs autocannon ${FIXED_RATES.map((rate) => `at ${fmtRate(rate)} ${cpu(rate, 'keysim')} vs ${cpu(rate, 'autocannon')}`).join(', ')} ` +
        `(at ${fmtRate(BURST_RATE)} with burst arrivals ${fmtUs((fixedBurst[rep] as GeneratorRun).generatorCpuUsPerRequest)})`,
    );
  }
  return { pipelining, ceiling, fixed, fixedBurst };
}

function fmtAsked(rates: readonly number[]): string {
  const lo = min(rates);
  const hi = max(rates);
  return lo === hi ? fmtRate(lo) : `${fmtInt(lo)}–${fmtRate(hi)}`;
}

function fmtUs(us: number): string {
  return Number.isNaN(us) ? '—' : `${us.toFixed(1)} µs`;
}

function share(part: number, whole: number): string {
  return whole > 0 ? `${((part / whole) * 100).toFixed(1)} %` : '—';
}

/** min / median / max of per-repetition ratios. */
function spread(ratios: readonly number[]): string {
  return `${fmtRatio(min(ratios))} / ${fmtRatio(median(ratios))} / ${fmtRatio(max(ratios))}`;
}

/** Ratios of paired runs (same repetition). */
function paired(a: readonly GeneratorRun[], b: readonly GeneratorRun[], pick: (run: GeneratorRun) => number): number[] {
  return a.map((run, i) => pick(run) / pick(b[i] as GeneratorRun));
}

function runRow(pipelining: number, comparison: string, tool: Tool, list: readonly GeneratorRun[], rate?: number): string[] {
  const planned = list.reduce((a, x) => a + (x.planned ?? 0), 0);
  return [
    String(pipelining),
    comparison,
    tool === 'keysim' && list[0]?.arrival === 'burst' ? `${TOOL_LABEL[tool]}, burst arrivals` : TOOL_LABEL[tool],
    tool === 'keysim' ? fmtAsked(list.map((x) => x.asked ?? 0)) : rate === undefined ? 'max' : fmtRate(rate),
    fmtRate(median(list.map((x) => x.rate))),
    `${fmtRate(min(list.map((x) => x.rate)))} – ${fmtRate(max(list.map((x) => x.rate)))}`,
    fmtPercent(median(list.map((x) => x.generatorCpuShare))),
    fmtUs(median(list.map((x) => x.generatorCpuUsPerRequest))),
    fmtPercent(median(list.map((x) => x.serverCpuShare))),
    tool === 'keysim'
      ? share(
          list.reduce((a, x) => a + (x.late ?? 0), 0),
          planned,
        )
      : '—',
    tool === 'keysim'
      ? share(
          list.reduce((a, x) => a + (x.dropped ?? 0), 0),
          planned,
        )
      : '—',
    fmtInt(list.reduce((a, x) => a + x.completed, 0)),
    yesNo(list.every((x) => x.answersRight)),
  ];
}

function fmtLoad(): string {
  return loadText(' / ');
}

export async function runnerReport(): Promise<{ text: string; summary: SummaryRow[] }> {
  const started = process.hrtime.bigint();
  const loadBefore = fmtLoad();
  const mods = await loadRunnerModules();
  const results: PipeliningResults[] = [];
  const server = await startServer('bare');
  try {
    for (const pipelining of PIPELINING) results.push(await measurePipelining(mods, server, pipelining));
  } finally {
    await server.stop();
  }
  const loadAfter = fmtLoad();
  const comparisonSeconds = secondsSince(started);
  progress(`runner memory: ${fmtInt(RECORDED_TOTAL)} samples in a fresh process`);
  const memory = await runRecorderMemoryChild();

  const runRows: string[][] = [];
  const ceilingRows: string[][] = [];
  const cpuRows: string[][] = [];
  const summary: SummaryRow[] = [];
  const failures: string[] = [];
  for (const r of results) {
    for (const tool of TOOLS) {
      runRows.push(runRow(r.pipelining, 'ceiling', tool, r.ceiling[tool]));
      for (const x of r.ceiling[tool]) if (!x.answersRight) failures.push(`pipelining ${r.pipelining} ceiling ${tool}: ${x.problems}`);
    }
    for (const [rate, runs] of r.fixed) {
      for (const tool of TOOLS) {
        runRows.push(runRow(r.pipelining, `at ${fmtRate(rate)}`, tool, runs[tool], rate));
        for (const x of runs[tool]) if (!x.answersRight) failures.push(`pipelining ${r.pipelining} at ${fmtRate(rate)} ${tool}: ${x.problems}`);
      }
      if (rate === BURST_RATE) {
        runRows.push(runRow(r.pipelining, `at ${fmtRate(rate)}`, 'keysim', r.fixedBurst, rate));
        for (const x of r.fixedBurst) if (!x.answersRight) failures.push(`pipelining ${r.pipelining} at ${fmtRate(rate)} keysim burst arrivals: ${x.problems}`);
      }
    }
    const ceilingRatios = paired(r.ceiling.keysim, r.ceiling.autocannon, (x) => x.rate);
    ceilingRows.push([String(r.pipelining), spread(ceilingRatios), yesNo(median(ceilingRatios) >= CEILING_TARGET)]);
    const medianRate = (tool: Tool) => fmtRate(median(r.ceiling[tool].map((x) => x.rate)));
    summary.push({
      figure: `Runner ceiling: keysim open model / autocannon (bare node:http, ${CONNECTIONS} connections, pipelining ${r.pipelining}; min / median / max of ${REPEATS} paired runs)`,
      median: `${spread(ceilingRatios)} (medians ${medianRate('keysim')} vs ${medianRate('autocannon')})`,
      target: `≥ ${fmtRatio(CEILING_TARGET)}`,
    });
    const burstUs = median(r.fixedBurst.map((x) => x.generatorCpuUsPerRequest));
    for (const [rate, runs] of r.fixed) {
      const cpuRatios = paired(runs.keysim, runs.autocannon, (x) => x.generatorCpuUsPerRequest);
      const cpuUs = (tool: Tool) => median(runs[tool].map((x) => x.generatorCpuUsPerRequest));
      const burstRatios = rate === BURST_RATE ? paired(r.fixedBurst, runs.autocannon, (x) => x.generatorCpuUsPerRequest) : undefined;
      cpuRows.push([
        String(r.pipelining),
        fmtRate(rate),
        `${fmtUs(cpuUs('keysim'))} vs ${fmtUs(cpuUs('autocannon'))}`,
        spread(cpuRatios),
        yesNo(median(cpuRatios) <= CPU_TARGET),
        burstRatios === undefined ? '—' : `${spread(burstRatios)} (${fmtUs(burstUs)})`,
      ]);
      summary.push({
        figure: `Runner CPU per request at ${fmtRate(rate)}: keysim open model / autocannon (${CONNECTIONS} connections, pipelining ${r.pipelining}; min / median / max)`,
        median: `${spread(cpuRatios)} (${fmtUs(cpuUs('keysim'))} vs ${fmtUs(cpuUs('autocannon'))})`,
        target: `≤ ${fmtRatio(CPU_TARGET)}`,
      });
      if (burstRatios !== undefined) {
        summary.push({
          figure: `Runner CPU per request at ${fmtRate(rate)}, like with like: keysim with autocannon's burst arrivals / autocannon (pipelining ${r.pipelining}; min / median / max)`,
          median: `${spread(burstRatios)} (${fmtUs(burstUs)} vs ${fmtUs(cpuUs('autocannon'))})`,
          target: '— (the target is for the even schedule)',
        });
      }
    }
  }
  const lateDropped = results.map((r) => {
    const k = r.ceiling.keysim;
    const sum = (f: (x: GeneratorRun) => number) => fmtInt(median(k.map(f)));
    return `   pipelining ${r.pipelining}, ceiling: per keysim run (median) planned ${sum((x) => x.planned ?? 0)}, sent ${sum((x) => x.sent ?? 0)}, late ${sum((x) => x.late ?? 0)}, dropped ${sum((x) => x.dropped ?? 0)}, completed ${sum((x) => x.completed)} in ${median(k.map((x) => x.seconds)).toFixed(2)} s.`;
  });
  const memoryPart = memoryLines(memory);
  const text = [
    `5. Load runner vs autocannon: the generators in this process, the bare node:http server alone in its own process on 127.0.0.1;`,
    `   ${CONNECTIONS} connections, pipelining ${PIPELINING.join(' and ')}, ${RUN_SECONDS} s per run after a ${WARMUP_SECONDS} s warm-up of each, ${REPEATS} repetitions alternating`,
    `   which generator goes first; load average (1 / 5 / 15 min) ${loadBefore} before, ${loadAfter} after.`,
    `   keysim = OpenModelExecutor from ${mods.source}/ with a real Recorder, one keys.verifyKey request without check (its answer`,
    '   parsed for the verification-code breakdown, as in a real run); autocannon without body verification (its plain cost).',
    `   ceiling: autocannon at its maximum; keysim asked for ${RATE_FACTOR}× the best autocannon rate so far, its rate = what it completed`,
    `   per second of the planned ${RUN_SECONDS} s, after which it is stopped as Ctrl-C stops a run (no generator is timed on its wind-down).`,
    `   at ${FIXED_RATES.map(fmtRate).join(' and ')}: both generators at that rate (autocannon's overallRate); CPU/request = the generator's CPU time per completed request.`,
    `   keysim's even schedule sends request i at i / rate; "burst arrivals" puts each second's requests at its start, as autocannon's`,
    '   overallRate does (a per-connection count per second sent back to back), so that row compares the same arrivals.',
    '',
    textTable(
      [
        'pipelining',
        'comparison',
        'generator',
        'asked',
        'completed',
        'range (min – max)',
        'generator CPU',
        'CPU/request',
        'server CPU',
        'late',
        'dropped',
        'requests',
        'answers right',
      ],
      runRows,
    ),
    '',
    textTable(['pipelining', 'ceiling keysim / autocannon (min / median / max)', `median ≥ ${fmtRatio(CEILING_TARGET)}`], ceilingRows),
    '',
    textTable(
      [
        'pipelining',
        'rate',
        'CPU/request keysim vs autocannon (medians)',
        'CPU keysim / autocannon (min / median / max)',
        `median ≤ ${fmtRatio(CPU_TARGET)}`,
        'the same, keysim with burst arrivals (its median)',
      ],
      cpuRows,
    ),
    '',
    ...lateDropped,
    "   Ratios are taken run by run (keysim's run and autocannon's of the same repetition, back to back), then summarised.",
    "   late = share of the planned sends enqueued more than 10 ms after their intended time (the generator's event loop lagged);",
    '   dropped = not sent, because the queue already held 100,000 or was still waiting at the stop (by design in the ceiling: the',
    '   open model is asked for more than it can do). generator CPU / server CPU = CPU time / wall time of that process during the',
    '   run (100 % = one core busy). answers right = every answer 200, no transport errors or timeouts.',
    `   Comparison part: ${comparisonSeconds.toFixed(0)} s.`,
    '',
    ...memoryPart.text,
    `   Section time: ${secondsSince(started).toFixed(0)} s.`,
  ].join('\n');
  summary.push(...memoryPart.summary);
  if (CHECKPOINTS.at(-1) !== RECORDED_TOTAL || memory.requests !== RECORDED_TOTAL)
    failures.push(`the recorder counted ${memory.requests} requests, expected ${RECORDED_TOTAL}`);
  if (failures.length > 0) throw new Error(`wrong answers during the runner benchmark:\n${failures.join('\n')}\n\n${text}`);
  return { text, summary };
}
