/**
 * The run report: one value from which every rendering (JSON, Markdown, HTML) is a pure
 * function. Versioned: a reader checks `schema` and `version` before trusting the rest.
 * Latencies are in milliseconds (fractional); histograms are HDR histograms of microseconds,
 * encoded as compressed base64 so that runs can be merged.
 */

export const REPORT_SCHEMA = 'keysim-run-report';
export const REPORT_VERSION = 1;

export interface Percentiles {
  p50: number;
  p90: number;
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
  /** Requests completed in the measured part of the run (warm-up excluded), errors included. */
  requests: number;
  ratePerSec: number;
  latency: {
    /** From the intended send time (coordinated-omission corrected; open model). */
    corrected: Percentiles;
    /** From the actual send time (what most load tools show). */
    uncorrected: Percentiles;
  };
  /** HDR histograms of microseconds, compressed base64 (hdr-histogram-js), mergeable. */
  histograms: { corrected: string; uncorrected: string };
  /** HTTP status → count (`"200": 991`). */
  statuses: Record<string, number>;
  /** Verification codes (VALID, USAGE_EXCEEDED, …) for keys.verifyKey. */
  codes: Record<string, number>;
  /** ratelimit.limit / multiLimit outcomes. */
  ratelimit: { allowed: number; denied: number };
  transportErrors: Record<TransportErrorKind, number>;
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
}

export interface CheckResult {
  name: string;
  passed: boolean;
  detail: string;
}

export interface ThresholdResult {
  /** As written, e.g. `p99(keys.verifyKey) < 20ms`. */
  expression: string;
  passed: boolean;
  /** The measured value the expression compared (ms for latencies), null when there was no data. */
  actual: number | null;
  detail: string;
}

export interface PhaseReport {
  name: string;
  /** Offset from the run's start, ms. */
  startMs: number;
  durationMs: number;
  /** Intended requests per second (open model) or connections (closed model). */
  rate: number;
  warmup: boolean;
  /** Service clock at the phase's start and end (simulator only). */
  serviceClockFrom?: string;
  serviceClockTo?: string;
}

export interface RunReport {
  schema: typeof REPORT_SCHEMA;
  version: typeof REPORT_VERSION;
  scenario: { name: string; description: string };
  /** completed; interrupted (SIGINT: partial figures); failed (the run could not go on). */
  status: 'completed' | 'interrupted' | 'failed';
  seed: number;
  startedAt: string;
  finishedAt: string;
  /** Wall time of the measured part (warm-up excluded), ms. */
  measuredMs: number;
  /** Where the load went. Never credentials: the URL has no user info, the root key is absent. */
  target: { kind: 'simulator' | 'live'; url: string };
  settings: {
    model: 'open' | 'closed';
    /** Open model: intended requests/s. */
    rate: number;
    connections: number;
    pipelining: number;
    durationMs: number;
    warmupMs: number;
    timeoutMs: number;
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
  /** Things a reader should know: skipped phases, clock moves, warnings. */
  notes: string[];
}
