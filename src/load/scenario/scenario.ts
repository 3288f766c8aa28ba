/**
 * What a scenario is (a built-in in `scenarios/`, or a file of the user's project run with
 * `keysim run ./file.ts`; docs/scenarios.md): the fixtures it makes through
 * the public API, its load phases, a weighted request mix with per-response checks, end-of-run
 * checks, default thresholds, and whether it needs the simulator's clock.
 */
import type { Random } from '../../engine/index.js';
import type { CheckResult, MeasureUnit, OperationStats, RunReport } from '../../report/model.js';
import type { Stage } from '../plan/index.js';
import type { PromiseSet } from '../promises/index.js';

/** The v2 operations a scenario may call (POST /v2/<operation>). */
export const OPERATIONS = [
  'apis.createApi',
  'keys.createKey',
  'keys.getKey',
  'keys.updateKey',
  'keys.deleteKey',
  'keys.verifyKey',
  'keys.updateCredits',
  'identities.createIdentity',
  'identities.getIdentity',
  'identities.listIdentities',
  'identities.updateIdentity',
  'identities.deleteIdentity',
  'ratelimit.limit',
  'ratelimit.multiLimit',
  'ratelimit.setOverride',
  'ratelimit.getOverride',
  'ratelimit.listOverrides',
  'ratelimit.deleteOverride',
] as const;
export type Operation = (typeof OPERATIONS)[number];

/** An answer of the service: HTTP status and the parsed JSON body (undefined if not JSON). */
export interface ApiResponse {
  status: number;
  body: unknown;
  /** The region that answered (its `x-keysim-region` header), when the target names one. */
  region?: string;
}

/** The target's public API, for fixtures and end-of-run checks (not for the measured load). */
export interface ServiceApi {
  /**
   * POST /v2/<op> with the root key (or none with `{ auth: 'none' }`); never throws on an HTTP error
   * status. `headers`: extra request headers, e.g. `X-Keysim-Region: 2` to run it in one region of
   * the simulator's production profile.
   */
  call(op: Operation, body: unknown, options?: { auth?: 'root' | 'none'; headers?: Record<string, string> }): Promise<ApiResponse>;
  /** Like `call`, but throws an error naming the operation and the service's detail unless 200; returns `data`. */
  data<T = unknown>(op: Operation, body: unknown): Promise<T>;
}

/** The simulator's admin surface (`/_sim/*`); only on the simulator. */
export interface SimulatorAdmin {
  /** The service clock, Unix ms. */
  clockNow(): Promise<number>;
  /** 'manual' (frozen until moved, the embedded simulator's) or 'system' (real time plus an offset). */
  clockMode(): Promise<'manual' | 'system'>;
  /** Moves the service clock to an instant (Unix ms or ISO-8601) and returns it; throws when that is backwards. */
  clockSet(to: number | string): Promise<number>;
  /** Moves the service clock forward by `byMs` (≥ 0) and returns its new value, Unix ms. */
  clockAdvance(byMs: number): Promise<number>;
  /** Creates a rate-limit namespace (the public API has no operation for it); returns its name. */
  createNamespace(name: string): Promise<string>;
  /** Deletes a rate-limit namespace made with createNamespace. */
  deleteNamespace(name: string): Promise<void>;
}

/** What a measure is (`ctx.measure`, scenario-measures.ts), as a scenario declares it with each sample. */
export interface MeasureSpec {
  /** Dotted, of the families lag., ratelimit., credits. (e.g. `lag.credits`); thresholds name it. */
  name: string;
  /** What it measures, in a short sentence. */
  title: string;
  unit: MeasureUnit;
  /** What the promise set in force allows, in the same unit (e.g. `ctx.promises.creditTtlMs`); absent: no promise covers it. */
  promise?: number;
}

/** The load settings of a run, as its report records them (rate, connections, durations …). */
export type LoadSettings = RunReport['settings'];

