/**
 * The run report: one value from which every rendering (JSON, Markdown, HTML) is a pure
 * function. Versioned: a reader checks `schema` and `version` before trusting the rest.
 * Latencies are in milliseconds (fractional); histograms are HDR histograms of microseconds,
 * encoded as compressed base64 so that runs can be merged.
 */

import type { InvariantsSection } from './model-invariants.js';
import type { MergeSection } from './model-merge.js';
import type { Measure } from './model-measures.js';

export type {
  InvariantResult,
  InvariantViolation,
  InvariantsSection,
  OracleDifference,
  OracleSection,
  PromisesSection,
  WitnessOperation,
} from './model-invariants.js';
export type { MergeSection } from './model-merge.js';
export type { Measure, MeasureUnit } from './model-measures.js';

export const REPORT_SCHEMA = 'keysim-run-report';
/**
 * The version this keysim writes. Version 2 added the optional `invariants` section, and the
 * optional `cutOff` counts (of operations and totals; absent from reports written before them),
 * and later the optional `generator` section, thresholds' optional `inconclusive` flag, the
 * optional `resources` section, `target.remote`, the optional `p95` of every percentile summary
 * and operations' optional `onTime` latency (additive: older version-2 reports lack them,
 * and a keysim that predates them ignores them).
 */
export const REPORT_VERSION = 2;
/** The versions this keysim reads: a version-1 report is a version-2 report without `invariants` or `cutOff`. */
export const READABLE_REPORT_VERSIONS = [1, REPORT_VERSION] as const;
export type ReportVersion = (typeof READABLE_REPORT_VERSIONS)[number];

export interface Percentiles {
  p50: number;
  p90: number;
  /** Absent from reports written before keysim read it (read them as: not measured). */
  p95?: number;
  p99: number;
  p999: number;
  max: number;
  mean: number;
  /** Number of samples. */
  count: number;
}

export const TRANSPORT_ERROR_KINDS = ['timeout', 'reset', 'refused', 'other'] as const;
export type TransportErrorKind = (typeof TRANSPORT_ERROR_KINDS)[number];

export interface OperationStats {
  /** e.g. `keys.verifyKey`. */
  operation: string;
  /** Requests completed in the measured part of the run (warm-up excluded), errors included; not `cutOff`. */
  requests: number;
  ratePerSec: number;
  latency: {
    /**
     * Open model: from the intended send time (coordinated-omission corrected). The closed model has
     * no intended send times: there it is measured from the actual send, the same as `uncorrected`,
     * and is not corrected (readers label it "latency", never "corrected").
     */
    corrected: Percentiles;
    /** From the actual send time (what most load tools show). */
    uncorrected: Percentiles;
  };
  /** HDR histograms of microseconds, compressed base64 (HdrHistogram V2 encoding), mergeable: docs/outputs.md#encoded-histograms. */
  histograms: { corrected: string; uncorrected: string };
  /**
   * The corrected latency of the answered sends the generator started on time (not late: within
   * `totals.lateThresholdMs` of their intended time), with its histogram. When the generator could
   * not keep its schedule, a failing latency threshold is judged again over these: what still fails
   * there is the service's doing (docs/live.md#the-busy-machine-verdict). In the closed model (no
   * schedule) every send is on time. Absent from reports written before keysim kept it.
   */
  onTime?: { latency: Percentiles; histogram: string };
  /** HTTP status → count (`"200": 991`). */
  statuses: Record<string, number>;
  /** Verification codes (VALID, USAGE_EXCEEDED, …) for keys.verifyKey. */
  codes: Record<string, number>;
  /** ratelimit.limit / multiLimit outcomes. */
  ratelimit: { allowed: number; denied: number };
  transportErrors: Record<TransportErrorKind, number>;
  /**
   * Requests sent whose answer was abandoned when a closed-model phase ended (measured phases
   * only): the service may or may not have executed them. Neither in `requests` nor an error.
   * Always 0 in the open model, which waits for the answers in flight. Absent from reports
   * written before keysim counted them (version 1): not counted there, which is not 0.
   */
  cutOff?: number;
  /** Responses that failed the scenario's per-response check. */
  checkFailures: number;
}

export interface TimelinePoint {
  /** Seconds since the start of the measured part. */
  second: number;
  requests: number;
  errors: number;
  p50Ms: number;
  p99Ms: number;
  /**
   * The same second per operation, with its latency histogram: what per-second series, block
   * bootstraps and merges of several runs work from. Absent from reports written before keysim
   * kept it.
   */
  operations?: TimelineOperation[];
}

