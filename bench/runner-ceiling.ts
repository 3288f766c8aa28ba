/**
 * Figure 5: the load runner's own ceiling, and its memory after 10 million recorded requests.
 *
 * Ceiling: the bare node:http server (bare-server.ts) runs alone in its own process; this process
 * is the generator. In the same run, with the same connections and the same request bytes, it
 * measures autocannon alone at its maximum rate and keysim's OpenModelExecutor asked for twice
 * what autocannon managed — an open model sends on schedule whatever happens, so asking for more
 * than it can do and counting what it completes per second gives its ceiling (the sends it could
 * not make on time are counted late or dropped). For context, the executor's HTTP client alone
 * (undici Clients in a closed loop, no queue, no recorder) is measured too: keysim / undici is
 * what the executor and recorder cost, undici / autocannon what the choice of client costs.
 * Runs rotate, medians of three.
 *
 * Memory: see runner-memory.ts (a fresh process feeds one Recorder 10 million samples).
 */
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';
import { Client } from 'undici';
import { type ServerProcess, startServer } from './http-server.js';
import type { PlannedRequest } from '../src/load/open-model.js';
import { type RunnerModules, loadRunnerModules } from './runner-modules.js';
import { CHECKPOINTS, RECORDED_TOTAL, type RecorderMemoryResult, runRecorderMemoryChild } from './runner-memory.js';
import { progress } from './subprocess.js';
import { type SummaryRow, fmtInt, fmtMB, fmtNs, fmtPercent, fmtRate, fmtRatio, max, median, min, secondsSince, textTable, yesNo } from './stats.js';

export const CEILING_TARGET = 0.8;
export const CONNECTIONS = 50;
const PIPELINING = [1, 10] as const;
const RUN_SECONDS = 5;
/** Once per tool and pipelining before the measured runs (JIT, connections). */
const WARMUP_SECONDS = 2;
const REPEATS = 3;
/** The open model is asked for this multiple of the best autocannon rate so far (warm-up included). */
const RATE_FACTOR = 2;
const TIMEOUT_MS = 10_000;
const LATE_THRESHOLD_MS = 10;

/** The same request from every generator (the bare server reads and parses the body, ignores the rest). */
const OPERATION = 'keys.verifyKey';
export const PATH = `/v2/${OPERATION}`;
export const ROOT_KEY = 'unkey_benchroot';
export const BODY = { key: 'sk_bench_3ZfVkqXbTnR8wLm2' };
export const HEADERS = { 'content-type': 'application/json', authorization: `Bearer ${ROOT_KEY}` };
export const REQUEST: PlannedRequest = { operation: OPERATION, label: OPERATION, spec: { op: OPERATION, body: BODY }, check: undefined };

type Tool = 'autocannon' | 'keysim' | 'undici';
const TOOLS: readonly Tool[] = ['autocannon', 'keysim', 'undici'];
const TOOL_LABEL: Record<Tool, string> = { autocannon: 'autocannon alone', keysim: 'keysim open model', undici: 'undici Client alone' };

interface CeilingRun {
  tool: Tool;
  /** Completed requests per second over the run's wall time. */
  rate: number;
  completed: number;
  seconds: number;
  /** Every answer 200, no transport errors / timeouts. */
  answersRight: boolean;
  problems: string;
  generatorCpuShare: number;
  /** Generator CPU time per completed request, µs. */
  generatorCpuUsPerRequest: number;
  serverCpuShare: number;
  /** keysim only: what the plan asked for and what became of it. */
  asked?: number;
  planned?: number;
  sent?: number;
  late?: number;
  dropped?: number;
}

/**
 * Runs `run` and reads this process's and the server's CPU time around it; `run` may call `end()`
 * to close the measured window early (keysim: at the end of its planned duration, before the wind-down).
 */
