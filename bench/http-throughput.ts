/**
 * Figure 4: HTTP throughput of `keys.verifyKey` (a key with credits) and `ratelimit.limit`: the
 * simulator against a bare node:http server that reads the body, parses it and answers the same
 * bytes the simulator answers (bare-server.ts), with the same requests and settings. The ratio
 * simulator / bare says how much of what node:http allows on this machine the simulator delivers;
 * then p50/p99 latency at half the simulator's maximum rate.
 *
 * The common method, so figures sit beside other projects': 100 connections, pipelining 10 (and 1),
 * the generator in a process of its own. Two generators where installed: autocannon (in this
 * process, never in a server's) and wrk (its own process; the C anchor, which shows how much of a
 * figure is the generator's). Each server runs alone in its own process (http-server-child.ts).
 * Simulator, bare and bare-with-coalescing (bare-server.ts) run back to back in an order that
 * rotates every repetition so that noise on a shared machine hits all; each repetition gives one ratio, and the section prints their min, median
 * and max, with the server's CPU time per request, which depends less on the neighbours.
 */
import { loadText } from './machine.js';
import { type ServerProcess, type ServerReady, startServer } from './http-server.js';
import {
  ENDPOINTS,
  ENDPOINT_LABEL,
  type Endpoint,
  type Generator,
  IDENTIFIERS,
  RATE_LIMIT,
  RATE_WINDOW_MS,
  type RunResult,
  type RunSettings,
  type Workload,
  checksPassed,
  runLoad,
  workloadFor,
} from './http-load.js';
import { findWrk, runWrk, wrkThreads } from './wrk.js';
import { progress } from './subprocess.js';
import { type SummaryRow, fmtInt, fmtPercent, fmtRate, fmtRatio, max, median, min, secondsSince, textTable, yesNo } from './stats.js';

export const HTTP_RATIO_TARGET = 0.85;
/** Connections of the maximum-rate runs (the common method). */
const CONNECTIONS = 100;
const PIPELINING = [1, 10] as const;
/** Seconds per measured run: 5 s keeps the section near eight minutes (72 measured runs with wrk). */
const RUN_SECONDS = 5;
/** Once per server, endpoint and generator before the measured runs (JIT, connection pools). */
const WARMUP_SECONDS = 2;
const REPEATS = 3;
/** Latency runs: at half the simulator's maximum rate, with pipelining 1. */
const LATENCY_SECONDS = 5;
/**
 * Few connections, because autocannon spends each connection's per-second quota as fast as it
 * can at the start of every second: more connections would only queue deeper in each burst.
 */
const LATENCY_CONNECTIONS = 10;

type Runner = (server: ServerProcess, endpoint: Endpoint, workload: Workload, settings: RunSettings) => Promise<RunResult>;

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
  const { status, data } = await postJson(sim, '/v2/ratelimit.limit', {
    namespace: sim.namespace,
    identifier: IDENTIFIERS[0],
    limit: RATE_LIMIT,
    duration: RATE_WINDOW_MS,
  });
  return status === 200 && data?.success === true && data.limit === RATE_LIMIT;
}

// --- the section -------------------------------------------------------------------------------

type ServerRole = 'sim' | 'bare' | 'coalesced';
/** The servers of each repetition, the first one rotating. */
const SERVER_ORDER: readonly ServerRole[] = ['sim', 'bare', 'coalesced'];
const SERVER_LABEL: Record<ServerRole, string> = { sim: 'simulator', bare: 'bare node:http', coalesced: 'bare, writes coalesced' };

interface Series {
  generator: Generator;
  pipelining: number;
  sim: RunResult[];
  bare: RunResult[];
  /** The bare server with the simulator's write coalescing (for reading, not a target). */
  coalesced: RunResult[];
  /** sim / bare of each repetition. */
  ratios: number[];
  /** sim / bare with coalescing of each repetition. */
  coalescedRatios: number[];
}

interface EndpointResults {
  endpoint: Endpoint;
  series: Series[];
  latencyRate: number;
  latency: { sim: RunResult; bare: RunResult };
  sample: string;
  sampleOk: boolean;
  /** verifyKey: credits the simulator consumed vs the 2xx answers the generators counted and the requests they sent. */
  credits?: { consumed: number; counted: number; sent: number; ok: boolean };
}