/** What a scenario's functions are given: the target's API, the run's tag, seeded randomness, settings. */
export interface ScenarioContext {
  /** The target's public API, with the root key. */
  api: ServiceApi;
  /**
   * The simulator's admin surface (the clock, namespaces); undefined on a live target.
   * `requireAdmin(ctx)` returns it or throws a message saying why there is none.
   */
  admin: SimulatorAdmin | undefined;
  /**
   * 'simulator': the embedded one or a keysim serve; 'live': a deployment of the service. `ca`: the
   * PEM certificates an https target is trusted with (--ca), for a scenario that asks the target
   * over keysim's own client (http1/client.ts) besides `api`, e.g. to read its Date header.
   */
  target: { kind: 'simulator' | 'live'; url: string; ca?: string | undefined };
  /** Seeded: the same seed gives the same fixtures and the same request sequence. */
  random: Random;
  /**
   * Prefix for the names of everything the scenario creates (`keysim-<run id>`), so that it can be
   * recognised on a live deployment. Use it in API names, externalIds, identifiers, namespaces.
   */
  tag: string;
  /** The run's load settings (rate in requests/s, durations in ms …) after flags and defaults. */
  settings: LoadSettings;
  /**
   * The promise set the run judges the target against (`--consistency`, docs/consistency.md):
   * `exact` by default. A scenario's own checks that count credits or admissions judge within its
   * bounds, as the invariant checkers do, so that one run gets one verdict.
   */
  promises: PromiseSet;
  /** A line for the run's log (never a secret). */
  log(message: string): void;
  /**
   * One sample of a measure (docs/scenarios.md#measures): a figure measured against a promise,
   * e.g. `ctx.measure({ name: 'lag.credits', title: '…', unit: 'ms', promise: ctx.promises.creditTtlMs }, 11_000)`.
   * `value` undefined: it could not be measured (an answer that never came), counted as unknown.
   * The report summarises the samples per name (count, p50, p95, max) and thresholds name them
   * (`p95(lag.credits) < 60s`). The name is dotted, of the families `lag.`, `ratelimit.`, `credits.`;
   * a name of another shape, or a unit or promise other than the name's first sample's, throws.
   */
  measure(spec: MeasureSpec, value: number | undefined): void;
  /**
   * Registers the deletion of something created: run at the end (before the history closes, even
   * after a failure) on a target that outlives the run — live, or a remote simulator — unless --keep.
   */
  onCleanup(fn: () => Promise<void>): void;
}

/** One request of the load. */
export interface RequestSpec {
  op: Operation;
  body: unknown;
  /** 'root' (default): Authorization with the root key; 'none': no Authorization header. */
  auth?: 'root' | 'none';
}

/** One entry of a weighted request mix, typed by the scenario's fixtures F. */
export interface MixEntry<F> {
  /** Shown in reports when several entries use one operation; default the operation. */
  name?: string;
  /** Relative weight (> 0): an entry of weight 3 is sent three times as often as one of weight 1. */
  weight: number;
  /** The request to send, from the fixtures and the run's seeded random. */
  build(fixtures: F, random: Random): RequestSpec;
  /** Per-response check: return a message when the answer is wrong, undefined when it is right. */
  check?(response: ApiResponse, fixtures: F): string | undefined;
  /**
   * The service rules (src/load/rules/rules.ts) this entry's check judges, by id: the report counts a
   * declared rule as exercised once such a check judged an answer of the service.
   */
  rules?: readonly string[];
}

/** One phase of the load. */
export interface PhaseSpec<F> {
  /** Shown in the report. */
  name: string;
  /** Required unless the phase has stages (its duration is then theirs) or follows the run's. */
  durationMs?: number;
  /**
   * Requests per second; default the run's rate — or, for a measured phase of a run with stages
   * (`--stage`, `defaults.stages`), the run's stages (docs/load-shapes.md#stages).
   */
  rate?: number;
  /** Open model: ramp the arrival rate through these stages, from `startRate` (default 0). */
  stages?: readonly Stage[];
  startRate?: number;
  /** Excluded from the figures. */
  warmup?: boolean;
  /** Default: the scenario's mix. */
  mix?: ReadonlyArray<MixEntry<F>>;
  /** Runs before the phase's load (e.g. moves the simulator's clock). */
  before?(ctx: ScenarioContext, fixtures: F): Promise<void>;
  /**
   * Load on simulated time: the service clock runs linearly from `fromMs` (at the phase's wall
   * start, after `before`) to `toMs` (at its planned end), both Unix ms, moved by the runner
   * through the simulator's admin surface — e.g. two hours around a month end in two seconds.
   * The phase's history brackets each request between the clock values around it. Simulator only
   * (declare `requires: ['clock']`; on a live target the run fails); `fromMs` must not be earlier
   * than the service clock when the phase starts, and the clock ends exactly at `toMs`. A sweep
   * before the clock the run starts with is refused before setup: set the scenario's
   * `clock.startAt` at or before the earliest `fromMs`.
   */
  serviceClock?: { fromMs: number; toMs: number };
}

