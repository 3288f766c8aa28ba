/**
 * The operation history of a run: `history.jsonl.gz` beside the report, read back by
 * `keysim check` and by the invariant checkers (`checks/`).
 *
 * Format (gzip of JSON lines, UTF-8):
 *   line 1   header  {"format":"keysim-history","version":1,"startedAt"?,"run"?,"wallSkewMs"?}
 *   line 2…  one HistoryEvent per operation, in completion order (seq gives the invoke order)
 *
 * Times: `invokeMs` / `completeMs` are Unix ms from a monotonic source (performance.timeOrigin +
 * performance.now()), fractions allowed. `serviceInvokeMs` / `serviceCompleteMs`, when the target
 * can tell (the simulator's clock), bracket the service clock: the first is at most the service
 * clock when the request was sent, the second at least the service clock when the answer arrived.
 * Without them the checkers use the wall times widened by `wallSkewMs`.
 *
 * No secret is ever written: a verification records the key's id (looked up from what createKey
 * answered), never the key; the root key is never seen here. Records are built field by field
 * from a whitelist, so an unexpected field of a request body cannot slip through.
 *
 * Memory stays bounded while recording: every record is serialised at once and written through a
 * gzip stream; nothing is kept but the current ≤ 32 KiB chunk and the streams' own buffers, which
 * `record()` reports through its return value (false = above the high-water mark: await
 * `drain()`). The only per-run state is the key-id directory (one entry per created key).
 */
import type { MultiLimitEntry, VerifyRateLimitView } from '../engine/index.js';
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, type WriteStream } from 'node:fs';
import { open } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { type Gzip, constants as zlibConstants, createGunzip, createGzip } from 'node:zlib';
import { OPERATIONS, type Operation } from './scenario.js';

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
  run?: { scenario?: string; seed?: number; target?: 'simulator' | 'live' };
  /** Bound on |service clock − wall clock| for events without service times, ms (default 1000). */
  wallSkewMs?: number;
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