async function measured<T extends { completed: number }>(
  server: ServerProcess,
  run: (end: () => void) => Promise<T>,
): Promise<T & { seconds: number; generatorCpuShare: number; generatorCpuUsPerRequest: number; serverCpuShare: number }> {
  const serverStart = await server.cpu();
  const cpuStart = process.cpuUsage();
  const start = process.hrtime.bigint();
  let mark: { seconds: number; cpu: NodeJS.CpuUsage; server: Promise<{ userUs: number; systemUs: number }> } | undefined;
  const end = () => {
    mark ??= { seconds: secondsSince(start), cpu: process.cpuUsage(cpuStart), server: server.cpu() };
  };
  const result = await run(end);
  end();
  const { seconds, cpu } = mark as NonNullable<typeof mark>;
  const serverEnd = await (mark as NonNullable<typeof mark>).server;
  const generatorUs = cpu.user + cpu.system;
  const serverUs = serverEnd.userUs + serverEnd.systemUs - serverStart.userUs - serverStart.systemUs;
  return {
    ...result,
    seconds,
    generatorCpuShare: generatorUs / 1e6 / seconds,
    generatorCpuUsPerRequest: result.completed > 0 ? generatorUs / result.completed : Number.NaN,
    serverCpuShare: serverUs / 1e6 / seconds,
  };
}

/** autocannon alone, as fast as it goes (no body verification: its plain maximum). */
async function runAutocannon(server: ServerProcess, pipelining: number, durationSeconds: number): Promise<CeilingRun> {
  const r = await measured(server, async () => {
    const result = await new Promise<autocannon.Result>((resolve, reject) => {
      autocannon(
        { url: `${server.ready.url}${PATH}`, method: 'POST', connections: CONNECTIONS, pipelining, duration: durationSeconds, headers: HEADERS, body: JSON.stringify(BODY) },
        (error, res) => (error === null || error === undefined ? resolve(res) : reject(error instanceof Error ? error : new Error(String(error)))),
      );
    });
    return { result, completed: result.requests.total };
  });
  const { result } = r;
  const answersRight = r.completed > 0 && result['2xx'] === r.completed && result.non2xx === 0 && result.errors === 0 && result.timeouts === 0;
  return {
    tool: 'autocannon',
    // Over autocannon's own duration, as the HTTP benchmark does (the wall time adds its start-up and the CPU readings).
    rate: r.completed / result.duration,
    completed: r.completed,
    seconds: r.seconds,
    answersRight,
    problems: `2xx ${result['2xx']}, non-2xx ${result.non2xx}, errors ${result.errors}, timeouts ${result.timeouts}`,
    generatorCpuShare: r.generatorCpuShare,
    generatorCpuUsPerRequest: r.generatorCpuUsPerRequest,
    serverCpuShare: r.serverCpuShare,
  };
}

/**
 * keysim's open model asked for `rate` for `durationSeconds`, with a real Recorder. At the end of
 * the planned duration the run is stopped as a SIGINT stops it (the recorder frozen, the backlog
 * dropped), so its rate is what it completed per second of the planned duration, like autocannon's.
 */
async function runKeysim(mods: RunnerModules, server: ServerProcess, pipelining: number, rate: number, durationSeconds: number): Promise<CeilingRun> {
  const [phase] = mods.planPhases([{ name: 'ceiling', durationMs: durationSeconds * 1000, rate, warmup: false }]);
  if (phase === undefined) throw new Error('no phase planned');
  const executor = new mods.OpenModelExecutor({ url: server.ready.url, rootKey: ROOT_KEY, connections: CONNECTIONS, pipelining, timeoutMs: TIMEOUT_MS, lateThresholdMs: LATE_THRESHOLD_MS });
  const recorder = new mods.Recorder();
  try {
    const r = await measured(server, async (end) => {
      const startMs = performance.now();
      recorder.startMeasuring(startMs);
      const phaseDone = executor.runPhase(phase, startMs, () => REQUEST, recorder);
      let wallMs = 0;
      let completed = 0;
      await new Promise<void>((resolve) => {
        setTimeout(() => {
          end();
          wallMs = performance.now() - startMs;
          completed = recorder.requests;
          recorder.freeze();
          executor.stop();
          resolve();
        }, phase.durationMs);
      });
      const outcome = await phaseDone;
      return { outcome, wallMs, completed };
    });
    const figures = recorder.finish(r.wallMs);
    const ok200 = figures.overall.statuses['200'] ?? 0;
    const transport = Object.values(figures.overall.transportErrors).reduce((a, b) => a + b, 0);
    return {
      tool: 'keysim',
      rate: r.completed / (r.wallMs / 1000),
      completed: r.completed,
      seconds: r.seconds,
      answersRight: r.completed > 0 && ok200 === r.completed && transport === 0,
      problems: `200 ${ok200}, statuses ${JSON.stringify(figures.overall.statuses)}, transport errors ${JSON.stringify(figures.overall.transportErrors)}`,
      generatorCpuShare: r.generatorCpuShare,
      generatorCpuUsPerRequest: r.generatorCpuUsPerRequest,
      serverCpuShare: r.serverCpuShare,
      asked: rate,
      planned: phase.count,
      sent: r.outcome.sent,
      late: r.outcome.late,
      dropped: r.outcome.dropped,
    };
  } finally {
    await executor.close();
  }
}

