/**
 * The history's format: its header and event types, and how the checkers read an event's effect
 * and time bracket. The format itself is described in history.ts.
 */
import type { MultiLimitEntry, VerifyRateLimitView } from '../../engine/index.js';
import type { Operation } from '../scenario/index.js';

export const HISTORY_FORMAT = 'keysim-history';
export const HISTORY_VERSION = 1;
/** The file name beside report.json. */
export const HISTORY_FILE = 'history.jsonl.gz';

/** Default bound on |service clock − wall clock| for operations recorded without service times, ms. */
export const DEFAULT_WALL_SKEW_MS = 1_000;

export interface HistoryHeader {
  format: typeof HISTORY_FORMAT;
  version: typeof HISTORY_VERSION;
  /** ISO-8601 instant the recording started. */
  startedAt?: string;
  run?: HistoryRun;
  /** Bound on |service clock − wall clock| for events without service times, ms (default 1000). */
  wallSkewMs?: number;
  /**
   * The machine that recorded it (its host name): histories of one machine share one wall clock;
   * histories of several are combined with a bound on how far their clocks are apart.
   */
  host?: string;
  /** A history combined from several (`keysim merge`): what each part was, e.g. `segment 1/4`. */
  combined?: string[];
}

/** Which run a history records: what `keysim check` matches before combining several. */
export interface HistoryRun {
  scenario?: string;
  seed?: number;
  target?: 'simulator' | 'live';
  /** The run's tag (what it creates is named after it); segments sharing one set-up carry the set-up's. */
  tag?: string;
  /** The segment of the plan this run sent (`keysim run --segment i/N`). */
  segment?: { index: number; count: number };
  /**
   * Where the fixtures came from: `own` (this run's setup), `shared` (a set-up's fixtures file,
   * the setup skipped), `setup-only` (this run is that set-up: no load).
   */
  setUp?: 'own' | 'shared' | 'setup-only';
}

export interface HistoryRefill {
  interval: 'daily' | 'monthly';
  amount: number;
  refillDay?: number;
}

/** The credits object of createKey / updateKey as sent (null on updateKey = unlimited). */
export interface HistoryCredits {
  remaining?: number | null;
  refill?: HistoryRefill | null;
}

/** A rate limit named in a verification request. */
export interface HistoryVerifyRateLimit {
  name: string;
  cost?: number;
  limit?: number;
  duration?: number;
}

/** One limit request (ratelimit.limit, or an entry of ratelimit.multiLimit). */
export interface HistoryLimitRequest {
  namespace: string;
  identifier: string;
  limit: number;
  duration: number;
  cost?: number;
}

/** The request fields that matter to the checkers. Never the key plaintext. */
export interface HistoryRequest {
  /** The key's id (keys.*); for verifyKey resolved from the key, absent when unknown. */
  keyId?: string;
  /** verifyKey credits.cost (default 1), or ratelimit.limit cost (default 1). */
  cost?: number;
  /** createKey / updateKey credits (updateKey: null = unlimited; absent = untouched). */
  credits?: HistoryCredits | null;
  /** updateCredits. */
  operation?: 'set' | 'increment' | 'decrement';
  value?: number | null;
  /** ratelimit.limit / setOverride / deleteOverride / getOverride / listOverrides. */
  namespace?: string;
  identifier?: string;
  limit?: number;
  duration?: number;
  /** verifyKey: the rate limits named in the request. */
  ratelimits?: HistoryVerifyRateLimit[];
  /** ratelimit.multiLimit: the limit requests. */
  limits?: HistoryLimitRequest[];
}

/** A rate limit as a verification answer reports it (the engine's view, without autoApply). */
export type HistoryVerifyRateLimitOutcome = Omit<VerifyRateLimitView, 'autoApply'>;

/** One entry of a multiLimit answer. */
export type HistoryLimitOutcome = MultiLimitEntry;

/** What the service answered (the fields that matter). */
export interface HistoryOutcome {
  /** HTTP status. */
  status: number;
  /** For an error: `<category>:<name>` from the error type URL, e.g. `data:key_not_found`. */
  error?: string;
  /** createKey / verifyKey / getKey. */
  keyId?: string;
  /** verifyKey. */
  code?: string;
  valid?: boolean;
  /** verifyKey: the balance after this verification (limited keys only). */
  credits?: number;
  /** updateCredits / getKey: the balance (null = unlimited); ratelimit.limit: what is left. */
  remaining?: number | null;
  /** ratelimit.limit: end of the current window, Unix ms (service clock). */
  reset?: number;
  /** ratelimit.limit: admitted; multiLimit: all passed. */
  success?: boolean;
  /** ratelimit.limit: the effective limit. */
  limit?: number;
  /** ratelimit.limit (matched override) / setOverride (its id). */
  overrideId?: string;
  /** verifyKey: the rate limits checked. */
  ratelimits?: HistoryVerifyRateLimitOutcome[];
  /** multiLimit: one entry per limit request. */
  limits?: HistoryLimitOutcome[];
}

/** One operation of the history. */
export interface HistoryEvent {
  /** Unique, increasing in invoke order. */
  seq: number;
  op: Operation;
  /** Wall clock (Unix ms, monotonic source) when the request was sent and when the answer arrived or was given up. */
  invokeMs: number;
  completeMs: number;
  /** Service clock bracket, when known (see the module comment). */
  serviceInvokeMs?: number;
  serviceCompleteMs?: number;
  request: HistoryRequest;
  /** `"unknown"`: a timeout or a lost connection — the operation may or may not have taken effect. */
  outcome: HistoryOutcome | 'unknown';
  /**
   * In a history combined from several: where the operation was recorded, e.g. `segment 1/4 #817`
   * (that history's own sequence number; `seq` is renumbered to stay unique).
   */
  origin?: string;
  /**
   * The region that answered, from the answer's `x-keysim-region` header (keysim's production
   * profile names it; a real deployment may not): what a production promise set's bounds count
   * regions by (docs/consistency.md). Absent in histories recorded without it.
   */
  region?: string;
}

// ── interpreting events (shared by the checkers) ──────────────────────────────────────────

/**
 * Whether an event's effect is unknown: no answer, or a 5xx (the service may have applied the
 * operation before failing). A 4xx means the operation was refused and changed nothing.
 */
export function effectUnknown(event: HistoryEvent): boolean {
  return event.outcome === 'unknown' || event.outcome.status >= 500;
}

/** The answer of an operation that surely completed with status 200, or undefined. */
export function okOutcome(event: HistoryEvent): HistoryOutcome | undefined {
  return event.outcome !== 'unknown' && event.outcome.status === 200 ? event.outcome : undefined;
}

/**
 * The operation's time bracket. Wall `invokeMs` ≤ linearisation point ≤ `completeMs`; an
 * operation whose effect is unknown may still take effect later, so its completion is +∞.
 * The service bracket is the recorded one, or the wall one widened by `wallSkewMs`.
 */
export interface TimeBracket {
  inv: number;
  comp: number;
  sInv: number;
  sComp: number;
}

export function timeBracket(event: HistoryEvent, wallSkewMs: number): TimeBracket {
  const unknown = effectUnknown(event);
  const inv = event.invokeMs;
  const comp = unknown ? Number.POSITIVE_INFINITY : event.completeMs;
  const sInv = event.serviceInvokeMs ?? inv - wallSkewMs;
  const sComp = unknown ? Number.POSITIVE_INFINITY : (event.serviceCompleteMs ?? event.completeMs + wallSkewMs);
  return { inv, comp, sInv, sComp };
}