// ── building records from requests and answers ────────────────────────────────────────────

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function num(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

function str(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

function refillOf(value: unknown): HistoryRefill | null | undefined {
  if (value === null) return null;
  if (!isObject(value)) return undefined;
  const interval = value.interval === 'daily' || value.interval === 'monthly' ? value.interval : undefined;
  const amount = num(value.amount);
  if (interval === undefined || amount === undefined) return undefined;
  const refillDay = num(value.refillDay);
  return refillDay === undefined ? { interval, amount } : { interval, amount, refillDay };
}

function creditsOf(value: unknown): HistoryCredits | null | undefined {
  if (value === null) return null;
  if (!isObject(value)) return undefined;
  const out: HistoryCredits = {};
  if (value.remaining === null) out.remaining = null;
  else if (num(value.remaining) !== undefined) out.remaining = value.remaining as number;
  if ('refill' in value) {
    const refill = refillOf(value.refill);
    if (refill !== undefined) out.refill = refill;
  }
  return out;
}

function limitRequestOf(value: unknown): HistoryLimitRequest | undefined {
  if (!isObject(value)) return undefined;
  const namespace = str(value.namespace);
  const identifier = str(value.identifier);
  const limit = num(value.limit);
  const duration = num(value.duration);
  if (namespace === undefined || identifier === undefined || limit === undefined || duration === undefined) return undefined;
  const cost = num(value.cost);
  return cost === undefined ? { namespace, identifier, limit, duration } : { namespace, identifier, limit, duration, cost };
}

/**
 * The history fields of a request body (a whitelist: the key plaintext and anything else are
 * dropped). `keyIdOf` resolves a verified key to its id.
 */
export function historyRequest(op: Operation, body: unknown, keyIdOf: (plaintext: string) => string | undefined = () => undefined): HistoryRequest {
  const out: HistoryRequest = {};
  if (op === 'ratelimit.multiLimit') {
    if (Array.isArray(body)) out.limits = body.map(limitRequestOf).filter((l): l is HistoryLimitRequest => l !== undefined);
    return out;
  }
  if (!isObject(body)) return out;
  switch (op) {
    case 'keys.createKey': {
      const credits = creditsOf(body.credits);
      if (credits !== undefined) out.credits = credits;
      break;
    }
    case 'keys.updateKey': {
      const keyId = str(body.keyId);
      if (keyId !== undefined) out.keyId = keyId;
      if ('credits' in body) {
        const credits = creditsOf(body.credits);
        if (credits !== undefined) out.credits = credits;
      }
      break;
    }
    case 'keys.getKey':
    case 'keys.deleteKey': {
      const keyId = str(body.keyId);
      if (keyId !== undefined) out.keyId = keyId;
      break;
    }
    case 'keys.updateCredits': {
      const keyId = str(body.keyId);
      if (keyId !== undefined) out.keyId = keyId;
      if (body.operation === 'set' || body.operation === 'increment' || body.operation === 'decrement') out.operation = body.operation;
      if (body.value === null) out.value = null;
      else if (num(body.value) !== undefined) out.value = body.value as number;
      break;
    }
    case 'keys.verifyKey': {
      const plaintext = str(body.key);
      const keyId = plaintext === undefined ? undefined : keyIdOf(plaintext);
      if (keyId !== undefined) out.keyId = keyId;
      const cost = isObject(body.credits) ? num(body.credits.cost) : undefined;
      if (cost !== undefined) out.cost = cost;
      if (Array.isArray(body.ratelimits)) {
        const named: HistoryVerifyRateLimit[] = [];
        for (const r of body.ratelimits) {
          if (!isObject(r) || typeof r.name !== 'string') continue;
          const entry: HistoryVerifyRateLimit = { name: r.name };
          const rc = num(r.cost);
          const rl = num(r.limit);
          const rd = num(r.duration);
          if (rc !== undefined) entry.cost = rc;
          if (rl !== undefined) entry.limit = rl;
          if (rd !== undefined) entry.duration = rd;
          named.push(entry);
        }
        out.ratelimits = named;
      }
      break;
    }
    case 'ratelimit.limit':
    case 'ratelimit.setOverride':
    case 'ratelimit.deleteOverride':
    case 'ratelimit.getOverride':
    case 'ratelimit.listOverrides': {
      const namespace = str(body.namespace) ?? str(body.namespaceName);
      if (namespace !== undefined) out.namespace = namespace;
      const identifier = str(body.identifier);
      if (identifier !== undefined) out.identifier = identifier;
      for (const field of ['limit', 'duration', 'cost'] as const) {
        const value = num(body[field]);
        if (value !== undefined) out[field] = value;
      }
      break;
    }
    default:
      break;
  }
  return out;
}

function errorName(body: unknown): string | undefined {
  if (!isObject(body) || !isObject(body.error)) return undefined;
  const type = str(body.error.type);
  if (type !== undefined) {
    const parts = type.split('/').filter((p) => p !== '');
    if (parts.length >= 2) return `${parts[parts.length - 2]}:${parts[parts.length - 1]}`;
  }
  return str(body.error.code);
}

/** The history fields of an answer (status and parsed JSON body). */
export function historyOutcome(op: Operation, status: number, body: unknown): HistoryOutcome {
  const out: HistoryOutcome = { status };
  if (status !== 200) {
    const error = errorName(body);
    if (error !== undefined) out.error = error;
    return out;
  }
  const data = isObject(body) ? body.data : undefined;
  if (!isObject(data)) return out;
  switch (op) {
    case 'keys.createKey': {
      const keyId = str(data.keyId);
      if (keyId !== undefined) out.keyId = keyId;
      break;
    }
    case 'keys.getKey': {
      const keyId = str(data.keyId);
      if (keyId !== undefined) out.keyId = keyId;
      // No credits object: unlimited.
      out.remaining = isObject(data.credits) ? (data.credits.remaining === null ? null : (num(data.credits.remaining) ?? null)) : null;
      break;
    }
    case 'keys.updateCredits':
      out.remaining = data.remaining === null ? null : (num(data.remaining) ?? null);
      break;
    case 'keys.verifyKey': {
      const code = str(data.code);
      if (code !== undefined) out.code = code;
      if (typeof data.valid === 'boolean') out.valid = data.valid;
      const keyId = str(data.keyId);
      if (keyId !== undefined) out.keyId = keyId;
      const credits = num(data.credits);
      if (credits !== undefined) out.credits = credits;
      if (Array.isArray(data.ratelimits)) {
        const entries: HistoryVerifyRateLimitOutcome[] = [];
        for (const r of data.ratelimits) {
          if (!isObject(r)) continue;
          const id = str(r.id);
          const name = str(r.name);
          const limit = num(r.limit);
          const duration = num(r.duration);
          const reset = num(r.reset);
          const remaining = num(r.remaining);
          if (id === undefined || name === undefined || limit === undefined || duration === undefined || reset === undefined || remaining === undefined) continue;
          entries.push({ id, name, limit, duration, reset, remaining, exceeded: r.exceeded === true });
        }
        out.ratelimits = entries;
      }
      break;
    }
    case 'ratelimit.limit': {
      const limit = num(data.limit);
      const remaining = num(data.remaining);
      const reset = num(data.reset);
      if (limit !== undefined) out.limit = limit;
      if (remaining !== undefined) out.remaining = remaining;
      if (reset !== undefined) out.reset = reset;
      if (typeof data.success === 'boolean') out.success = data.success;
      const overrideId = str(data.overrideId);
      if (overrideId !== undefined) out.overrideId = overrideId;
      break;
    }
    case 'ratelimit.multiLimit': {
      if (typeof data.passed === 'boolean') out.success = data.passed;
      if (Array.isArray(data.limits)) {
        const limits: HistoryLimitOutcome[] = [];
        for (const l of data.limits) {
          if (!isObject(l)) continue;
          const namespace = str(l.namespace);
          const identifier = str(l.identifier);
          const limit = num(l.limit);
          const remaining = num(l.remaining);
          const reset = num(l.reset);
          if (namespace === undefined || identifier === undefined || limit === undefined || remaining === undefined || reset === undefined) continue;
          const entry: HistoryLimitOutcome = { namespace, identifier, limit, remaining, reset, passed: l.passed === true };
          const overrideId = str(l.overrideId);
          if (overrideId !== undefined) entry.overrideId = overrideId;
          limits.push(entry);
        }
        out.limits = limits;
      }
      break;
    }
    case 'ratelimit.setOverride': {
      const overrideId = str(data.overrideId);
      if (overrideId !== undefined) out.overrideId = overrideId;
      break;
    }
    default:
      break;
  }
  return out;
}

/**
 * Key plaintext → key id, learned from createKey answers, so that verifications are recorded by
 * id. Stores SHA-256 digests only: the directory never holds a plaintext.
 */
export class KeyDirectory {
  readonly #ids = new Map<string, string>();

  static #digest(plaintext: string): string {
    return createHash('sha256').update(plaintext).digest('base64url');
  }

  learn(plaintext: string, keyId: string): void {
    this.#ids.set(KeyDirectory.#digest(plaintext), keyId);
  }

  keyIdOf(plaintext: string): string | undefined {
    return this.#ids.get(KeyDirectory.#digest(plaintext));
  }

  get size(): number {
    return this.#ids.size;
  }

  /** Learns from one request and its answer (createKey returns the key and its id; verifyKey the id). */
  observe(op: Operation, requestBody: unknown, status: number, responseBody: unknown): void {
    if (status !== 200 || !isObject(responseBody) || !isObject(responseBody.data)) return;
    const data = responseBody.data;
    if (op === 'keys.createKey' && typeof data.key === 'string' && typeof data.keyId === 'string') this.learn(data.key, data.keyId);
    if (op === 'keys.verifyKey' && isObject(requestBody) && typeof requestBody.key === 'string' && typeof data.keyId === 'string') {
      this.learn(requestBody.key, data.keyId);
    }
  }
}

// ── validation (the reader and the writer share it) ───────────────────────────────────────

const OPERATION_SET: ReadonlySet<string> = new Set(OPERATIONS);

class Invalid extends Error {}

function need(condition: boolean, detail: string): asserts condition {
  if (!condition) throw new Invalid(detail);
}

function optNum(o: Record<string, unknown>, field: string, where: string): number | undefined {
  const v = o[field];
  if (v === undefined) return undefined;
  need(typeof v === 'number' && Number.isFinite(v), `${where}.${field} must be a number`);
  return v;
}

function optStr(o: Record<string, unknown>, field: string, where: string): string | undefined {
  const v = o[field];
  if (v === undefined) return undefined;
  need(typeof v === 'string', `${where}.${field} must be a string`);
  return v;
}

function optBool(o: Record<string, unknown>, field: string, where: string): boolean | undefined {
  const v = o[field];
  if (v === undefined) return undefined;
  need(typeof v === 'boolean', `${where}.${field} must be true or false`);
  return v;
}

function put<T extends object, K extends keyof T>(target: T, field: K, value: T[K] | undefined): void {
  if (value !== undefined) target[field] = value;
}

function validRefill(v: unknown, where: string): HistoryRefill | null {
  if (v === null) return null;
  need(isObject(v), `${where} must be an object or null`);
  need(v.interval === 'daily' || v.interval === 'monthly', `${where}.interval must be "daily" or "monthly"`);
  const amount = optNum(v, 'amount', where);
  need(amount !== undefined, `${where}.amount is required`);
  const out: HistoryRefill = { interval: v.interval, amount };
  put(out, 'refillDay', optNum(v, 'refillDay', where));
  return out;
}

function validCredits(v: unknown, where: string): HistoryCredits | null {
  if (v === null) return null;
  need(isObject(v), `${where} must be an object or null`);
  const out: HistoryCredits = {};
  if (v.remaining === null) out.remaining = null;
  else put(out, 'remaining', optNum(v, 'remaining', where));
  if (v.refill !== undefined) out.refill = validRefill(v.refill, `${where}.refill`);
  return out;
}

function validLimitRequest(v: unknown, where: string): HistoryLimitRequest {
  need(isObject(v), `${where} must be an object`);
  const namespace = optStr(v, 'namespace', where);
  const identifier = optStr(v, 'identifier', where);
  const limit = optNum(v, 'limit', where);
  const duration = optNum(v, 'duration', where);
  need(namespace !== undefined && identifier !== undefined && limit !== undefined && duration !== undefined, `${where} needs namespace, identifier, limit and duration`);
  const out: HistoryLimitRequest = { namespace, identifier, limit, duration };
  put(out, 'cost', optNum(v, 'cost', where));
  return out;
}

function validRequest(v: unknown): HistoryRequest {
  need(isObject(v), 'request must be an object');
  need(!('key' in v), 'request carries a "key" field: a history never holds key plaintext');
  const out: HistoryRequest = {};
  put(out, 'keyId', optStr(v, 'keyId', 'request'));
  put(out, 'cost', optNum(v, 'cost', 'request'));
  if (v.credits !== undefined) out.credits = validCredits(v.credits, 'request.credits');
  if (v.operation !== undefined) {
    need(v.operation === 'set' || v.operation === 'increment' || v.operation === 'decrement', 'request.operation must be set, increment or decrement');
    out.operation = v.operation;
  }
  if (v.value === null) out.value = null;
  else put(out, 'value', optNum(v, 'value', 'request'));
  put(out, 'namespace', optStr(v, 'namespace', 'request'));
  put(out, 'identifier', optStr(v, 'identifier', 'request'));
  put(out, 'limit', optNum(v, 'limit', 'request'));
  put(out, 'duration', optNum(v, 'duration', 'request'));
  if (v.ratelimits !== undefined) {
    need(Array.isArray(v.ratelimits), 'request.ratelimits must be an array');
    out.ratelimits = v.ratelimits.map((r, i) => {
      const where = `request.ratelimits[${i}]`;
      need(isObject(r), `${where} must be an object`);
      const name = optStr(r, 'name', where);
      need(name !== undefined, `${where}.name is required`);
      const entry: HistoryVerifyRateLimit = { name };
      put(entry, 'cost', optNum(r, 'cost', where));
      put(entry, 'limit', optNum(r, 'limit', where));
      put(entry, 'duration', optNum(r, 'duration', where));
      return entry;
    });
  }
  if (v.limits !== undefined) {
    need(Array.isArray(v.limits), 'request.limits must be an array');
    out.limits = v.limits.map((l, i) => validLimitRequest(l, `request.limits[${i}]`));
  }
  return out;
}

function validOutcome(v: unknown): HistoryOutcome | 'unknown' {
  if (v === 'unknown') return 'unknown';
  need(isObject(v), 'outcome must be an object or "unknown"');
  const status = v.status;
  need(typeof status === 'number' && Number.isInteger(status) && status >= 100 && status <= 599, 'outcome.status must be an HTTP status');
  const out: HistoryOutcome = { status };
  put(out, 'error', optStr(v, 'error', 'outcome'));
  put(out, 'keyId', optStr(v, 'keyId', 'outcome'));
  put(out, 'code', optStr(v, 'code', 'outcome'));
  put(out, 'valid', optBool(v, 'valid', 'outcome'));
  put(out, 'credits', optNum(v, 'credits', 'outcome'));
  if (v.remaining === null) out.remaining = null;
  else put(out, 'remaining', optNum(v, 'remaining', 'outcome'));
  put(out, 'reset', optNum(v, 'reset', 'outcome'));
  put(out, 'success', optBool(v, 'success', 'outcome'));
  put(out, 'limit', optNum(v, 'limit', 'outcome'));
  put(out, 'overrideId', optStr(v, 'overrideId', 'outcome'));
  if (v.ratelimits !== undefined) {
    need(Array.isArray(v.ratelimits), 'outcome.ratelimits must be an array');
    out.ratelimits = v.ratelimits.map((r, i) => {
      const where = `outcome.ratelimits[${i}]`;
      need(isObject(r), `${where} must be an object`);
      const id = optStr(r, 'id', where);
      const name = optStr(r, 'name', where);
      const limit = optNum(r, 'limit', where);
      const duration = optNum(r, 'duration', where);
      const reset = optNum(r, 'reset', where);
      const remaining = optNum(r, 'remaining', where);
      const exceeded = optBool(r, 'exceeded', where);
      need(
        id !== undefined && name !== undefined && limit !== undefined && duration !== undefined && reset !== undefined && remaining !== undefined && exceeded !== undefined,
        `${where} needs id, name, limit, duration, reset, remaining and exceeded`,
      );
      return { id, name, limit, duration, reset, remaining, exceeded };
    });
  }
  if (v.limits !== undefined) {
    need(Array.isArray(v.limits), 'outcome.limits must be an array');
    out.limits = v.limits.map((l, i) => {
      const where = `outcome.limits[${i}]`;
      need(isObject(l), `${where} must be an object`);
      const namespace = optStr(l, 'namespace', where);
      const identifier = optStr(l, 'identifier', where);
      const limit = optNum(l, 'limit', where);
      const remaining = optNum(l, 'remaining', where);
      const reset = optNum(l, 'reset', where);
      const passed = optBool(l, 'passed', where);
      need(
        namespace !== undefined && identifier !== undefined && limit !== undefined && remaining !== undefined && reset !== undefined && passed !== undefined,
        `${where} needs namespace, identifier, limit, remaining, reset and passed`,
      );
      const entry: HistoryLimitOutcome = { namespace, identifier, limit, remaining, reset, passed };
      put(entry, 'overrideId', optStr(l, 'overrideId', where));
      return entry;
    });
  }
  return out;
}

/** Checks one parsed event and rebuilds it from its known fields; throws `Invalid` with the reason. */
function validEvent(v: unknown): HistoryEvent {
  need(isObject(v), 'an event must be a JSON object');
  need(typeof v.seq === 'number' && Number.isSafeInteger(v.seq) && v.seq >= 0, 'seq must be an integer ≥ 0');
  need(typeof v.op === 'string' && OPERATION_SET.has(v.op), `op must be one of the v2 operations, got ${JSON.stringify(v.op)}`);
  const invokeMs = optNum(v, 'invokeMs', 'event');
  const completeMs = optNum(v, 'completeMs', 'event');
  need(invokeMs !== undefined && completeMs !== undefined, 'invokeMs and completeMs are required');
  need(completeMs >= invokeMs, `completeMs (${completeMs}) is before invokeMs (${invokeMs})`);
  const event: HistoryEvent = {
    seq: v.seq,
    op: v.op as Operation,
    invokeMs,
    completeMs,
    request: validRequest(v.request),
    outcome: validOutcome(v.outcome),
  };
  const sInv = optNum(v, 'serviceInvokeMs', 'event');
  const sComp = optNum(v, 'serviceCompleteMs', 'event');
  if (sInv !== undefined && sComp !== undefined) need(sComp >= sInv, `serviceCompleteMs (${sComp}) is before serviceInvokeMs (${sInv})`);
  put(event, 'serviceInvokeMs', sInv);
  put(event, 'serviceCompleteMs', sComp);
  return event;
}

function validHeader(v: unknown): HistoryHeader {
  need(isObject(v) && v.format === HISTORY_FORMAT, `the first line must be the header {"format":"${HISTORY_FORMAT}",…}: this is not a keysim history`);
  need(v.version === HISTORY_VERSION, `unsupported history version ${JSON.stringify(v.version)} (this keysim reads version ${HISTORY_VERSION})`);
  const header: HistoryHeader = { format: HISTORY_FORMAT, version: HISTORY_VERSION };
  put(header, 'startedAt', optStr(v, 'startedAt', 'header'));
  const skew = optNum(v, 'wallSkewMs', 'header');
  if (skew !== undefined) need(skew >= 0, 'header.wallSkewMs must be ≥ 0');
  put(header, 'wallSkewMs', skew);
  if (v.run !== undefined) {
    need(isObject(v.run), 'header.run must be an object');
    const run: NonNullable<HistoryHeader['run']> = {};
    put(run, 'scenario', optStr(v.run, 'scenario', 'header.run'));
    put(run, 'seed', optNum(v.run, 'seed', 'header.run'));
    if (v.run.target !== undefined) {
      need(v.run.target === 'simulator' || v.run.target === 'live', 'header.run.target must be "simulator" or "live"');
      run.target = v.run.target;
    }
    header.run = run;
  }
  return header;
}

/** Checks an event built in memory (what the writer writes is what the reader accepts). */
export function validateHistoryEvent(value: unknown): HistoryEvent {
  try {
    return validEvent(value);
  } catch (error) {
    if (error instanceof Invalid) throw new TypeError(`Not a valid history event: ${error.message}.`);
    throw error;
  }
}

// ── writing ───────────────────────────────────────────────────────────────────────────────

/** Lines are gathered into chunks of about this size before they go to gzip. */
const CHUNK_BYTES = 32 * 1024;

export interface HistoryWriterOptions {
  startedAt?: string;
  run?: HistoryHeader['run'];
  wallSkewMs?: number;
  /** gzip level 1..9; default 1 (the file is written during the load: speed over size). */
  level?: number;
}

/** One call as the runner sees it, turned into a HistoryEvent by `recordCall`. */
export interface RecordedCall {
  /** From `begin()` at send time; assigned now when absent. */
  seq?: number;
  op: Operation;
  /** The request body as sent (the key plaintext in it is replaced by the key id). */
  body: unknown;
  invokeMs: number;
  completeMs: number;
  serviceInvokeMs?: number;
  serviceCompleteMs?: number;
  /** The answer, or 'unknown' after a timeout or a lost connection. */
  response: { status: number; body: unknown } | 'unknown';
}

/**
 * Streams a history to `history.jsonl.gz`. Synchronous `record()` for the runner's hot path;
 * `close()` flushes and waits until the file is complete.
 */
export class HistoryWriter {
  readonly path: string;
  readonly keys = new KeyDirectory();
  readonly #gzip: Gzip;
  readonly #file: WriteStream;
  readonly #finished: Promise<void>;
  #chunk = '';
  #nextSeq = 0;
  #written = 0;
  #maxBuffered = 0;
  #error: Error | undefined;
  #closed = false;

  private constructor(path: string, gzip: Gzip, file: WriteStream) {
    this.path = path;
    this.#gzip = gzip;
    this.#file = file;
    this.#finished = new Promise<void>((resolve) => {
      file.once('close', () => resolve());
    });
    const fail = (error: Error) => {
      this.#error ??= error;
    };
    gzip.on('error', fail);
    file.on('error', fail);
    gzip.pipe(file);
  }

  /** Creates (or truncates) the file and writes the header. Rejects if the file cannot be opened. */
  static async create(path: string, options: HistoryWriterOptions = {}): Promise<HistoryWriter> {
    const file = createWriteStream(path);
    await new Promise<void>((resolve, reject) => {
      file.once('open', () => resolve());
      file.once('error', reject);
    });
    const gzip = createGzip({ level: options.level ?? zlibConstants.Z_BEST_SPEED });
    const writer = new HistoryWriter(path, gzip, file);
    const header: HistoryHeader = { format: HISTORY_FORMAT, version: HISTORY_VERSION, startedAt: options.startedAt ?? new Date().toISOString() };
    if (options.run !== undefined) header.run = options.run;
    if (options.wallSkewMs !== undefined) header.wallSkewMs = options.wallSkewMs;
    writer.#append(JSON.stringify(header));
    return writer;
  }

  /** The next sequence number: call it when the request is sent. */
  begin(): number {
    return this.#nextSeq++;
  }

  /** Events written so far. */
  get written(): number {
    return this.#written;
  }

  /** Bytes accepted but not yet in the file: the current chunk plus the streams' buffers. */
  get bufferedBytes(): number {
    return this.#chunk.length + this.#gzip.writableLength + this.#file.writableLength;
  }

  /** The largest `bufferedBytes` seen after a record (for the memory test and benchmarks). */
  get maxBufferedBytes(): number {
    return this.#maxBuffered;
  }

  /**
   * Whether the caller should `await drain()` before recording much more: gzip holds more than its
   * high-water mark (the file stream's own buffer is bounded by the pipe between them).
   */
  get needsDrain(): boolean {
    return this.#gzip.writableNeedDrain;
  }

  /**
   * Writes one event. Returns false when the buffers are above the high-water mark: the caller
   * should await `drain()` (the event is written either way). Throws after a write error.
   */
  record(event: HistoryEvent): boolean {
    // Rebuilt from the whitelist, so the line holds the known fields only.
    return this.#write(validateHistoryEvent(event));
  }

  #write(event: HistoryEvent): boolean {
    if (this.#closed) throw new Error(`The history ${this.path} is closed.`);
    if (this.#error !== undefined) throw new Error(`Writing the history ${this.path} failed: ${this.#error.message}`);
    this.#append(JSON.stringify(event));
    this.#written++;
    const buffered = this.bufferedBytes;
    if (buffered > this.#maxBuffered) this.#maxBuffered = buffered;
    return !this.needsDrain;
  }

  /**
   * Turns a request and its answer into an event (learning key ids on the way) and records it.
   * The event is built from the whitelist here, so only its times need checking (the hot path).
   */
  recordCall(call: RecordedCall): boolean {
    const { serviceInvokeMs: sInv, serviceCompleteMs: sComp } = call;
    const timesOk =
      Number.isFinite(call.invokeMs) &&
      Number.isFinite(call.completeMs) &&
      call.completeMs >= call.invokeMs &&
      (sInv === undefined || Number.isFinite(sInv)) &&
      (sComp === undefined || Number.isFinite(sComp)) &&
      (sInv === undefined || sComp === undefined || sComp >= sInv);
    if (!timesOk || !OPERATION_SET.has(call.op)) {
      throw new TypeError(`Not a valid call to record: ${call.op}, wall ${call.invokeMs} … ${call.completeMs} ms, service ${sInv} … ${sComp} ms.`);
    }
    if (call.response !== 'unknown') this.keys.observe(call.op, call.body, call.response.status, call.response.body);
    const event: HistoryEvent = {
      seq: call.seq ?? this.begin(),
      op: call.op,
      invokeMs: call.invokeMs,
      completeMs: call.completeMs,
      request: historyRequest(call.op, call.body, (plaintext) => this.keys.keyIdOf(plaintext)),
      outcome: call.response === 'unknown' ? 'unknown' : historyOutcome(call.op, call.response.status, call.response.body),
    };
    if (call.serviceInvokeMs !== undefined) event.serviceInvokeMs = call.serviceInvokeMs;
    if (call.serviceCompleteMs !== undefined) event.serviceCompleteMs = call.serviceCompleteMs;
    return this.#write(event);
  }

  /** Resolves when the buffers are below the high-water mark again (at once if they are). */
  async drain(): Promise<void> {
    if (this.#chunk.length > 0) this.#flushChunk();
    const gzip = this.#gzip;
    while (gzip.writableNeedDrain && this.#error === undefined) {
      await new Promise<void>((resolve) => {
        const done = () => {
          gzip.off('drain', done);
          gzip.off('error', done);
          resolve();
        };
        gzip.on('drain', done);
        gzip.on('error', done);
      });
    }
    if (this.#error !== undefined) throw new Error(`Writing the history ${this.path} failed: ${this.#error.message}`);
  }

  /** Flushes everything and closes the file; rejects if anything could not be written. */
  async close(): Promise<void> {
    if (this.#closed) return this.#finished;
    this.#closed = true;
    this.#flushChunk();
    this.#gzip.end();
    await this.#finished;
    if (this.#error !== undefined) throw new Error(`Writing the history ${this.path} failed: ${this.#error.message}`);
  }

  #append(line: string): void {
    this.#chunk += `${line}\n`;
    if (this.#chunk.length >= CHUNK_BYTES) this.#flushChunk();
  }

  #flushChunk(): void {
    if (this.#chunk.length === 0) return;
    const chunk = this.#chunk;
    this.#chunk = '';
    this.#gzip.write(chunk);
  }
}

// ── reading ───────────────────────────────────────────────────────────────────────────────

/** A history file that cannot be read: the message names the file and, for a bad line, its number. */
export class HistoryFileError extends Error {
  constructor(
    readonly file: string,
    readonly line: number | undefined,
    detail: string,
  ) {
    super(line === undefined ? `${file}: ${detail}` : `${file}: line ${line}: ${detail}`);
    this.name = 'HistoryFileError';
  }
}

/** Longer lines are refused (a corrupt file must not exhaust memory). */
const MAX_LINE_CHARS = 4 * 1024 * 1024;

async function* linesOf(path: string): AsyncGenerator<{ text: string; line: number }> {
  let handle;
  try {
    handle = await open(path, 'r');
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    throw new HistoryFileError(path, undefined, code === 'ENOENT' ? 'no such file' : `cannot be opened (${error instanceof Error ? error.message : String(error)})`);
  }
  const magic = Buffer.alloc(2);
  const { bytesRead } = await handle.read(magic, 0, 2, 0);
  await handle.close();
  const gzipped = bytesRead === 2 && magic[0] === 0x1f && magic[1] === 0x8b;
  const file = createReadStream(path);
  let source: Readable = file;
  if (gzipped) {
    const gunzip = createGunzip();
    file.on('error', (error) => gunzip.destroy(error));
    source = file.pipe(gunzip);
  }
  source.setEncoding('utf8');
  let pending = '';
  let line = 0;
  try {
    for await (const chunk of source as AsyncIterable<string>) {
      pending += chunk;
      let start = 0;
      for (let nl = pending.indexOf('\n', start); nl !== -1; nl = pending.indexOf('\n', start)) {
        line++;
        yield { text: pending.slice(start, nl), line };
        start = nl + 1;
      }
      pending = pending.slice(start);
      if (pending.length > MAX_LINE_CHARS) throw new HistoryFileError(path, line + 1, `the line is longer than ${MAX_LINE_CHARS} characters`);
    }
  } catch (error) {
    if (error instanceof HistoryFileError) throw error;
    const detail = error instanceof Error ? error.message : String(error);
    throw new HistoryFileError(path, line + 1, gzipped ? `the gzip data is damaged or cut short after line ${line} (${detail})` : detail);
  } finally {
    file.destroy();
  }
  if (pending.length > 0) yield { text: pending, line: line + 1 };
}

function parseLine(path: string, text: string, line: number): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new HistoryFileError(path, line, 'not valid JSON');
  }
}

export interface OpenedHistory {
  header: HistoryHeader;
  /** The events, validated one by one as they are read (single pass). */
  events: AsyncIterable<HistoryEvent>;
}

/**
 * Opens a history (gzip or plain JSON lines) and checks its header. Iterating `events` streams the
 * file; a bad line rejects with a HistoryFileError naming its line number. Blank lines are skipped.
 */
export async function openHistory(path: string): Promise<OpenedHistory> {
  const lines = linesOf(path);
  const first = await lines.next();
  if (first.done === true) throw new HistoryFileError(path, undefined, 'the file is empty: no header line');
  let header: HistoryHeader;
  try {
    header = validHeader(parseLine(path, first.value.text, first.value.line));
  } catch (error) {
    await lines.return(undefined);
    if (error instanceof Invalid) throw new HistoryFileError(path, first.value.line, error.message);
    throw error;
  }
  async function* events(): AsyncGenerator<HistoryEvent> {
    for await (const { text, line } of lines) {
      if (text.trim() === '') continue;
      try {
        yield validEvent(parseLine(path, text, line));
      } catch (error) {
        if (error instanceof Invalid) throw new HistoryFileError(path, line, error.message);
        throw error;
      }
    }
  }
  return { header, events: events() };
}

/** Reads a whole history into memory (the checkers need all of it anyway). */
export async function readHistory(path: string): Promise<{ header: HistoryHeader; events: HistoryEvent[] }> {
  const opened = await openHistory(path);
  const events: HistoryEvent[] = [];
  for await (const event of opened.events) events.push(event);
  return { header: opened.header, events };
}
