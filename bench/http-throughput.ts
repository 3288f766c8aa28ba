/**
 * Figure 4: HTTP throughput of `keys.verifyKey` (a key with credits) and `ratelimit.limit`, with
 * autocannon against the simulator and, in the same run with the same requests and settings,
 * against a bare node:http server that reads the body, parses it and answers a fixed small JSON
 * (bare-server.ts). The ratio simulator / bare says how much of what node:http allows on this
 * machine the simulator delivers; then p50/p99 latency at half the simulator's maximum rate.
 *
 * Each server runs alone in its own process (http-server-child.ts); autocannon runs here, in the
 * parent, never in a server's process. Simulator and bare runs alternate (and swap order every
 * repetition) so that noise on the shared two-core machine hits both; figures are medians.
 */
import autocannon from 'autocannon';
import { type ServerKind, type ServerProcess, type ServerReady, startServer } from './http-server.js';
import { progress } from './subprocess.js';
import { type SummaryRow, fmtInt, fmtPercent, fmtRate, fmtRatio, max, median, min, secondsSince, textTable, yesNo } from './stats.js';

export const HTTP_RATIO_TARGET = 0.8;
/** Connections of the maximum-rate runs. */
const CONNECTIONS = 50;
const PIPELINING = [1, 10] as const;
/** Seconds per measured run. Shorter than the 8–10 s one would like, to keep the section near three minutes (32 runs). */
const RUN_SECONDS = 5;
/** Once per server and endpoint before the measured runs (JIT, connection pools). */
const WARMUP_SECONDS = 2;
const REPEATS = 3;
/** Latency runs: at half the simulator's maximum rate, with pipelining 1. */
const LATENCY_SECONDS = 5;
/**
 * Few connections, because autocannon spends each connection's per-second quota as fast as it
 * can at the start of every second: more connections would only queue deeper in each burst.
 */
const LATENCY_CONNECTIONS = 10;
/** Large enough never to run out (a valid credit amount). */
export const BENCH_CREDITS = 1e12;
/** ratelimit.limit: far above anything reachable in a window, so every request is admitted. */
const RATE_LIMIT = 1_000_000_000;
const RATE_WINDOW_MS = 60_000;
const IDENTIFIERS = ['user-1', 'user-2', 'user-3', 'user-4'] as const;

export type Endpoint = 'verifyKey' | 'ratelimit';
export const ENDPOINTS: readonly Endpoint[] = ['verifyKey', 'ratelimit'];
const ENDPOINT_LABEL: Record<Endpoint, string> = { verifyKey: 'keys.verifyKey', ratelimit: 'ratelimit.limit' };

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

/** A substring every correct answer contains (checked on every response). */
function expectedText(kind: ServerKind, endpoint: Endpoint): string {
  if (kind === 'bare') return '"ok":true';
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

export interface RunResult {
  kind: ServerKind;
  /** Completed requests per second. */
  rate: number;
  completed: number;
  sent: number;
  ok2xx: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  /** Responses without the expected text. */
  mismatches: number;
  seconds: number;
  /** CPU time / wall time of the server process and of this (load generator) process. */
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

export async function runLoad(server: ServerProcess, endpoint: Endpoint, workload: Workload, settings: RunSettings): Promise<RunResult> {
  const expected = expectedText(server.ready.kind, endpoint);
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
  const completed = result.requests.total;
  const serverCpuUs = serverCpuEnd.userUs + serverCpuEnd.systemUs - serverCpuStart.userUs - serverCpuStart.systemUs;
  return {
    kind: server.ready.kind,
    rate: completed / result.duration,
    completed,
    sent: result.requests.sent,
    ok2xx: result['2xx'],
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    mismatches: result.mismatches,
    seconds: result.duration,
    serverCpuShare: serverCpuUs / 1e6 / seconds,
    serverCpuUsPerRequest: completed > 0 ? serverCpuUs / completed : Number.NaN,
    generatorCpuShare: (cpu.user + cpu.system) / 1e6 / seconds,
    acP50Ms: result.latency.p50,
    acP99Ms: result.latency.p99,
    ...(sorted.length > 0 ? { p50Ms: percentile(sorted, 50), p99Ms: percentile(sorted, 99) } : {}),
  };
}

// --- answers checked outside the runs ----------------------------------------------------------

async function postJson(sim: ServerReady, path: string, body: unknown): Promise<{ status: number; data: Record<string, unknown> | undefined }> {
  const res = await fetch(`${sim.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${sim.rootKey ?? ''}` },
    body: JSON.stringify(body),
  });
  const json = (await res.json()) as { data?: Record<string, unknown> };
  return { status: res.status, data: json.data };
}