async function measureEndpoint(
  endpoint: Endpoint,
  sim: ServerProcess,
  bare: ServerProcess,
  coalesced: ServerProcess,
  generators: ReadonlyArray<[Generator, Runner]>,
): Promise<EndpointResults> {
  const workload = workloadFor(endpoint, sim.ready);
  const label = ENDPOINT_LABEL[endpoint];
  // Every verification sent to the simulator's key (warm-up included) costs one credit.
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

  const series: Series[] = [];
  for (const [generator, run] of generators) {
    progress(`http ${label}, ${generator}: warm-up`);
    const warm: RunSettings = { connections: CONNECTIONS, pipelining: 1, durationSeconds: WARMUP_SECONDS };
    onSim(await run(sim, endpoint, workload, warm));
    await run(bare, endpoint, workload, warm);
    await run(coalesced, endpoint, workload, warm);
    for (const pipelining of PIPELINING) {
      const s: Series = { generator, pipelining, sim: [], bare: [], coalesced: [], ratios: [], coalescedRatios: [] };
      const settings: RunSettings = { connections: CONNECTIONS, pipelining, durationSeconds: RUN_SECONDS };
      for (let rep = 0; rep < REPEATS; rep++) {
        // The three servers back to back, in an order that rotates every repetition.
        const runs = new Map<string, RunResult>();
        for (let i = 0; i < SERVER_ORDER.length; i++) {
          const which = SERVER_ORDER[(i + rep) % SERVER_ORDER.length] as ServerRole;
          const server = which === 'sim' ? sim : which === 'bare' ? bare : coalesced;
          const r = await run(server, endpoint, workload, settings);
          runs.set(which, which === 'sim' ? onSim(r) : r);
        }
        const simRun = runs.get('sim') as RunResult;
        const bareRun = runs.get('bare') as RunResult;
        const coalescedRun = runs.get('coalesced') as RunResult;
        s.sim.push(simRun);
        s.bare.push(bareRun);
        s.coalesced.push(coalescedRun);
        s.ratios.push(simRun.rate / bareRun.rate);
        s.coalescedRatios.push(simRun.rate / coalescedRun.rate);
        progress(
          `http ${label}, ${generator}, pipelining ${pipelining}: run ${rep + 1}/${REPEATS}: simulator ${fmtRate(simRun.rate)}, bare ${fmtRate(bareRun.rate)} (${fmtRatio(simRun.rate / bareRun.rate)}), ` +
            `bare with coalescing ${fmtRate(coalescedRun.rate)} (${fmtRatio(simRun.rate / coalescedRun.rate)})`,
        );
      }
      series.push(s);
    }
  }

  // Half of the simulator's maximum under autocannon: the best median over the pipelining settings.
  const simMax = max(series.filter((s) => s.generator === 'autocannon').map((s) => median(s.sim.map((r) => r.rate))));
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

  const common = { endpoint, series, latencyRate, latency: { sim: latencySim, bare: latencyBare } };
  if (endpoint === 'verifyKey' && before !== undefined) {
    const after = await sampleVerify(sim.ready);
    // `before` and `after` are hand-made verifications: the runs consumed what lies between.
    const consumed = before.credits - after.credits - 1;
    return {
      ...common,
      sample: `sample answer after the runs: ${String(after.code)}, credits ${fmtInt(after.credits)}`,
      sampleOk: after.valid,
      credits: { consumed, counted, sent, ok: counted <= consumed && consumed <= sent },
    };
  }
  const limited = await sampleLimit(sim.ready);
  return { ...common, sample: `sample answer after the runs: success ${limited ? 'true' : 'false'}`, sampleOk: limited };
}

function fmtUs(us: number): string {
  return Number.isNaN(us) ? '—' : `${us.toFixed(1)} µs`;
}

function fmtMs(ms: number | undefined): string {
  if (ms === undefined || Number.isNaN(ms)) return '—';
  return ms < 1 ? `${(ms * 1000).toFixed(0)} µs` : `${ms.toFixed(2)} ms`;
}

