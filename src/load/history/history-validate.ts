/** Validation of history lines: the reader and the writer share it (what is written is what is read). */
import {
  HISTORY_FORMAT,
  HISTORY_VERSION,
  type HistoryCredits,
  type HistoryEvent,
  type HistoryHeader,
  type HistoryLimitOutcome,
  type HistoryLimitRequest,
  type HistoryOutcome,
  type HistoryRefill,
  type HistoryRequest,
  type HistoryVerifyRateLimit,
} from './history-format.js';
import { isObject } from './history-events.js';
import { OPERATIONS, type Operation } from '../scenario/index.js';

export const OPERATION_SET: ReadonlySet<string> = new Set(OPERATIONS);

/** A line that is not what the format allows (the reader adds the file and line number). */
export class Invalid extends Error {}

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
  need(
    namespace !== undefined && identifier !== undefined && limit !== undefined && duration !== undefined,
    `${where} needs namespace, identifier, limit and duration`,
  );
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
        id !== undefined &&
          name !== undefined &&
          limit !== undefined &&
          duration !== undefined &&
          reset !== undefined &&
          remaining !== undefined &&
          exceeded !== undefined,
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
export function validEvent(v: unknown): HistoryEvent {
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
  put(event, 'origin', optStr(v, 'origin', 'event'));
  put(event, 'region', optStr(v, 'region', 'event'));
  return event;
}

export function validHeader(v: unknown): HistoryHeader {
  need(isObject(v) && v.format === HISTORY_FORMAT, `the first line must be the header {"format":"${HISTORY_FORMAT}",…}: this is not a keysim history`);
  need(v.version === HISTORY_VERSION, `unsupported history version ${JSON.stringify(v.version)} (this keysim reads version ${HISTORY_VERSION})`);
  const header: HistoryHeader = { format: HISTORY_FORMAT, version: HISTORY_VERSION };
  put(header, 'startedAt', optStr(v, 'startedAt', 'header'));
  const skew = optNum(v, 'wallSkewMs', 'header');
  if (skew !== undefined) need(skew >= 0, 'header.wallSkewMs must be ≥ 0');
  put(header, 'wallSkewMs', skew);
  put(header, 'host', optStr(v, 'host', 'header'));
  if (v.combined !== undefined) {
    need(Array.isArray(v.combined) && v.combined.every((c) => typeof c === 'string'), 'header.combined must be an array of strings');
    header.combined = v.combined as string[];
  }
  if (v.run !== undefined) {
    need(isObject(v.run), 'header.run must be an object');
    const run: NonNullable<HistoryHeader['run']> = {};
    put(run, 'scenario', optStr(v.run, 'scenario', 'header.run'));
    put(run, 'seed', optNum(v.run, 'seed', 'header.run'));
    if (v.run.target !== undefined) {
      need(v.run.target === 'simulator' || v.run.target === 'live', 'header.run.target must be "simulator" or "live"');
      run.target = v.run.target;
    }
    put(run, 'tag', optStr(v.run, 'tag', 'header.run'));
    if (v.run.segment !== undefined) {
      const segment = v.run.segment;
      need(isObject(segment), 'header.run.segment must be an object');
      const { index, count } = segment;
      need(
        typeof index === 'number' && typeof count === 'number' && Number.isSafeInteger(index) && Number.isSafeInteger(count) && index >= 0 && index < count,
        'header.run.segment needs whole numbers index < count',
      );
      run.segment = { index, count };
    }
    if (v.run.setUp !== undefined) {
      need(v.run.setUp === 'own' || v.run.setUp === 'shared' || v.run.setUp === 'setup-only', 'header.run.setUp must be "own", "shared" or "setup-only"');
      run.setUp = v.run.setUp;
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
    if (error instanceof Invalid) throw new TypeError(`Not a valid history event: ${error.message}.`, { cause: error });
    throw error;
  }
}