/** One verification by hand: VALID, and the balance it reports. */
async function sampleVerify(sim: ServerReady): Promise<{ valid: boolean; code: unknown; credits: number }> {
  const { status, data } = await postJson(sim, '/v2/keys.verifyKey', { key: sim.key });
  if (status !== 200 || data === undefined) throw new Error(`sample keys.verifyKey answered ${status}`);
  return { valid: data.valid === true && data.code === 'VALID', code: data.code, credits: Number(data.credits) };
}

async function sampleLimit(sim: ServerReady): Promise<boolean> {
  const { status, data } = await postJson(sim, '/v2/ratelimit.limit', { namespace: sim.namespace, identifier: IDENTIFIERS[0], limit: RATE_LIMIT, duration: RATE_WINDOW_MS });
  return status === 200 && data?.success === true && data.limit === RATE_LIMIT;
}

// --- the section -------------------------------------------------------------------------------

interface EndpointResults {
  endpoint: Endpoint;
  max: Record<number, { sim: RunResult[]; bare: RunResult[] }>;
  latencyRate: number;
  latency: { sim: RunResult; bare: RunResult };
  sample: string;
  sampleOk: boolean;
  /** verifyKey: credits the simulator consumed vs the 2xx answers autocannon counted and the requests it sent. */
  credits?: { consumed: number; counted: number; sent: number; ok: boolean };
}

async function measureEndpoint(endpoint: Endpoint, sim: ServerProcess, bare: ServerProcess): Promise<EndpointResults> {
  const workload = workloadFor(endpoint, sim.ready);
  const label = ENDPOINT_LABEL[endpoint];
  // Every verification autocannon sends to the simulator's key (warm-up included) costs one credit.
  let counted = 0;
  let sent = 0;
  const onSim = (r: RunResult) => {
    counted += r.ok2xx;
    sent += r.sent;
    return r;
  };
  let before: { valid: boolean; code: unknown; credits: number } | undefined;
  if (endpoint === 'verifyKey') {
    before = await sampleVerify(sim.ready);
    if (!before.valid) throw new Error(`keys.verifyKey on the bench key answered ${String(before.code)}, not VALID`);
  }
  progress(`http ${label}: warm-up`);
  const warm: RunSettings = { connections: CONNECTIONS, pipelining: 1, durationSeconds: WARMUP_SECONDS };
  onSim(await runLoad(sim, endpoint, workload, warm));
  await runLoad(bare, endpoint, workload, warm);

  const maxRuns: EndpointResults['max'] = {};
  for (const pipelining of PIPELINING) {
    const runs = { sim: [] as RunResult[], bare: [] as RunResult[] };
    const settings: RunSettings = { connections: CONNECTIONS, pipelining, durationSeconds: RUN_SECONDS };
    for (let rep = 0; rep < REPEATS; rep++) {
      const order: ServerKind[] = rep % 2 === 0 ? ['sim', 'bare'] : ['bare', 'sim'];
      for (const kind of order) {
        if (kind === 'sim') runs.sim.push(onSim(await runLoad(sim, endpoint, workload, settings)));
        else runs.bare.push(await runLoad(bare, endpoint, workload, settings));
      }
      progress(
        `http ${label}, pipelining ${pipelining}: run ${rep + 1}/${REPEATS}: simulator ${fmtRate(runs.sim[rep]?.rate ?? 0)}, bare ${fmtRate(runs.bare[rep]?.rate ?? 0)}`,
      );
    }
    maxRuns[pipelining] = runs;
  }

  // Half of the simulator's maximum: the best median over the pipelining settings.
  const simMax = max(PIPELINING.map((p) => median((maxRuns[p]?.sim ?? []).map((r) => r.rate))));
  const latencyRate = Math.round(simMax / 2);
  progress(`http ${label}: latency at ${fmtRate(latencyRate)}`);
  const latencySettings: RunSettings = {
    connections: LATENCY_CONNECTIONS,
    pipelining: 1,
    durationSeconds: LATENCY_SECONDS,
    overallRate: latencyRate,
    recordLatencies: true,
  };
  const latencySim = onSim(await runLoad(sim, endpoint, workload, latencySettings));
  const latencyBare = await runLoad(bare, endpoint, workload, latencySettings);

  if (endpoint === 'verifyKey' && before !== undefined) {
    const after = await sampleVerify(sim.ready);
    // `before` and `after` are hand-made verifications: the runs consumed what lies between.
    const consumed = before.credits - after.credits - 1;
    return {
      endpoint,
      max: maxRuns,
      latencyRate,
      latency: { sim: latencySim, bare: latencyBare },
      sample: `sample answer after the runs: ${String(after.code)}, credits ${fmtInt(after.credits)}`,
      sampleOk: after.valid,
      credits: { consumed, counted, sent, ok: counted <= consumed && consumed <= sent },
    };
  }
  const limited = await sampleLimit(sim.ready);
  return {
    endpoint,
    max: maxRuns,
    latencyRate,
    latency: { sim: latencySim, bare: latencyBare },
    sample: `sample answer after the runs: success ${limited ? 'true' : 'false'}`,
    sampleOk: limited,
  };
}