/** One operation's figures in one second of the measured part (latency from the intended send). */
export interface TimelineOperation {
  operation: string;
  /** Completed in this second (answered or failed in transport). */
  requests: number;
  errors: number;
  latency: Percentiles;
  /** The second's corrected-latency HDR histogram of microseconds, compressed base64, mergeable. */
  histogram: string;
}

export interface CheckResult {
  name: string;
  passed: boolean;
  detail: string;
  /**
   * The raw counts behind a counting check (the per-response checks): answers that failed it, of
   * how many. Merging segments sums them. Absent from checks that count nothing.
   */
  counts?: {
    failed: number;
    total: number;
    /** Of `total`, the requests that got no answer: neither passed nor failed their check (absent: 0). */
    unanswered?: number;
  };
  /** The service rules (docs/checking.md#rules) this check judges, by id; absent: not named. */
  rules?: string[];
}

export interface ThresholdResult {
  /** As written, e.g. `p99(keys.verifyKey) < 20ms`. */
  expression: string;
  /** False when it failed, and when it is inconclusive. */
  passed: boolean;
  /**
   * True when it could not be judged because the load generator could not keep its schedule
   * (`generator.limited`) and its lag could explain the verdict: a latency threshold that fails as
   * measured but passes over the sends made on time with the generator's own delay allowed for, or
   * a throughput threshold that fails. A threshold lag could only have made worse that passes is
   * passed, and one that fails over the on-time sends too is failed (`detail` says which evidence
   * decided). An inconclusive threshold is not a failed one. Absent (false) otherwise.
   */
  inconclusive?: boolean;
  /** The measured value the expression compared (ms for latencies), null when there was no data. */
  actual: number | null;
  detail: string;
}

/** One stage of a ramping arrival rate: the rate goes linearly to `target` req/s over `durationMs`. */
export interface StageReport {
  durationMs: number;
  target: number;
}

export interface PhaseReport {
  name: string;
  /** Offset from the run's start, ms. */
  startMs: number;
  durationMs: number;
  /** Intended requests per second (open model; a staged phase: its mean) or connections (closed model). */
  rate: number;
  warmup: boolean;
  /** A phase that ramped its rate: the rate it started from and its stages. Absent: a constant rate. */
  startRate?: number;
  stages?: StageReport[];
  /** Service clock at the phase's start and end (simulator only). */
  serviceClockFrom?: string;
  serviceClockTo?: string;
}

/** The load generator's own figures over one measured phase: did it keep its schedule? */
export interface GeneratorPhase {
  name: string;
  /**
   * Sends the open model planned in the phase that came due (all of them, unless the run was
   * stopped: the sends a Ctrl-C left undue are not counted); null in the closed model (it has no
   * schedule). The late share is `lateSends / scheduledSends`.
   */
  scheduledSends: number | null;
  /** Of those, sends started more than `totals.lateThresholdMs` after their intended time; null in the closed model. */
  lateSends: number | null;
  /** The generator's event-loop delay (perf_hooks.monitorEventLoopDelay), ms beyond the sampling interval. */
  loopDelayMs: { p50: number; p99: number; max: number };
  /**
   * CPU time of the whole keysim process over the phase's wall time, in cores (1 = one core busy).
   * Includes the embedded simulator, which runs in a worker thread of the same process.
   */
  processCpuCores: number;
  /**
   * Share of the phase's wall time the generator's own (main) thread was busy, 0..1
   * (performance.eventLoopUtilization): near 1, it could not take on more.
   */
  mainThreadBusy: number;
}

/**
 * Whether the load generator kept its schedule. When it did not (`limited`), the report carries a
 * banner, and a latency or throughput threshold its lag could explain is inconclusive (keysim
 * exits 97 when one is and nothing failed); thresholds its lag cannot explain are still judged.
 */
export interface GeneratorSection {
  /** True when any measured phase went over a limit. */
  limited: boolean;
  /** Why, one sentence per limit exceeded (empty when not limited). */
  reasons: string[];
  /** The limits the figures were judged against. */
  limits: {
    /** Limited when more than this share of a phase's scheduled sends were late (open model). */
    lateShare: number;
    /** Limited when a phase's event-loop delay p99 exceeded this, ms. */
    loopDelayP99Ms: number;
  };
  /** One entry per measured phase (warm-up excluded). */
  phases: GeneratorPhase[];
  /** The machine's 1-minute load average at the end of the run (0 where the platform has none), beside `environment.cpus`. */
  loadAverage: number;
}

/** What a run created on its target of one kind, what it deleted, and what it left. */
export interface ResourceCount {
  kind: 'apis' | 'keys' | 'identities' | 'overrides' | 'namespaces';
  created: number;
  deleted: number;
  /** Still on the target after the run (or of unknown fate: a failed delete). */
  left: number;
  /** Of `left`, those left on purpose or of necessity: --keep, no delete operation, a discarded simulator. */
  leftExpected: number;
}