/**
 * The executor's HTTP client without the executor: the same undici Clients (one per connection,
 * same pipelining), each kept full by a closed loop that sends the next request when an answer
 * has been read and parsed. No queue, no plan, no recorder.
 */
async function runUndici(server: ServerProcess, pipelining: number, durationSeconds: number): Promise<CeilingRun> {
  const clients = Array.from({ length: CONNECTIONS }, () => new Client(server.ready.url, { pipelining, headersTimeout: TIMEOUT_MS, bodyTimeout: TIMEOUT_MS }));
  const body = JSON.stringify(BODY);
  let stopped = false;
  let ok = 0;
  let other = 0;
  let errors = 0;
  const loop = async (client: Client) => {
    while (!stopped) {
      try {
        const res = await client.request({ path: PATH, method: 'POST', headers: HEADERS, body });
        JSON.parse(await res.body.text());
        if (stopped) return;
        if (res.statusCode === 200) ok++;
        else other++;
      } catch {
        if (!stopped) errors++;
      }
    }
  };
  try {
    const r = await measured(server, async (end) => {
      const start = performance.now();
      const loops = clients.flatMap((client) => Array.from({ length: pipelining }, () => loop(client)));
      let completed = 0;
      let wallMs = 0;
      await new Promise<void>((resolve) => {
        setTimeout(() => {
          end();
          wallMs = performance.now() - start;
          completed = ok + other;
          stopped = true;
          resolve();
        }, durationSeconds * 1000);
      });
      await Promise.all(loops);
      return { completed, wallMs, ok, other, errors };
    });
    return {
      tool: 'undici',
      rate: r.completed / (r.wallMs / 1000),
      completed: r.completed,
      seconds: r.seconds,
      answersRight: r.completed > 0 && r.other === 0 && r.errors === 0,
      problems: `200 ${r.ok}, other statuses ${r.other}, errors ${r.errors}`,
      generatorCpuShare: r.generatorCpuShare,
      generatorCpuUsPerRequest: r.generatorCpuUsPerRequest,
      serverCpuShare: r.serverCpuShare,
    };
  } finally {
    stopped = true;
    await Promise.all(clients.map((client) => client.destroy().catch(() => undefined)));
  }
}

interface PipeliningResults {
  pipelining: number;
  runs: Record<Tool, CeilingRun[]>;
}

