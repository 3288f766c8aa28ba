/**
 * What a scenario is (one typed module per file in `scenarios/`): the fixtures it makes through
 * the public API, its load phases, a weighted request mix with per-response checks, end-of-run
 * checks, default thresholds, and whether it needs the simulator's clock.
 */
import type { Random } from '../engine/index.js';
import type { CheckResult, OperationStats, RunReport } from '../report/model.js';
import type { Stage } from './stages.js';

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
}

/** The target's public API, for fixtures and end-of-run checks (not for the measured load). */
export interface ServiceApi {
  /** POST /v2/<op> with the root key (or none with `{ auth: 'none' }`); never throws on an HTTP error status. */
  call(op: Operation, body: unknown, options?: { auth?: 'root' | 'none' }): Promise<ApiResponse>;
  /** Like `call`, but throws an error naming the operation and the service's detail unless 200; returns `data`. */
  data<T = unknown>(op: Operation, body: unknown): Promise<T>;
}

/** The simulator's admin surface (`/_sim/*`); only on the simulator. */
export interface SimulatorAdmin {
  clockNow(): Promise<number>;
  /** 'manual' (frozen until moved, the embedded simulator's) or 'system' (real time plus an offset). */
  clockMode(): Promise<'manual' | 'system'>;
  /** Moves the service clock to an instant (Unix ms or ISO-8601); never backwards. */
  clockSet(to: number | string): Promise<number>;
  clockAdvance(byMs: number): Promise<number>;
  createNamespace(name: string): Promise<string>;
  deleteNamespace(name: string): Promise<void>;
}

/** The load settings of a run, as its report records them (rate, connections, durations …). */
export type LoadSettings = RunReport['settings'];

export interface ScenarioContext {
  api: ServiceApi;
  /** Present only when the target is the simulator. */
  admin: SimulatorAdmin | undefined;
  target: { kind: 'simulator' | 'live'; url: string };
  /** Seeded: the same seed gives the same fixtures and the same request sequence. */
  random: Random;
  /**
   * Prefix for the names of everything the scenario creates (`keysim-<run id>`), so that it can be
   * recognised on a live deployment. Use it in API names, externalIds, identifiers, namespaces.
   */
  tag: string;
  settings: LoadSettings;
  /** A line for the run's log (never a secret). */
  log(message: string): void;
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

export interface MixEntry<F> {
  /** Shown in reports when several entries use one operation; default the operation. */
  name?: string;
  weight: number;
  build(fixtures: F, random: Random): RequestSpec;
  /** Per-response check: return a message when the answer is wrong, undefined when it is right. */
  check?(response: ApiResponse, fixtures: F): string | undefined;
}

export interface PhaseSpec<F> {
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
   * than the service clock when the phase starts, and the clock ends exactly at `toMs`.
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

export interface Scenario<F = unknown> {
  name: string;
  /** One line for `keysim list`. */
  description: string;
  /** 'clock': moves the service clock, so it runs only on the simulator. */
  requires?: ReadonlyArray<'clock'>;
  /** Defaults for this scenario, overridden by flags. */
  defaults?: Partial<Pick<LoadSettings, 'rate' | 'durationMs' | 'warmupMs' | 'connections' | 'model' | 'startRate' | 'stages'>>;
  setup(ctx: ScenarioContext): Promise<F>;
  /**
   * For fixtures that are not plain data (a Map, a function): how they cross processes when one
   * set-up is shared by segments (docs/distributed.md#set-up-once) — `save` makes them plain JSON
   * data, `load` rebuilds them. Absent: the fixtures must be plain data themselves.
   */
  sharedFixtures?: { save(fixtures: F): unknown; load(data: unknown): F };
  mix: ReadonlyArray<MixEntry<F>>;
  /** Default: a warm-up phase of settings.warmupMs, then one phase of settings.durationMs. */
  phases?(ctx: ScenarioContext, fixtures: F): ReadonlyArray<PhaseSpec<F>>;
  /** End-of-run checks (e.g. the exact VALID count), after the load, before cleanup. */
  finish?(ctx: ScenarioContext, fixtures: F, results: RunResults): Promise<CheckResult[]>;
  /** Default thresholds, e.g. `errors == 0`; --threshold adds to them. */
  thresholds?: readonly string[];
}

/** Types a scenario module: `export default defineScenario({ … })` keeps F inferred. */
export function defineScenario<F>(scenario: Scenario<F>): Scenario<F> {
  return scenario;
}
