/**
 * A small stand-in for the load runner, to test scenarios against a real simulator: setup, then
 * for each phase before() and a bounded number of requests built from the phase's mix (a few in
 * flight at once, each answer checked), then finish() with RunResults assembled from our own
 * counters (latencies zero), then the registered cleanups in reverse order.
 */
import { Random } from '../../src/engine/index.js';
import { weightedPicker } from '../../src/load/scenario/distributions.js';
import { MeasureCollector } from '../../src/load/scenario/scenario-measures.js';
import type { LoadSettings, MixEntry, PhaseSpec, RunResults, Scenario, ScenarioContext } from '../../src/load/scenario/scenario.js';
import { httpJsonClient, serviceApi, simulatorAdmin } from '../../src/load/target/service-api.js';
import type { CheckResult, Measure, OperationStats, Percentiles } from '../../src/report/model.js';
import type { Simulator } from '../../src/http/simulator.js';
import { type PromiseSet, promiseSet } from '../../src/load/promises/index.js';

export interface HarnessOptions {
  /** Overrides the scenario's defaults, which override the harness's base settings. */
  settings?: Partial<LoadSettings>;
  /** Requests sent per phase: min(planned, this); the rest count as dropped. Default 40. */
  maxRequestsPerPhase?: number;
  /** Requests in flight at once. Default 4. */
  concurrency?: number;
  seed?: number;
  tag?: string;
  /** Present the simulator as a live target: no admin surface, target kind 'live'. */
  live?: boolean;
  /** The promise set the scenario's checks judge against (default exact). */
  promises?: PromiseSet;
  /** Runs after a phase's load, before the next phase's before() (negative tests: disturb the service). */
  afterPhase?: (phase: string, ctx: ScenarioContext, fixtures: unknown) => Promise<void>;
  /** Edits the results before finish() sees them (negative tests). */
  editResults?: (results: MutableResults) => void;
}

export interface PhaseRecord {
  name: string;
  warmup: boolean;
  durationMs: number;
  planned: number;
  sent: number;
}

export interface HarnessRun<F> {
  fixtures: F;
  settings: LoadSettings;
  phases: PhaseRecord[];
  /** Failed per-response checks, as `<phase> <entry>: <message>`. */
  checkFailures: string[];
  /** Answers checked, per mix entry name. */
  answered: Map<string, number>;
  finishChecks: CheckResult[];
  cleanupsRun: number;
  cleanupErrors: string[];
  logs: string[];
  results: RunResults;
  /** What the scenario reported with ctx.measure, summarised as the runner does. */
  measures: Measure[];
}

const BASE_SETTINGS: LoadSettings = {
  rate: 100,
  connections: 4,
  pipelining: 1,
  durationMs: 2_000,
  warmupMs: 500,
  timeoutMs: 10_000,
  model: 'open',
};

const ZERO_PERCENTILES: Percentiles = { p50: 0, p90: 0, p99: 0, p999: 0, max: 0, mean: 0, count: 0 };

function emptyStats(operation: string): OperationStats {
  return {
    operation,
    requests: 0,
    ratePerSec: 0,
    latency: { corrected: { ...ZERO_PERCENTILES }, uncorrected: { ...ZERO_PERCENTILES } },
    histograms: { corrected: '', uncorrected: '' },
    statuses: {},
    codes: {},
    ratelimit: { allowed: 0, denied: 0 },
    transportErrors: { timeout: 0, reset: 0, refused: 0, other: 0 },
    checkFailures: 0,
  };
}

export interface MutableResults {
  operations: OperationStats[];
  overall: OperationStats;
  totals: RunResults['totals'];
}

function bump(record: Record<string, number>, key: string): void {
  record[key] = (record[key] ?? 0) + 1;
}

/** Records one answer like the runner's recorder does (the outcome fields of docs/checking.md#histories). */
function record(stats: OperationStats, status: number | undefined, body: unknown, checkFailed: boolean): void {
  stats.requests++;
  if (checkFailed) stats.checkFailures++;
  if (status === undefined) {
    stats.transportErrors.other++;
    return;
  }
  bump(stats.statuses, String(status));
  const data = typeof body === 'object' && body !== null ? (body as { data?: unknown }).data : undefined;
  if (typeof data !== 'object' || data === null) return;
  const d = data as Record<string, unknown>;
  if (stats.operation === 'keys.verifyKey' && typeof d.code === 'string') bump(stats.codes, d.code);
  if (stats.operation === 'ratelimit.limit' && typeof d.success === 'boolean') stats.ratelimit[d.success ? 'allowed' : 'denied']++;
  if (stats.operation === 'ratelimit.multiLimit' && typeof d.passed === 'boolean') stats.ratelimit[d.passed ? 'allowed' : 'denied']++;
}

function merge(all: readonly OperationStats[]): OperationStats {
  const overall = emptyStats('all');
  for (const s of all) {
    overall.requests += s.requests;
    overall.checkFailures += s.checkFailures;
    overall.ratelimit.allowed += s.ratelimit.allowed;
    overall.ratelimit.denied += s.ratelimit.denied;
    for (const [k, v] of Object.entries(s.statuses)) overall.statuses[k] = (overall.statuses[k] ?? 0) + v;
    for (const [k, v] of Object.entries(s.codes)) overall.codes[k] = (overall.codes[k] ?? 0) + v;
    for (const k of ['timeout', 'reset', 'refused', 'other'] as const) overall.transportErrors[k] += s.transportErrors[k];
  }
  return overall;
}

