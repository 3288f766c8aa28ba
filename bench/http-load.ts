/**
 * The HTTP benchmark's requests and one autocannon run against a server process: what
 * http-throughput.ts, http-profile.ts and serve-workers.ts share (oracle-overhead.ts shares
 * fromAutocannon). autocannon runs in this process (the parent), never in a server's.
 */
import autocannon from 'autocannon';
import type { ServerKind, ServerProcess, ServerReady } from './http-server.js';
import { secondsSince } from './stats.js';

/** Large enough never to run out (a valid credit amount). */
export const BENCH_CREDITS = 1e12;
/** ratelimit.limit: far above anything reachable in a window, so every request is admitted. */
export const RATE_LIMIT = 1_000_000_000;
export const RATE_WINDOW_MS = 60_000;
export const IDENTIFIERS = ['user-1', 'user-2', 'user-3', 'user-4'] as const;

export type Endpoint = 'verifyKey' | 'ratelimit';
export const ENDPOINTS: readonly Endpoint[] = ['verifyKey', 'ratelimit'];
export const ENDPOINT_LABEL: Record<Endpoint, string> = { verifyKey: 'keys.verifyKey', ratelimit: 'ratelimit.limit' };

// --- requests ----------------------------------------------------------------------------------

export interface Workload {
  path: string;
  headers: Record<string, string>;
  bodies: string[];
}

/** The same requests go to both servers (the bare one ignores path, headers and content). */
export function workloadFor(endpoint: Endpoint, sim: ServerReady): Workload {
  if (sim.rootKey === undefined || sim.key === undefined || sim.namespace === undefined) throw new Error('the simulator printed no fixture');
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${sim.rootKey}` };
  if (endpoint === 'verifyKey') return { path: '/v2/keys.verifyKey', headers, bodies: [JSON.stringify({ key: sim.key })] };
  const namespace = sim.namespace;
  return {
    path: '/v2/ratelimit.limit',
    headers,
    bodies: IDENTIFIERS.map((identifier) => JSON.stringify({ namespace, identifier, limit: RATE_LIMIT, duration: RATE_WINDOW_MS })),
  };
}

/**
 * A substring every correct answer contains (checked on every response). The bare server's fixed
 * answers copy the simulator's shape (bare-server.ts), so the same text is expected of both.
 */
export function expectedText(endpoint: Endpoint): string {
  return endpoint === 'verifyKey' ? '"code":"VALID"' : '"success":true';
}

// --- one autocannon run ------------------------------------------------------------------------

export interface RunSettings {
  connections: number;
  pipelining: number;
  durationSeconds: number;
  /** Requests per second over all connections; absent = as fast as possible. */
  overallRate?: number;
  /** Keep every response time (for percentiles finer than autocannon's whole milliseconds). */
  recordLatencies?: boolean;
}

export type Generator = 'autocannon' | 'wrk';

export interface RunResult {
  kind: ServerKind;
  generator: Generator;
  /** Completed requests per second. */
  rate: number;
  completed: number;
  sent: number;
  ok2xx: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  /** Responses without the expected text (autocannon checks every body; wrk does not, and reports 0). */
  mismatches: number;
  seconds: number;
  /** CPU time / wall time of the server process and of the load generator (NaN: not measured). */
  serverCpuShare: number;
  generatorCpuShare: number;
  /** Server CPU time per completed request, µs: less sensitive to other load on the machine than the rate. */
  serverCpuUsPerRequest: number;
  /** autocannon's own percentiles, whole milliseconds. */
  acP50Ms: number;
  acP99Ms: number;
  /** From every response time, when recorded (ms, fractional). */
  p50Ms?: number;
  p99Ms?: number;
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

export function checksPassed(r: RunResult): boolean {
  return r.completed > 0 && r.ok2xx === r.completed && r.non2xx === 0 && r.errors === 0 && r.timeouts === 0 && r.mismatches === 0;
}

/** A process's CPU time (µs) between two readings of `ServerProcess.cpu()`. */
export function cpuUsBetween(start: { userUs: number; systemUs: number }, end: { userUs: number; systemUs: number }): number {
  return end.userUs + end.systemUs - start.userUs - start.systemUs;
}

/** The counts and CPU figures every autocannon run reports, the same way in every benchmark. */
export type AutocannonFigures = Pick<
  RunResult,
  'rate' | 'completed' | 'sent' | 'ok2xx' | 'non2xx' | 'errors' | 'timeouts' | 'mismatches' | 'serverCpuShare' | 'generatorCpuShare' | 'serverCpuUsPerRequest'
>;

/**
 * autocannon's result as RunResult's fields. `cpu`: the wall seconds of the measured window and
 * the CPU time (µs) the generator (this process) and the server used in it. The rate is over
 * autocannon's own duration (the wall window adds its start-up and the CPU readings).
 */
export function fromAutocannon(result: autocannon.Result, cpu: { seconds: number; generatorUs: number; serverUs: number }): AutocannonFigures {
  const completed = result.requests.total;
  return {
    rate: completed / result.duration,
    completed,
    sent: result.requests.sent,
    ok2xx: result['2xx'],
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    mismatches: result.mismatches,
    serverCpuShare: cpu.serverUs / 1e6 / cpu.seconds,
    generatorCpuShare: cpu.generatorUs / 1e6 / cpu.seconds,
    serverCpuUsPerRequest: completed > 0 ? cpu.serverUs / completed : Number.NaN,
  };
}

export async function runLoad(server: ServerProcess, endpoint: Endpoint, workload: Workload, settings: RunSettings): Promise<RunResult> {
  const expected = expectedText(endpoint);
  const latencies: number[] = [];
  const serverCpuStart = await server.cpu();
  const cpuStart = process.cpuUsage();
  const start = process.hrtime.bigint();
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(
      {
        url: server.ready.url,
        method: 'POST',
        connections: settings.connections,
        pipelining: settings.pipelining,
        duration: settings.durationSeconds,
        ...(settings.overallRate === undefined ? {} : { overallRate: settings.overallRate }),
        requests: workload.bodies.map((body) => ({ method: 'POST' as const, path: workload.path, headers: workload.headers, body })),
        verifyBody: (body) => typeof body === 'string' && body.includes(expected),
      },
      (error, res) => (error === null || error === undefined ? resolve(res) : reject(error instanceof Error ? error : new Error(String(error)))),
    );
    if (settings.recordLatencies === true) {
      // The tracker's listener receives (client, status, bytes, ms); @types/autocannon omits the client.
      (instance as NodeJS.EventEmitter).on('response', (_client: unknown, status: number, _bytes: number, ms: number) => {
        if (status >= 200 && status < 300) latencies.push(ms);
      });
    }
  });
  const seconds = secondsSince(start);
  const cpu = process.cpuUsage(cpuStart);
  const serverCpuEnd = await server.cpu();
  const sorted = Float64Array.from(latencies).sort();
  return {
    kind: server.ready.kind,
    generator: 'autocannon',
    ...fromAutocannon(result, { seconds, generatorUs: cpu.user + cpu.system, serverUs: cpuUsBetween(serverCpuStart, serverCpuEnd) }),
    seconds: result.duration,
    acP50Ms: result.latency.p50,
    acP99Ms: result.latency.p99,
    ...(sorted.length > 0 ? { p50Ms: percentile(sorted, 50), p99Ms: percentile(sorted, 99) } : {}),
  };
}
