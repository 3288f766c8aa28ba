/**
 * Building history records from requests and answers: field by field from a whitelist, so an
 * unexpected field of a request body cannot slip through, and never a key plaintext (the key-id
 * directory maps it to its id).
 */
import { createHash } from 'node:crypto';
import type {
  HistoryCredits,
  HistoryLimitOutcome,
  HistoryLimitRequest,
  HistoryOutcome,
  HistoryRefill,
  HistoryRequest,
  HistoryVerifyRateLimit,
  HistoryVerifyRateLimitOutcome,
} from './history-format.js';
import type { Operation } from '../scenario/index.js';

/** A plain object (not null, not an array). */
export function isObject(value: unknown): value is Record<string, unknown> {
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
          if (id === undefined || name === undefined || limit === undefined || duration === undefined || reset === undefined || remaining === undefined)
            continue;
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

  /** What it learned, as (key digest, key id) pairs: no key, only its SHA-256. */
  entries(): Array<[string, string]> {
    return [...this.#ids.entries()];
  }

  /**
   * Learns the pairs another run's directory exported: segments of a shared set-up name the keys
   * it created by id from their first request on, even one whose answer never comes.
   */
  learnDigests(pairs: ReadonlyArray<readonly [string, string]>): void {
    for (const [digest, keyId] of pairs) this.#ids.set(digest, keyId);
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
