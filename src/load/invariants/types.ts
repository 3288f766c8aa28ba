/**
 * The checkers' shared vocabulary: invariant ids, violations, options and results. Its own
 * module so that the checkers and the index that runs them do not import each other.
 */
import type { HistoryEvent } from '../history/index.js';
import type { PromiseSet } from '../promises/index.js';
import type { Measure } from '../../report/model.js';

export type InvariantId =
  'credits.no-over-spend' | 'credits.no-under-serve' | 'credits.consistent' | 'credits.refill' | 'ratelimit.no-over-admission' | 'ratelimit.no-false-denial';

/** Every invariant, in the order the verdict lists them. */
export const INVARIANTS: ReadonlyArray<{ id: InvariantId; title: string }> = [
  { id: 'credits.no-over-spend', title: 'no over-spend: VALID answers never grant more credits than the budget allowed' },
  { id: 'credits.no-under-serve', title: 'no under-serve: USAGE_EXCEEDED only when the credits left could be below the cost' },
  { id: 'credits.consistent', title: 'consistent credits: reported balances fit the bounds; one period never reports a balance twice' },
  { id: 'credits.refill', title: 'refills take effect at their boundary and replace the balance' },
  { id: 'ratelimit.no-over-admission', title: 'no over-admission: admitted cost per window never exceeds the effective limit' },
  { id: 'ratelimit.no-false-denial', title: 'no false denial: a request is denied only when the limit could have been reached' },
];

/** A broken invariant, with the few operations that prove it. */
export interface Violation {
  invariant: InvariantId;
  /** The key id, or the rate-limited identifier (namespace/identifier, or the limit's id). */
  subject: string;
  message: string;
  /** The operations that prove it (at most about six), in seq order. */
  witness: HistoryEvent[];
  /** How many answers broke it for this subject; the witness is the earliest. */
  occurrences: number;
}

export interface InvariantOptions {
  /**
   * Bound on |service clock − wall clock| in ms, used for events recorded without service times
   * (default: the history header's, else 1000).
   */
  wallSkewMs?: number;
  /** 'replace' (interface document, default) or 'production' (a refill leaves a balance ≥ amount alone). */
  refill?: 'replace' | 'production';
  /** An answer with more possible preceding credit changes than this is skipped (default 16). */
  maxCandidates?: number;
  /**
   * The history is one segment's: other segments may have used the same keys and limits, so only
   * what is sound on a subset of the operations is judged (segment-scope.ts). `sharedKeyIds`: the
   * ids of a shared set-up's keys (never this segment's own).
   */
  segment?: { sharedKeyIds?: readonly string[] };
  /**
   * The promise set the verdict judges against (default `exact`: one linearizable service).
   * Under another set, what breaks only the exact model is "within promise" (promise-verdicts.ts).
   */
  promises?: PromiseSet;
  /** A refill may still be unseen this long after its boundary, ms (default 0; promise-verdicts.ts sets it). */
  refillLagMs?: number;
  /** Every rate limit judged as this multiple of itself (default 1; promise-verdicts.ts sets the bands). */
  limitScale?: number;
  /**
   * Added to every (scaled) rate limit: this many times the largest cost its counter saw (one
   * request's cost per region that may not have published yet; default 0).
   */
  limitCostSlack?: number;
  /**
   * Regional counters (promise-verdicts.ts sets it under a set with `creditTtlMs`): a change of the
   * balance may stay unseen by another region's counter for `counterMs`, and a VALID answer's
   * debit may reach the database up to `replayMs` late. Widens the lower bounds only.
   */
  regionalLag?: { counterMs: number; replayMs: number };
  /**
   * A region that denied a counter denies it until its window ends (the production profile's
   * strictness): a denial after a legal denial of the same counter, window and region is legal.
   */
  strictAfterDenial?: boolean;
}

export interface JudgedCounts {
  /** Keys whose credits were followed (their createKey is in the history). */
  keys: number;
  /** Verifications whose credits were checked. */
  verifications: number;
  /** Rate-limit decisions checked (ratelimit.limit, multiLimit entries, verification limits). */
  rateLimitChecks: number;
}

/** What one checker returns. */
export interface InvariantFindings {
  violations: Violation[];
  checked: JudgedCounts;
  /** Checks made per invariant. */
  counts: Partial<Record<InvariantId, number>>;
  /** What could not be checked, and why. */
  notes: string[];
  /** In a segment: checks (credits: keys; rate limits: denials) left to the judgement across segments. */
  notJudged?: Partial<Record<InvariantId, number>>;
  /** Rate limits: the largest share a window's admitted cost went over its limit (0.07: 7 % over), when any did. */
  overAdmission?: number;
  /** What the checker measured on the way, for the measures (measures.ts); never part of a verdict. */
  samples?: CheckerSamples;
}

/** Figures a checker measured, per judged item (measures.ts turns them into `Measure`s). */
export interface CheckerSamples {
  /** Per judged rate-limit window: its window size and the share its admitted cost went over the limit (0: none). */
  overAdmission?: Array<{ durationMs: number; share: number }>;
  /** Per judged denial: the window size of the limit that came closest, and the share of it not yet usable (0: reached). */
  underAdmission?: Array<{ durationMs: number; share: number }>;
  /** Windows that could not be measured (their admissions' answers never came, or their window size is unknown). */
  overAdmissionUnknown?: Array<{ durationMs: number | undefined }>;
  /** Denials that could not be measured (a window size unknown, several windows far apart, a counter the model may split). */
  underAdmissionUnknown?: Array<{ durationMs: number | undefined }>;
  /** Per refill boundary judged: how late, in ms of the service clock, an answer still saw the balance before it (0: on time). */
  refillLagMs?: number[];
  /** Per USAGE_EXCEEDED judged: the credits surely left beyond what a refusal allows (cost − 1), 0 when none. */
  underServe?: number[];
}

/**
 * An invariant's verdict under the promise set in force: `exact` (held as one linearizable
 * service), `within-promise` (broke the exact model by no more than the set promises),
 * `violated` (broke the promise set), `unknown` (nothing in the history exercised it).
 */
export type VerdictState = 'exact' | 'within-promise' | 'violated' | 'unknown';

export interface InvariantVerdict {
  id: InvariantId;
  title: string;
  /** Checks made. */
  checked: number;
  /** Subjects that broke it. */
  violations: number;
  /** True for `exact`, `within-promise` and `unknown`: what the exit code reads. */
  passed: boolean;
  state: VerdictState;
  /** How far the history went past the exact model, against its bound (within-promise and violated under a promise set). */
  measured?: string;
  /** In a segment: checks left to keysim merge / keysim check (not judged on this history alone). */
  notJudged?: number;
}

/** The promise set a verdict was judged against, as the reports show it. */
export interface PromisesInForce {
  /** `exact` or `production`. */
  name: string;
  /** The set in a line, figures and all (promise-set.ts's promiseSetText). */
  text: string;
  /** The regions the bounds counted. */
  regions: number;
  /** Where that count came from: the history's region attribution, or the promise set's `regions`. */
  regionsFrom: 'history' | 'promise set';
}

export interface InvariantReport {
  passed: boolean;
  violations: Violation[];
  checked: JudgedCounts;
  invariants: InvariantVerdict[];
  notes: string[];
  /** The promise set judged against (absent: exact, the default). */
  promises?: PromisesInForce;
  /** Figures the checkers measured against the promise set (over-admission per window size, over-spend…). */
  measures?: Measure[];
}
