/**
 * The generators the runner benchmark compares, each measured for its completed requests per
 * second and its CPU time per completed request: autocannon (at its maximum, or at a fixed overall
 * rate) and keysim's OpenModelExecutor with a real Recorder. Both send the same request over the
 * same number of connections to the same server, which runs in its own process.
 */
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';
import type { ServerProcess } from './http-server.js';
import type { PlannedRequest } from '../src/load/executors/open-model-requests.js';
import type { RunnerModules } from './runner-modules.js';
import { secondsSince } from './stats.js';

/** The common method of published load-generator figures: 100 connections (pipelining 10 and 1). */
export const CONNECTIONS = 100;
const TIMEOUT_MS = 10_000;
const LATE_THRESHOLD_MS = 10;

/** The same request from every generator (the bare server reads and parses the body, ignores the rest). */
const OPERATION = 'keys.verifyKey';
export const PATH = `/v2/${OPERATION}`;
export const ROOT_KEY = 'unkey_benchroot';
export const BODY = { key: 'sk_bench_3ZfVkqXbTnR8wLm2' };
export const HEADERS = { 'content-type': 'application/json', authorization: `Bearer ${ROOT_KEY}` };
export const REQUEST: PlannedRequest = { operation: OPERATION, label: OPERATION, spec: { op: OPERATION, body: BODY }, check: undefined };

export type Tool = 'autocannon' | 'keysim';

/**
 * The open model's arrivals: `even`, the plan's (request i at i / rate); `burst`, autocannon's
 * shape with `overallRate`: each second's requests all due at the start of that second (within its
 * first millisecond), then nothing until the next. The burst is expressed with the plan's own
 * stages (a step up, a millisecond at the rate that holds the second's requests, a step down, the
 * rest of the second at zero), so the runner's code is the same in both; latency is still measured
 * from each request's intended time, queueing behind the burst included.
 */
export type Arrival = 'even' | 'burst';

/** Stages that put each second's `rate` requests in its first millisecond, for `seconds` seconds. */
export function burstStages(rate: number, seconds: number): { startRate: number; stages: Array<{ durationMs: number; target: number }> } {
  const peak = rate * 1000;
  const stages: Array<{ durationMs: number; target: number }> = [];
  for (let s = 0; s < seconds; s++)
    stages.push({ durationMs: 0, target: peak }, { durationMs: 1, target: peak }, { durationMs: 0, target: 0 }, { durationMs: 999, target: 0 });
  return { startRate: 0, stages };
}

export interface GeneratorRun {
  tool: Tool;
  /** Completed requests per second over the run's duration. */
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
  /** keysim only: its arrivals. */
  arrival?: Arrival;
  /** keysim only: corrected latency (from the intended send time), ms: the generator's lag shows in it. */
  correctedP50Ms?: number;
  correctedP99Ms?: number;
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

/**
 * autocannon, as fast as it goes or at `overallRate` requests per second over all connections
 * (no body verification: its plain cost).
 */
export async function runAutocannon(server: ServerProcess, pipelining: number, durationSeconds: number, overallRate?: number): Promise<GeneratorRun> {
  const r = await measured(server, async () => {
    const result = await new Promise<autocannon.Result>((resolve, reject) => {
      autocannon(
        {
          url: `${server.ready.url}${PATH}`,
          method: 'POST',
          connections: CONNECTIONS,
          pipelining,
          duration: durationSeconds,
          headers: HEADERS,
          body: JSON.stringify(BODY),
          ...(overallRate === undefined ? {} : { overallRate }),
        },
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
 * keysim's open model asked for `rate` for `durationSeconds` (arrivals even, or burst as
 * autocannon's), with a real Recorder. At the end of
 * the planned duration the run is stopped as a SIGINT stops it (the recorder frozen, the backlog
 * dropped), so its rate is what it completed per second of the planned duration, like autocannon's.
 */
export async function runKeysim(
  mods: RunnerModules,
  server: ServerProcess,
  pipelining: number,
  rate: number,
  durationSeconds: number,
  arrival: Arrival = 'even',
): Promise<GeneratorRun> {
  const [phase] = mods.planPhases([
    { name: 'bench', durationMs: durationSeconds * 1000, rate, warmup: false, ...(arrival === 'burst' ? { stages: burstStages(rate, durationSeconds) } : {}) },
  ]);
  if (phase === undefined) throw new Error('no phase planned');
  const executor = new mods.OpenModelExecutor({
    url: server.ready.url,
    rootKey: ROOT_KEY,
    connections: CONNECTIONS,
    pipelining,
    timeoutMs: TIMEOUT_MS,
    lateThresholdMs: LATE_THRESHOLD_MS,
  });
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
      arrival,
      correctedP50Ms: figures.overall.latency.corrected.p50,
      correctedP99Ms: figures.overall.latency.corrected.p99,
    };
  } finally {
    await executor.close();
  }
}