/** What end-of-run checks see. */
export interface RunResults {
  operations: readonly OperationStats[];
  overall: OperationStats;
  totals: RunReport['totals'];
  /** Stats of one operation (undefined if it was never called). */
  operation(op: Operation): OperationStats | undefined;
}

/**
 * Where the service clock starts (simulator only): the embedded simulator is created at `startAt`;
 * a keysim serve's clock is moved there before setup (refused when it is already past it). A run
 * of such a scenario on a live target is refused at its start. Set it when fixtures must exist
 * before the instants the phases sweep (e.g. keys created before a month end, so that their
 * refills count from then, not from today).
 */
export interface ScenarioClock {
  /** An ISO-8601 instant (e.g. '2028-01-31T22:00:00Z') or Unix ms. */
  startAt: string | number;
}

/**
 * A scenario: fixtures made in `setup`, a weighted request `mix`, optional phases, end-of-run
 * checks and default thresholds. F is what `setup` returns, passed to everything after it.
 */
export interface Scenario<F = unknown> {
  /** Its name in reports and in `keysim list`; unique among the scenarios of one run. */
  name: string;
  /** One line for `keysim list`. */
  description: string;
  /** 'clock': moves the service clock, so it runs only on the simulator. */
  requires?: ReadonlyArray<'clock'>;
  /** Where the service clock starts; implies `requires: ['clock']`. */
  clock?: ScenarioClock;
  /**
   * The embedded simulator's clock during the run: 'frozen' (default) stands still unless a phase
   * moves it, so no window rolls and no refill falls due by itself; 'running' follows real time
   * from the run's start (production-like: windows roll, a refill falls due at its boundary). Not
   * with `requires: ['clock']` or `clock` (a running clock cannot be swept). A keysim serve or a
   * live deployment keeps its own clock.
   */
  clockMode?: 'frozen' | 'running';
  /**
   * The service rules (src/load/rules/rules.ts, docs/checking.md#rules) this scenario exercises and
   * judges, by id. The report lists each as exercised when the checks judging it judged at least
   * one item in the run (name them on entries and checks with `rules` to be precise), as not
   * judged otherwise.
   */
  rules?: readonly string[];
  /** Defaults for this scenario, overridden by flags. */
  defaults?: Partial<Pick<LoadSettings, 'rate' | 'durationMs' | 'warmupMs' | 'connections' | 'model' | 'startRate' | 'stages'>>;
  /** Makes the fixtures through `ctx.api` (register their deletion with `ctx.onCleanup`); a throw fails the run (exit 1). */
  setup(ctx: ScenarioContext): Promise<F>;
  /**
   * For fixtures that are not plain data (a Map, a function): how they cross processes when one
   * set-up is shared by segments (docs/distributed.md#set-up-once) — `save` makes them plain JSON
   * data, `load` rebuilds them. Absent: the fixtures must be plain data themselves.
   */
  sharedFixtures?: { save(fixtures: F): unknown; load(data: unknown): F };
  /** The default request mix (at least one entry). */
  mix: ReadonlyArray<MixEntry<F>>;
  /** Default: a warm-up phase of settings.warmupMs, then one phase of settings.durationMs. */
  phases?(ctx: ScenarioContext, fixtures: F): ReadonlyArray<PhaseSpec<F>>;
  /** End-of-run checks (e.g. the exact VALID count), after the load, before cleanup. */
  finish?(ctx: ScenarioContext, fixtures: F, results: RunResults): Promise<CheckResult[]>;
  /** Default thresholds, e.g. `errors == 0`; --threshold adds to them. */
  thresholds?: readonly string[];
}

/**
 * Types a scenario: `export default defineScenario({ … })` in a scenario file keeps the fixtures'
 * type F inferred from `setup`. Returns its argument unchanged; `keysim run` checks it when it loads the file.
 */
export function defineScenario<F>(scenario: Scenario<F>): Scenario<F> {
  return scenario;
}
