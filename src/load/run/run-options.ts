/**
 * What a run is given (RunOptions) and what it reports while it runs (ProgressSnapshot). Apart
 * from the runner so that its phase loop and report assembly share them without importing it back.
 */
import type { PromiseSet } from '../promises/index.js';
import type { LoadSettings, Scenario } from '../scenario/index.js';
import type { Target } from '../target/index.js';
import type { Threshold } from './thresholds.js';
import type { GeneratorLimits } from '../metrics/index.js';
import type { Segment } from '../plan/index.js';
import type { ResourceEntry } from '../resources/index.js';

/** A send that starts later than this after its intended time counts as late (the open model's figure). */
export const LATE_THRESHOLD_MS = 10;

export interface ProgressSnapshot {
  phase: string;
  elapsedMs: number;
  /** Planned duration of all phases, ms. */
  totalMs: number;
  requests: number;
  /** Completed requests per second over the last interval. */
  rps: number;
  p99Ms: number;
  errors: number;
}

export interface RunOptions {
  scenario: Scenario<unknown>;
  target: Target;
  settings: LoadSettings;
  seed: number;
  thresholds: readonly Threshold[];
  /** Keep what the scenario created on a live target. */
  keep: boolean;
  /** Aborting stops the load within ~2 s; the report is marked interrupted. */
  signal?: AbortSignal;
  /** Called about once a second during the load. */
  onProgress?: (progress: ProgressSnapshot) => void;
  /**
   * Told of every measured completion (warm-up excluded), as the report counts it: its corrected
   * latency in ms when answered, undefined after a transport error. Feeds `--metrics`.
   */
  onMeasured?: (operation: string, latencyMs: number | undefined, isError: boolean) => void;
  /** A line for the log (never a secret). */
  log?: (line: string) => void;
  /** A line that must be seen even when the log is silenced: what the run left on its target. */
  warn?: (line: string) => void;
  /**
   * The reports folder: on a target that outlives the run, the ledger of what it creates is
   * written under it (resources.ts, `keysim cleanup` reads it) until everything is deleted.
   */
  resourcesDir?: string;
  keysimVersion: string;
  /** For the run tag; default now. */
  now?: () => Date;
  /**
   * Record every call into this history file (history.jsonl.gz) and check the credit and
   * rate-limit invariants over it at the end (the report's invariants section).
   */
  historyPath?: string;
  /**
   * With a history on the simulator: replay the simulator's journal of the realised order through
   * a fresh engine and compare every answer (oracle.ts). Default true.
   */
  oracle?: boolean;
  /**
   * With a history on a live target: the bound on its clock's skew from ours, ms. Default:
   * measured from its Date headers before the run (clock-skew.ts).
   */
  wallSkewMs?: number;
  /**
   * End the run early when no request got an answer for this long while requests failed at the
   * transport level (dead-target.ts); ms. Undefined: fire until the planned end.
   */
  deadTargetMs?: number;
  /**
   * When the generator is judged not to have kept its schedule (the run is then inconclusive);
   * default DEFAULT_GENERATOR_LIMITS.
   */
  generatorLimits?: Partial<GeneratorLimits>;
  /**
   * Send only this segment's striped share of the plan (docs/distributed.md#segments); the report
   * is then a partial report, marked with the segment, that `keysim merge` combines.
   */
  segment?: Segment;
  /**
   * Start the load (its first phase, warm-up included) at this instant rather than right after the
   * set-up, so that segments on several processes or machines share one intended timeline.
   */
  startAt?: Date;
  /**
   * Fixtures made by an earlier set-up (`keysim run --setup-only`): the scenario's setup is skipped
   * and these are used; the cleanup is left to whoever made them.
   */
  fixtures?: SharedFixtures;
  /**
   * Set-up only (`keysim run --setup-only`): run the scenario's setup, hand its fixtures and the
   * run's tag to this function, and send no load. With keep, what the setup created is left for the
   * segments that use the fixtures, and deleted afterwards by tag; without, the function is awaited
   * (`run --workers` runs the segments in it) and the teardown follows it, once; the resources it
   * returns (what the segments' load created, handed back) are added to the ledger before it.
   */
  setupOnly?: (fixtures: SharedFixtures) => void | readonly ResourceEntry[] | Promise<void | readonly ResourceEntry[]>;
  /**
   * A segment of a shared set-up: where it writes what it leaves open at its end (its run folder's
   * resources.json, resource-handover.ts), for the one teardown after the last segment.
   */
  resourcesFile?: string;
  /** The promise set the invariants are judged against (docs/consistency.md); default exact. */
  promises?: PromiseSet;
}

/** What a set-up hands its segments. */
export interface SharedFixtures {
  /** What the scenario's setup returned (saved to plain data by its sharedFixtures.save). */
  value: unknown;
  /** The set-up's run tag. */
  tag: string;
  /** The keys the set-up created, as (SHA-256 of the key, key id) pairs, when it recorded a history. */
  keyIds?: Array<[string, string]>;
}