function fmtUs(us: number): string {
  return Number.isNaN(us) ? '—' : `${us.toFixed(0)} µs`;
}

function fmtMs(ms: number | undefined): string {
  if (ms === undefined || Number.isNaN(ms)) return '—';
  return ms < 1 ? `${(ms * 1000).toFixed(0)} µs` : `${ms.toFixed(2)} ms`;
}

export async function httpReport(): Promise<{ text: string; summary: SummaryRow[] }> {
  const started = process.hrtime.bigint();
  const servers: ServerProcess[] = [];
  const results: EndpointResults[] = [];
  try {
    const sim = await startServer('sim');
    servers.push(sim);
    const bare = await startServer('bare');
    servers.push(bare);
    for (const endpoint of ENDPOINTS) results.push(await measureEndpoint(endpoint, sim, bare));
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
  }

  const maxRows: string[][] = [];
  const ratioRows: string[][] = [];
  const latencyRows: string[][] = [];
  const summary: SummaryRow[] = [];
  const failures: string[] = [];
  const target = `≥ ${fmtRatio(HTTP_RATIO_TARGET)}`;
  for (const r of results) {
    const label = ENDPOINT_LABEL[r.endpoint];
    for (const pipelining of PIPELINING) {
      const runs = r.max[pipelining];
      if (runs === undefined) continue;
      const med = { sim: median(runs.sim.map((x) => x.rate)), bare: median(runs.bare.map((x) => x.rate)) };
      for (const kind of ['sim', 'bare'] as const) {
        const list = runs[kind];
        maxRows.push([
          label,
          String(pipelining),
          kind === 'sim' ? 'simulator' : 'bare node:http',
          fmtRate(med[kind]),
          `${fmtRate(min(list.map((x) => x.rate)))} – ${fmtRate(max(list.map((x) => x.rate)))}`,
          fmtPercent(median(list.map((x) => x.serverCpuShare))),
          fmtUs(median(list.map((x) => x.serverCpuUsPerRequest))),
          fmtPercent(median(list.map((x) => x.generatorCpuShare))),
          fmtInt(list.reduce((a, x) => a + x.completed, 0)),
          yesNo(list.every(checksPassed)),
        ]);
        for (const x of list) if (!checksPassed(x)) failures.push(`${label} p${pipelining} ${kind}: ${describeChecks(x)}`);
      }
      const ratio = med.sim / med.bare;
      const cpuRatio = median(runs.bare.map((x) => x.serverCpuUsPerRequest)) / median(runs.sim.map((x) => x.serverCpuUsPerRequest));
      ratioRows.push([label, String(pipelining), fmtRate(med.sim), fmtRate(med.bare), fmtRatio(ratio), fmtRatio(cpuRatio), target, yesNo(ratio >= HTTP_RATIO_TARGET)]);
      summary.push({
        figure: `HTTP ${label}, simulator / bare node:http (${CONNECTIONS} connections, pipelining ${pipelining})`,
        median: `${fmtRatio(ratio)} (${fmtRate(med.sim)} vs ${fmtRate(med.bare)}; CPU/request bare / sim ${fmtRatio(cpuRatio)})`,
        target,
      });
    }
    for (const kind of ['sim', 'bare'] as const) {
      const x = r.latency[kind];
      latencyRows.push([
        label,
        kind === 'sim' ? 'simulator' : 'bare node:http',
        fmtRate(r.latencyRate),
        fmtRate(x.rate),
        yesNo(x.rate >= 0.95 * r.latencyRate),
        fmtMs(x.p50Ms),
        fmtMs(x.p99Ms),
        `${x.acP50Ms} / ${x.acP99Ms} ms`,
        fmtPercent(x.serverCpuShare),
        yesNo(checksPassed(x)),
      ]);
      if (!checksPassed(x)) failures.push(`${label} latency ${kind}: ${describeChecks(x)}`);
    }
    const sim = r.latency.sim;
    summary.push({
      figure: `HTTP ${label}, simulator latency p50 / p99 at ${fmtRate(r.latencyRate)} (half its maximum)`,
      median: `${fmtMs(sim.p50Ms)} / ${fmtMs(sim.p99Ms)}`,
      target: '—',
    });
    if (!r.sampleOk) failures.push(`${label}: ${r.sample}`);
    if (r.credits !== undefined && !r.credits.ok) {
      failures.push(`${label}: the simulator consumed ${fmtInt(r.credits.consumed)} credits for ${fmtInt(r.credits.counted)} counted answers and ${fmtInt(r.credits.sent)} sent requests`);
    }
  }

  const checkLines = results.map((r) => {
    const credits =
      r.credits === undefined
        ? ''
        : `; credits consumed by the simulator ${fmtInt(r.credits.consumed)} (autocannon counted ${fmtInt(r.credits.counted)} VALID answers, sent ${fmtInt(r.credits.sent)}: ${r.credits.ok ? 'consistent' : 'INCONSISTENT'})`;
    return `   ${ENDPOINT_LABEL[r.endpoint]}: ${r.sample}${credits}.`;
  });
  const text = [
    `4. HTTP throughput, simulator vs bare node:http (autocannon ${CONNECTIONS} connections in the parent process, each server alone in its own process on 127.0.0.1; ${RUN_SECONDS} s per run after a ${WARMUP_SECONDS} s warm-up, median of ${REPEATS} runs, simulator and bare alternating)`,
    '',
    textTable(['endpoint', 'pipelining', 'server', 'median', 'range (min – max)', 'server CPU', 'CPU/request', 'generator CPU', 'requests', 'answers right'], maxRows),
    '',
    textTable(['endpoint', 'pipelining', 'simulator', 'bare', 'simulator / bare', 'CPU/request bare / sim', 'target', 'meets target'], ratioRows),
    '',
    `   Latency at half the simulator's maximum rate (the higher of its medians above; autocannon overallRate, ${LATENCY_CONNECTIONS} connections, pipelining 1,`,
    `   ${LATENCY_SECONDS} s; bare at the same rate for reference):`,
    '',
    textTable(['endpoint', 'server', 'asked', 'achieved', 'sustained', 'p50', 'p99', 'autocannon p50 / p99', 'server CPU', 'answers right'], latencyRows),
    '',
    '   answers right = every response 2xx with the expected content (VALID / success / the bare answer), no errors or timeouts.',
    ...checkLines,
    '   server CPU / generator CPU = CPU time / wall time of that process during the run (100 % = one core busy); CPU/request =',
    '   the server\'s CPU time per answered request, and "CPU/request bare / sim" the ratio it predicts for a server that has a',
    '   core to itself (less sensitive than the rates to what else runs on the machine).',
    '   p50/p99 come from every response time autocannon measured (fractional ms); autocannon\'s own percentiles are whole',
    '   milliseconds. autocannon spends each connection\'s per-second quota at full speed at the start of each second, so these',
    '   latencies are those of bursts at up to full speed, averaging half the maximum rate — not of evenly spaced requests.',
    '   Both servers run through tsx, like every benchmark here; tsx keeps function names by wrapping the simulator\'s',
    '   per-request closures, so the compiled simulator (`keysim serve`) spends somewhat less CPU per request.',
    `   Section time: ${secondsSince(started).toFixed(0)} s.`,
  ].join('\n');
  if (failures.length > 0) throw new Error(`wrong answers during the HTTP benchmark:\n${failures.join('\n')}\n\n${text}`);
  return { text, summary };
}

function describeChecks(r: RunResult): string {
  return `completed ${r.completed}, 2xx ${r.ok2xx}, non-2xx ${r.non2xx}, errors ${r.errors}, timeouts ${r.timeouts}, wrong content ${r.mismatches}`;
}