/** The resources a run created on its target: its accounting and the cleanup's outcome. */
export interface ResourcesSection {
  /** The run's tag: the names, externalIds and identifiers of what it created start with it. */
  tag: string;
  /** cleaned: deleted at the end; kept: --keep; discarded: the embedded simulator, gone with the run. */
  disposal: 'cleaned' | 'kept' | 'discarded';
  kinds: ResourceCount[];
  /** Resources left that should not have been (exit code 95). */
  unexpectedlyLeft: number;
  /** The command that deletes what is left, when something is left on a target that outlives the run. */
  cleanupCommand?: string;
  /** Failed deletes and other things a reader should know. */
  notes: string[];
}

/** A rule of the service (docs/checking.md#rules), as a report names it. */
export interface RuleRef {
  id: string;
  title: string;
}

/**
 * What a run covered: "rules exercised N of M". `exercised`: declared by the scenario and judged
 * by at least one item of its checks or of the invariant checkers; `notJudged`: declared, but
 * everything that would judge them was not judged (answers that never came, checks skipped);
 * `untouched`: not declared. Reports written before keysim judged coverage have no `notJudged`,
 * and their `exercised` is what the scenario declared.
 */
export interface RulesSection {
  total: number;
  exercised: RuleRef[];
  notJudged?: RuleRef[];
  untouched: RuleRef[];
}

export interface RunReport {
  schema: typeof REPORT_SCHEMA;
  /** Version 1 reports (read, never written) have no `invariants`. */
  version: ReportVersion;
  scenario: { name: string; description: string };
  /** completed; interrupted (SIGINT: partial figures); failed (the run could not go on). */
  status: 'completed' | 'interrupted' | 'failed';
  seed: number;
  startedAt: string;
  finishedAt: string;
  /** Wall time of the measured part (warm-up excluded), ms. */
  measuredMs: number;
  /** Where the load went. Never credentials: the URL has no user info, the root key is absent. */
  target: {
    kind: 'simulator' | 'live';
    url: string;
    /** A simulator (keysim serve) reached over a URL, rather than the embedded one. Absent: not remote. */
    remote?: boolean;
  };
  settings: {
    model: 'open' | 'closed';
    /** Open model: intended requests/s. */
    rate: number;
    connections: number;
    pipelining: number;
    durationMs: number;
    warmupMs: number;
    timeoutMs: number;
    /**
     * The run's stages (open model): its measured phases ramp the arrival rate through them,
     * starting from `startRate`; `durationMs` is then their total. Absent: a constant `rate`.
     */
    startRate?: number;
    stages?: StageReport[];
  };
  environment: {
    keysimVersion: string;
    node: string;
    platform: string;
    arch: string;
    cpus: number;
    cpuModel: string;
    totalMemoryBytes: number;
  };
  phases: PhaseReport[];
  totals: {
    requests: number;
    /** Transport errors + HTTP 5xx + unexpected 4xx counted by the scenario. */
    errors: number;
    /** Requests cut off at the end of a closed-model phase, all operations (see OperationStats.cutOff). */
    cutOff?: number;
    ratePerSec: number;
    /** Sends the generator started more than `lateThresholdMs` after their intended time. */
    late: number;
    lateThresholdMs: number;
    /** Planned sends never made (queue bound reached, or the run was stopped). */
    dropped: number;
  };
  /** All operations merged. */
  overall: OperationStats;
  operations: OperationStats[];
  timeline: TimelinePoint[];
  checks: CheckResult[];
  thresholds: ThresholdResult[];
  /** The history invariants' verdict; absent when no history was recorded. */
  invariants?: InvariantsSection;
  /**
   * The load generator's own figures and whether it kept its schedule. Absent from reports
   * written before keysim measured itself (read as: not judged).
   */
  generator?: GeneratorSection;
  /** What the run created on its target, deleted and left; absent from reports written before keysim counted it. */
  resources?: ResourcesSection;
  /**
   * A partial report: this run sent segment `index` of `count` of the plan (`--segment i/N`);
   * `keysim merge` combines the segments' reports into one. Absent: the whole plan.
   */
  segment?: { index: number; count: number };
  /** A report merged from segments' partial reports (`keysim merge`); absent otherwise. */
  merge?: MergeSection;
  /** The service's rules the scenario exercised and those it never touched; absent from older reports. */
  rules?: RulesSection;
  /** Figures measured against the target's promises (model-measures.ts); absent when none was measured. */
  measures?: Measure[];
  /** Things a reader should know: skipped phases, clock moves, warnings. */
  notes: string[];
}
