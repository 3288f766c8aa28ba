/**
 * The invariants section of a run report (`RunReport.invariants`): the checkers' verdict over the
 * run's recorded history, the witnesses of what broke, and the oracle's replay (docs/checking.md).
 * Re-exported by model.ts, which is where importers take it from.
 */

/** One operation of a witness: what was asked, what came back, and when (Unix ms). */
export interface WitnessOperation {
  /** The operation's number in the history (invoke order). */
  seq: number;
  /** e.g. `keys.verifyKey`. */
  op: string;
  /** Wall clock when the request was sent and when the answer arrived or was given up, Unix ms. */
  invokeMs: number;
  completeMs: number;
  /** Service clock bracket, Unix ms, when known. */
  serviceInvokeMs?: number;
  serviceCompleteMs?: number;
  /** One-line summary of the request, e.g. `key_x cost 1`. */
  request: string;
  /** One-line summary of the answer, e.g. `VALID credits 3`, or `unknown (no answer)`. */
  outcome: string;
  /** In a verdict across segments: which history recorded it, under which number, e.g. `segment 1/4 #817`. */
  origin?: string;
}

/** The verdict on one invariant. */
export interface InvariantResult {
  /** e.g. `credits.no-over-spend`. */
  id: string;
  /** What the invariant says, in a sentence. */
  title: string;
  passed: boolean;
  /**
   * The verdict under the promise set in force (docs/consistency.md): `exact` (held as one
   * linearizable service), `within-promise` (broke the exact model within the set's bounds),
   * `violated`, `unknown` (nothing judged). Absent in reports written before promise sets.
   */
  state?: 'exact' | 'within-promise' | 'violated' | 'unknown';
  /** Under a promise set: how far the history went past the exact model, against its bound, e.g. `over-spend 60 credits ≤ bound 100 …`. */
  measured?: string;
  /** Checks made (0: nothing in the history exercised it). */
  checked: number;
  /** Subjects (keys, rate-limit identifiers) that broke it. */
  violations: number;
  /** A segment's own verdict: checks left to the verdict across segments (keysim merge / check); absent elsewhere. */
  notJudged?: number;
}

/** A broken invariant, with the few operations that prove it. */
export interface InvariantViolation {
  /** The invariant's id. */
  invariant: string;
  /** The key id, or the rate-limited identifier. */
  subject: string;
  message: string;
  /** How many answers broke it for this subject; the witness is of the earliest. */
  occurrences: number;
  /** The operations that prove it (a handful), in seq order. */
  witness: WitnessOperation[];
}

/** An operation whose answer differs from the oracle's. */
export interface OracleDifference {
  seq: number;
  op: string;
  /** The answer field that differs, e.g. `credits`. */
  field: string;
  /** What the oracle answered. */
  expected: string;
  /** What the service answered. */
  received: string;
}

/** The oracle (simulator only): the realised order replayed through a fresh engine. */
export interface OracleSection {
  verdict: 'agrees' | 'differs' | 'not-run';
  /** Operations whose answers were compared. */
  compared: number;
  /** Operations not compared (e.g. unknown outcomes). */
  skipped: number;
  /** Operations whose answers differ. */
  differences: number;
  /** A few differences, the earliest (lowest seq) first. */
  examples: OracleDifference[];
  /** Why the oracle did not run, or what a reader should know about its comparison. */
  note?: string;
}

/** The verdict of the invariant checkers over the run's recorded history. */
export interface InvariantsSection {
  /** clean; violated; not-checked (e.g. an interrupted run: the history was saved but not checked). */
  verdict: 'clean' | 'violated' | 'not-checked';
  /** File name of the history beside the report, e.g. `history.jsonl.gz`. */
  history: string;
  /** Events in the history. */
  operations: number;
  checked: { keys: number; verifications: number; rateLimitChecks: number };
  /** One entry per invariant (empty when not checked). */
  invariants: InvariantResult[];
  /**
   * At most 20 violations, the earliest first (by when their witness ends); the earliest of every
   * broken invariant is always among them. `violationsTotal` counts all.
   */
  violations: InvariantViolation[];
  violationsTotal: number;
  /** What could not be checked, and why. */
  notes: string[];
  /** The oracle (simulator only): the realised order replayed through a fresh engine. */
  oracle?: OracleSection;
  /** The promise set the invariants were judged against; absent: exact (one linearizable service). */
  promises?: PromisesSection;
}

/** The promise set in force (docs/consistency.md). */
export interface PromisesSection {
  /** `exact` or `production`. */
  name: string;
  /** The set in a line with every figure, overridden ones marked `*`. */
  text: string;
  /** The regions the bounds counted, and where that number came from. */
  regions: number;
  regionsFrom: 'history' | 'promise set';
}