async function measurePipelining(mods: RunnerModules, server: ServerProcess, pipelining: number): Promise<PipeliningResults> {
  progress(`runner ceiling, pipelining ${pipelining}: warm-up`);
  // Asked for twice the best autocannon rate seen so far (a single noisy warm-up could ask too little to saturate).
  let bestAutocannon = (await runAutocannon(server, pipelining, WARMUP_SECONDS)).rate;
  const asked = () => Math.ceil((RATE_FACTOR * bestAutocannon) / 1000) * 1000;
  await runKeysim(mods, server, pipelining, asked(), WARMUP_SECONDS);
  await runUndici(server, pipelining, WARMUP_SECONDS);
  const runs: Record<Tool, CeilingRun[]> = { autocannon: [], keysim: [], undici: [] };
  const runOne = (tool: Tool): Promise<CeilingRun> => {
    if (tool === 'autocannon') {
      return runAutocannon(server, pipelining, RUN_SECONDS).then((run) => {
        bestAutocannon = Math.max(bestAutocannon, run.rate);
        return run;
      });
    }
    if (tool === 'keysim') return runKeysim(mods, server, pipelining, asked(), RUN_SECONDS);
    return runUndici(server, pipelining, RUN_SECONDS);
  };
  for (let rep = 0; rep < REPEATS; rep++) {
    // Each generator goes first, second and third once.
    const order = TOOLS.map((_, i) => TOOLS[(i + rep) % TOOLS.length] as Tool);
    for (const tool of order) runs[tool].push(await runOne(tool));
    progress(
      `runner ceiling, pipelining ${pipelining}: run ${rep + 1}/${REPEATS}: ${TOOLS.map((t) => `${t} ${fmtRate(runs[t][rep]?.rate ?? 0)}`).join(', ')} (keysim asked ${fmtRate(runs.keysim[rep]?.asked ?? 0)})`,
    );
  }
  return { pipelining, runs };
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

function memoryLines(m: RecorderMemoryResult): { text: string[]; summary: SummaryRow[] } {
  const at = (n: number) => m.readings.find((r) => r.samples === n);
  const base = at(0);
  const rows = m.readings.map((r) => [
    fmtInt(r.samples),
    fmtMB(r.heapUsed),
    fmtMB(r.arrayBuffers),
    fmtMB(r.heapUsed + r.arrayBuffers),
    base === undefined ? '—' : `${r.heapUsed + r.arrayBuffers - base.heapUsed - base.arrayBuffers >= 0 ? '+' : ''}${fmtMB(r.heapUsed + r.arrayBuffers - base.heapUsed - base.arrayBuffers)}`,
    fmtMB(r.rss),
  ]);
  const one = at(1_000_000);
  const ten = at(RECORDED_TOTAL);
  const text: string[] = [
    `6. Load runner memory: one Recorder fed ${fmtInt(RECORDED_TOTAL)} synthetic samples through record() (fresh process, --expose-gc, Recorder from ${m.source}/;`,
    '   no network; 3 operations, 10 kinds of answer incl. verification codes, 404/500 and timeouts; log-normal latencies, seeded),',
    '   memory after three full collections:',
    '',
    textTable(['samples recorded', 'heapUsed', 'arrayBuffers', 'heap + arrayBuffers', 'vs 0 samples', 'RSS'], rows),
    '',
  ];
  const summary: SummaryRow[] = [];
  if (one !== undefined && ten !== undefined) {
    const oneTotal = one.heapUsed + one.arrayBuffers;
    const tenTotal = ten.heapUsed + ten.arrayBuffers;
    const delta = tenTotal - oneTotal;
    text.push(
      `   At 10M vs 1M samples: heap + arrayBuffers ${fmtMB(tenTotal)} vs ${fmtMB(oneTotal)} (${delta >= 0 ? '+' : ''}${fmtMB(delta)}, ${fmtRatio(tenTotal / oneTotal)}); RSS ${fmtMB(ten.rss)} vs ${fmtMB(one.rss)}.`,
    );
    summary.push({
      figure: `Runner memory after ${fmtInt(RECORDED_TOTAL)} recorded requests vs after 1,000,000 (heap + typed arrays, after GC)`,
      median: `${fmtMB(tenTotal)} vs ${fmtMB(oneTotal)} (${delta >= 0 ? '+' : ''}${fmtMB(delta)}); RSS ${fmtMB(ten.rss)} vs ${fmtMB(one.rss)}`,
      target: 'flat',
    });
  }
  text.push(
    `   record(): ${fmtNs(m.nsPerRecord)} per call (${fmtInt(1e9 / m.nsPerRecord)} calls/s on one core; loop and sample object included); finish(): ${m.finishMs.toFixed(0)} ms`,
    `   (${fmtInt(m.requests)} requests in ${m.operations} operations, ${fmtInt(m.timelinePoints)} timeline seconds, p50 / p99 ${m.p50Ms} / ${m.p99Ms} ms).`,
    '   0 samples = after the recorder and the sample tables (~4.5 MB of typed arrays) exist; heap + arrayBuffers is what the',
    '   recorder can grow (its HDR histograms are typed arrays, outside heapUsed). The only state that grows with the run is one',
    `   timeline point per second of run time (here ${fmtInt(RECORDED_TOTAL)} samples span ${fmtInt(m.timelinePoints)} seconds at 40,000/s); RSS moves by a few MB with the allocator.`,
  );
  summary.push({ figure: 'Runner Recorder.record() time per call (one core)', median: fmtNs(m.nsPerRecord), target: '—' });
  summary.push({ figure: `Runner Recorder.finish() after ${fmtInt(RECORDED_TOTAL)} requests`, median: `${m.finishMs.toFixed(0)} ms`, target: '—' });
  return { text, summary };
}

export async function runnerReport(): Promise<{ text: string; summary: SummaryRow[] }> {
  const started = process.hrtime.bigint();
  const mods = await loadRunnerModules();
  const results: PipeliningResults[] = [];
  const server = await startServer('bare');
  try {
    for (const pipelining of PIPELINING) results.push(await measurePipelining(mods, server, pipelining));
  } finally {
    await server.stop();
  }
  const ceilingSeconds = secondsSince(started);
  progress(`runner memory: ${fmtInt(RECORDED_TOTAL)} samples in a fresh process`);
  const memory = await runRecorderMemoryChild();

  const runRows: string[][] = [];
  const ratioRows: string[][] = [];
  const summary: SummaryRow[] = [];
  const failures: string[] = [];
  const target = `≥ ${fmtRatio(CEILING_TARGET)}`;
  for (const r of results) {
    const med = { autocannon: median(r.runs.autocannon.map((x) => x.rate)), keysim: median(r.runs.keysim.map((x) => x.rate)), undici: median(r.runs.undici.map((x) => x.rate)) };
    const cpu = (tool: Tool) => median(r.runs[tool].map((x) => x.generatorCpuUsPerRequest));
    for (const tool of TOOLS) {
      const list = r.runs[tool];
      const planned = list.reduce((a, x) => a + (x.planned ?? 0), 0);
      runRows.push([
        String(r.pipelining),
        TOOL_LABEL[tool],
        tool === 'keysim' ? fmtAsked(list.map((x) => x.asked ?? 0)) : 'max',
        fmtRate(med[tool]),
        `${fmtRate(min(list.map((x) => x.rate)))} – ${fmtRate(max(list.map((x) => x.rate)))}`,
        fmtPercent(median(list.map((x) => x.generatorCpuShare))),
        fmtUs(median(list.map((x) => x.generatorCpuUsPerRequest))),
        fmtPercent(median(list.map((x) => x.serverCpuShare))),
        tool === 'keysim' ? share(list.reduce((a, x) => a + (x.late ?? 0), 0), planned) : '—',
        tool === 'keysim' ? share(list.reduce((a, x) => a + (x.dropped ?? 0), 0), planned) : '—',
        fmtInt(list.reduce((a, x) => a + x.completed, 0)),
        yesNo(list.every((x) => x.answersRight)),
      ]);
      for (const x of list) if (!x.answersRight) failures.push(`pipelining ${r.pipelining} ${tool}: ${x.problems}`);
    }
    const ratio = med.keysim / med.autocannon;
    const cpuRatio = cpu('autocannon') / cpu('keysim');
    ratioRows.push([
      String(r.pipelining),
      fmtRate(med.keysim),
      fmtRate(med.autocannon),
      fmtRatio(ratio),
      fmtRatio(cpuRatio),
      target,
      yesNo(ratio >= CEILING_TARGET),
      fmtRatio(med.keysim / med.undici),
      fmtRatio(med.undici / med.autocannon),
    ]);
    summary.push({
      figure: `Runner ceiling: keysim open model / autocannon alone (bare node:http, ${CONNECTIONS} connections, pipelining ${r.pipelining})`,
      median: `${fmtRatio(ratio)} (${fmtRate(med.keysim)} vs ${fmtRate(med.autocannon)}; CPU/request autocannon / keysim ${fmtRatio(cpuRatio)}; keysim / undici Client alone ${fmtRatio(med.keysim / med.undici)})`,
      target,
    });
  }
  const lateDropped = results.map((r) => {
    const k = r.runs.keysim;
    const sum = (f: (x: CeilingRun) => number) => fmtInt(median(k.map(f)));
    return `   pipelining ${r.pipelining}: per keysim run (median) planned ${sum((x) => x.planned ?? 0)}, sent ${sum((x) => x.sent ?? 0)}, late ${sum((x) => x.late ?? 0)}, dropped ${sum((x) => x.dropped ?? 0)}, completed ${sum((x) => x.completed)} in ${median(k.map((x) => x.seconds)).toFixed(2)} s.`;
  });
  const memoryPart = memoryLines(memory);
  const text = [
    `5. Load runner ceiling: keysim's open model vs autocannon alone (and undici's Client alone), all in this process (the generator),`,
    `   against the bare node:http server alone in its own process on 127.0.0.1; ${CONNECTIONS} connections, ${RUN_SECONDS} s per run after a ${WARMUP_SECONDS} s`,
    `   warm-up of each, median of ${REPEATS} runs, order rotated.`,
    `   The open model (OpenModelExecutor from ${mods.source}/, a real Recorder, one trivial keys.verifyKey request without check) is asked for`,
    `   ${RATE_FACTOR}× the best autocannon rate so far; its rate is what it completed per second of the planned ${RUN_SECONDS} s, after which it is stopped as`,
    '   Ctrl-C stops a run (recorder frozen, backlog dropped), so no generator is timed on its wind-down. undici Client alone = the',
    '   executor\'s HTTP client without the executor: one undici Client per connection kept full by a closed loop (read, parse, send).',
    '',
    textTable(['pipelining', 'generator', 'asked', 'completed', 'range (min – max)', 'generator CPU', 'CPU/request', 'server CPU', 'late', 'dropped', 'requests', 'answers right'], runRows),
    '',
    textTable(['pipelining', 'keysim', 'autocannon', 'keysim / autocannon', 'CPU/request autocannon / keysim', 'target', 'meets target', 'keysim / undici', 'undici / autocannon'], ratioRows),
    '',
    ...lateDropped,
    '   late = share of the planned sends enqueued more than 10 ms after their intended time (the generator\'s event loop lagged);',
    '   dropped = not sent, because the queue already held 100,000 or was still waiting at the stop (by design here: the open model',
    '   is asked for more than it can do). The send queue is keysim\'s default bound (the runner does not change it).',
    '   generator CPU / server CPU = CPU time / wall time of that process during the run (100 % = one core busy); CPU/request = the',
    '   generator\'s CPU time per completed request, and "CPU/request autocannon / keysim" the ratio it predicts for a generator',
    '   with a core to itself. autocannon runs without body verification (its plain maximum); keysim parses every answer as JSON',
    '   and records it, as in a real run. answers right = every answer 200, no transport errors or timeouts. keysim / undici =',
    '   what the executor and recorder cost on top of their client; undici / autocannon = what the client costs.',
    `   Ceiling part: ${ceilingSeconds.toFixed(0)} s.`,
    '',
    ...memoryPart.text,
    `   Section time: ${secondsSince(started).toFixed(0)} s.`,
  ].join('\n');
  summary.push(...memoryPart.summary);
  if (CHECKPOINTS.at(-1) !== RECORDED_TOTAL || memory.requests !== RECORDED_TOTAL) failures.push(`the recorder counted ${memory.requests} requests, expected ${RECORDED_TOTAL}`);
  if (failures.length > 0) throw new Error(`wrong answers during the runner benchmark:\n${failures.join('\n')}\n\n${text}`);
  return { text, summary };
}