function fmtLoad(): string {
  return loadText();
}

export async function httpReport(): Promise<{ text: string; summary: SummaryRow[] }> {
  const started = process.hrtime.bigint();
  const loadBefore = fmtLoad();
  const wrk = findWrk();
  const generators: Array<[Generator, Runner]> = [['autocannon', runLoad]];
  if (wrk !== undefined) generators.push(['wrk', (server, endpoint, workload, settings) => runWrk(wrk, server, endpoint, workload, settings)]);
  else progress('http: wrk is not installed (e.g. apt-get install wrk): autocannon only');
  const servers: ServerProcess[] = [];
  const results: EndpointResults[] = [];
  try {
    const sim = await startServer('sim');
    servers.push(sim);
    const bare = await startServer('bare');
    servers.push(bare);
    const coalesced = await startServer('bare-coalesced');
    servers.push(coalesced);
    for (const endpoint of ENDPOINTS) results.push(await measureEndpoint(endpoint, sim, bare, coalesced, generators));
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
  }
  const loadAfter = fmtLoad();

  const rateRows: string[][] = [];
  const ratioRows: string[][] = [];
  const latencyRows: string[][] = [];
  const summary: SummaryRow[] = [];
  const failures: string[] = [];
  const target = `≥ ${fmtRatio(HTTP_RATIO_TARGET)}`;
  for (const r of results) {
    const label = ENDPOINT_LABEL[r.endpoint];
    for (const s of r.series) {
      for (const kind of SERVER_ORDER) {
        const list = s[kind];
        rateRows.push([
          label,
          s.generator,
          String(s.pipelining),
          SERVER_LABEL[kind],
          fmtRate(median(list.map((x) => x.rate))),
          `${fmtRate(min(list.map((x) => x.rate)))} – ${fmtRate(max(list.map((x) => x.rate)))}`,
          fmtPercent(median(list.map((x) => x.serverCpuShare))),
          fmtUs(median(list.map((x) => x.serverCpuUsPerRequest))),
          fmtInt(list.reduce((a, x) => a + x.completed, 0)),
          yesNo(list.every(checksPassed)),
        ]);
        for (const x of list) if (!checksPassed(x)) failures.push(`${label} ${s.generator} p${s.pipelining} ${kind}: ${describeChecks(x)}`);
      }
      const ratio = { min: min(s.ratios), median: median(s.ratios), max: max(s.ratios) };
      const cpu = { sim: median(s.sim.map((x) => x.serverCpuUsPerRequest)), bare: median(s.bare.map((x) => x.serverCpuUsPerRequest)) };
      const rates = `${fmtRatio(ratio.min)} / ${fmtRatio(ratio.median)} / ${fmtRatio(ratio.max)}`;
      const againstCoalesced = `${fmtRatio(min(s.coalescedRatios))} / ${fmtRatio(median(s.coalescedRatios))} / ${fmtRatio(max(s.coalescedRatios))}`;
      ratioRows.push([
        label,
        s.generator,
        String(s.pipelining),
        rates,
        `${fmtUs(cpu.sim)} vs ${fmtUs(cpu.bare)}`,
        fmtRatio(cpu.bare / cpu.sim),
        target,
        yesNo(ratio.median >= HTTP_RATIO_TARGET),
        againstCoalesced,
      ]);
      summary.push({
        figure: `HTTP ${label}, simulator / bare node:http (${s.generator}, ${CONNECTIONS} connections, pipelining ${s.pipelining})`,
        median: `${fmtRatio(ratio.median)} (min ${fmtRatio(ratio.min)}, max ${fmtRatio(ratio.max)}; ${fmtRate(median(s.sim.map((x) => x.rate)))} vs ${fmtRate(median(s.bare.map((x) => x.rate)))}; CPU/request ${fmtUs(cpu.sim)} vs ${fmtUs(cpu.bare)})`,
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
      failures.push(
        `${label}: the simulator consumed ${fmtInt(r.credits.consumed)} credits for ${fmtInt(r.credits.counted)} counted answers and at most ${fmtInt(r.credits.sent)} sent requests`,
      );
    }
  }

  const checkLines = results.map((r) => {
    const credits =
      r.credits === undefined
        ? ''
        : `; credits consumed by the simulator ${fmtInt(r.credits.consumed)} (the generators counted ${fmtInt(r.credits.counted)} VALID answers, sent at most ${fmtInt(r.credits.sent)}: ${r.credits.ok ? 'consistent' : 'INCONSISTENT'})`;
    return `   ${ENDPOINT_LABEL[r.endpoint]}: ${r.sample}${credits}.`;
  });
  const generatorText =
    wrk === undefined
      ? 'autocannon in the parent process (wrk not installed)'
      : `autocannon in the parent process and wrk (${wrkThreads()} thread(s), its own process)`;
  const text = [
    `4. HTTP throughput, simulator vs bare node:http (${generatorText}; ${CONNECTIONS} connections; each server alone in its own process on 127.0.0.1;`,
    `   ${RUN_SECONDS} s per run after a ${WARMUP_SECONDS} s warm-up per generator, ${REPEATS} repetitions, the three servers in an order rotated each repetition; load average before ${loadBefore}, after ${loadAfter})`,
    '',
    textTable(
      ['endpoint', 'generator', 'pipelining', 'server', 'median', 'range (min – max)', 'server CPU', 'CPU/request', 'requests', 'answers right'],
      rateRows,
    ),
    '',
    textTable(
      [
        'endpoint',
        'generator',
        'pipelining',
        'sim / bare (min / median / max)',
        'CPU/request sim vs bare',
        'CPU bare / sim',
        'target',
        'median meets target',
        'sim / bare with coalescing',
      ],
      ratioRows,
    ),
    '',
    `   Latency at half the simulator's maximum rate under autocannon (autocannon overallRate, ${LATENCY_CONNECTIONS} connections, pipelining 1,`,
    `   ${LATENCY_SECONDS} s; bare at the same rate for reference):`,
    '',
    textTable(['endpoint', 'server', 'asked', 'achieved', 'sustained', 'p50', 'p99', 'autocannon p50 / p99', 'server CPU', 'answers right'], latencyRows),
    '',
    '   The bare server answers the same bytes as the simulator (its answers copied, request-id header included).',
    '   The simulator hands the answers a connection writes in one turn of the event loop to the kernel together (one writev',
    '   for a batch of pipelined answers, where node:http makes one per answer); "bare with coalescing" is the bare server with',
    "   that same step, so the last column shows the rest of the simulator's work per request (for reading; the target is",
    '   against plain node:http).',
    '   answers right = every response 2xx, no errors or timeouts; with autocannon also every body holding the expected content',
    '   (VALID / success); wrk reads statuses only, and the credits check below covers its runs.',
    ...checkLines,
    '   sim / bare = the ratio of the rates of each repetition (simulator and bare run back to back); server CPU = CPU time / wall',
    '   time of the server process (100 % = one core); CPU/request = its CPU time per answered request, and "CPU bare / sim" the',
    '   ratio it predicts for a server that has a core to itself (less sensitive than the rates to what else runs on the machine).',
    "   p50/p99 come from every response time autocannon measured (fractional ms); autocannon's own percentiles are whole",
    "   milliseconds. autocannon spends each connection's per-second quota at full speed at the start of each second, so these",
    '   latencies are those of bursts at up to full speed, averaging half the maximum rate — not of evenly spaced requests.',
    '   The simulator runs compiled (dist/, as `keysim serve` runs) when `npm run build` has been run; the bare server through tsx.',
    `   Section time: ${secondsSince(started).toFixed(0)} s.`,
  ].join('\n');
  if (failures.length > 0) throw new Error(`wrong answers during the HTTP benchmark:\n${failures.join('\n')}\n\n${text}`);
  return { text, summary };
}

function describeChecks(r: RunResult): string {
  return `${r.generator}: completed ${r.completed}, 2xx ${r.ok2xx}, non-2xx ${r.non2xx}, errors ${r.errors}, timeouts ${r.timeouts}, wrong content ${r.mismatches}`;
}