/** Settings a run of `scenario` gets with `options`. */
export function settingsFor(scenario: Scenario<unknown>, options: HarnessOptions = {}): LoadSettings {
  return { ...BASE_SETTINGS, ...scenario.defaults, ...options.settings };
}

/** The phases the runner would run: the scenario's own, or a warm-up then one measured phase. */
export function phasesOf<F>(scenario: Scenario<F>, ctx: ScenarioContext, fixtures: F): ReadonlyArray<PhaseSpec<F>> {
  if (scenario.phases !== undefined) return scenario.phases(ctx, fixtures);
  const phases: PhaseSpec<F>[] = [];
  if (ctx.settings.warmupMs > 0) phases.push({ name: 'warm-up', durationMs: ctx.settings.warmupMs, warmup: true });
  phases.push({ name: 'main', durationMs: ctx.settings.durationMs });
  return phases;
}

let runCounter = 0;

export async function runScenario<F>(scenario: Scenario<F>, sim: Simulator, options: HarnessOptions = {}): Promise<HarnessRun<F>> {
  const settings = settingsFor(scenario as Scenario<unknown>, options);
  const client = httpJsonClient({ url: sim.url, rootKey: sim.rootKey });
  const logs: string[] = [];
  const cleanups: Array<() => Promise<void>> = [];
  const measures = new MeasureCollector();
  const seed = options.seed ?? 42;
  const ctx: ScenarioContext = {
    api: serviceApi(client),
    admin: options.live === true ? undefined : simulatorAdmin(client),
    target: { kind: options.live === true ? 'live' : 'simulator', url: sim.url },
    random: new Random(seed),
    tag: options.tag ?? `keysim-t${process.pid}x${++runCounter}`,
    settings,
    promises: options.promises ?? promiseSet('exact'),
    log: (message) => logs.push(message),
    onCleanup: (fn) => cleanups.push(fn),
    measure: (spec, value) => measures.record(spec, value),
  };
  const maxPerPhase = options.maxRequestsPerPhase ?? 40;
  const concurrency = options.concurrency ?? 4;
  const buildRandom = new Random(seed + 1);
  const stats = new Map<string, OperationStats>();
  const checkFailures: string[] = [];
  const answered = new Map<string, number>();
  const phaseRecords: PhaseRecord[] = [];
  let dropped = 0;
  let fixtures: F | undefined;
  let finishChecks: CheckResult[];
  let results: RunResults | undefined;
  const cleanupErrors: string[] = [];

  try {
    fixtures = await scenario.setup(ctx);
    const f = fixtures;
    for (const phase of phasesOf(scenario, ctx, f)) {
      await phase.before?.(ctx, f);
      const mix: ReadonlyArray<MixEntry<F>> = phase.mix ?? scenario.mix;
      const pick = weightedPicker(mix);
      // Built-in scenarios give every phase a duration; a staged phase would last the run's.
      const durationMs = phase.durationMs ?? settings.durationMs;
      const planned = Math.round(((phase.rate ?? settings.rate) * durationMs) / 1000);
      const sent = Math.min(planned, maxPerPhase);
      dropped += planned - sent;
      phaseRecords.push({ name: phase.name, warmup: phase.warmup === true, durationMs, planned, sent });
      let next = 0;
      const worker = async () => {
        while (next < sent) {
          next++;
          const entry = pick(buildRandom);
          const spec = entry.build(f, buildRandom);
          const label = entry.name ?? spec.op;
          let status: number | undefined;
          let body: unknown;
          try {
            ({ status, body } = await client.post(`/v2/${spec.op}`, spec.body, spec.auth ?? 'root'));
          } catch {
            status = undefined;
          }
          let failure: string | undefined;
          if (status !== undefined) {
            failure = entry.check?.({ status, body }, f);
            answered.set(label, (answered.get(label) ?? 0) + 1);
            if (failure !== undefined) checkFailures.push(`${phase.name} ${label}: ${failure}`);
          }
          // Like the runner, the figures leave the warm-up out (its answers are still checked).
          if (phase.warmup === true) continue;
          let s = stats.get(spec.op);
          if (s === undefined) stats.set(spec.op, (s = emptyStats(spec.op)));
          record(s, status, body, failure !== undefined);
        }
      };
      await Promise.all(Array.from({ length: concurrency }, worker));
      await options.afterPhase?.(phase.name, ctx, f);
    }
    const operations = [...stats.values()];
    const overall = merge(operations);
    const mutable: MutableResults = {
      operations,
      overall,
      totals: {
        requests: overall.requests,
        errors: Object.entries(overall.statuses).reduce((n, [status, count]) => n + (Number(status) >= 500 ? count : 0), 0) + overall.transportErrors.other,
        ratePerSec: 0,
        late: 0,
        lateThresholdMs: 10,
        dropped,
      },
    };
    options.editResults?.(mutable);
    const frozen: RunResults = {
      operations: mutable.operations,
      overall: mutable.overall,
      totals: mutable.totals,
      operation: (op) => mutable.operations.find((s) => s.operation === op),
    };
    results = frozen;
    finishChecks = (await scenario.finish?.(ctx, f, frozen)) ?? [];
  } finally {
    for (const cleanup of [...cleanups].reverse()) {
      try {
        await cleanup();
      } catch (error) {
        cleanupErrors.push(error instanceof Error ? error.message : String(error));
      }
    }
    await client.close();
  }
  return {
    fixtures: fixtures as F,
    settings,
    phases: phaseRecords,
    checkFailures,
    answered,
    finishChecks,
    cleanupsRun: cleanups.length,
    cleanupErrors,
    logs,
    results: results as RunResults,
    measures: measures.measures(),
  };
}
