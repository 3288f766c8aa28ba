/**
 * Synthetic histories of a service with regional counters (docs/consistency.md): what the
 * promise-set tests judge. Every operation is sequential (its service bracket is its wall bracket),
 * so the only departures from the exact model are the ones built in.
 */
import type { HistoryEvent, HistoryOutcome, HistoryRequest } from '../../src/load/history/history.js';
import type { Operation } from '../../src/load/scenario/scenario.js';

/** Wall and service time of the histories' first operation. */
export const T0 = Date.UTC(2027, 0, 15, 12);
const MINUTE = 60_000;

export class PromiseHistory {
  readonly events: HistoryEvent[] = [];
  #seq = 0;

  add(op: Operation, atMs: number, request: HistoryRequest, outcome: HistoryOutcome, region?: string): HistoryEvent {
    const event: HistoryEvent = {
      seq: this.#seq++,
      op,
      invokeMs: atMs,
      completeMs: atMs + 2,
      serviceInvokeMs: atMs,
      serviceCompleteMs: atMs + 2,
      request,
      outcome,
    };
    if (region !== undefined) event.region = region;
    this.events.push(event);
    return event;
  }

  create(atMs: number, keyId: string, remaining: number, refill?: { interval: 'daily'; amount: number }): HistoryEvent {
    return this.add('keys.createKey', atMs, { credits: refill === undefined ? { remaining } : { remaining, refill } }, { status: 200, keyId });
  }

  verify(atMs: number, keyId: string, code: 'VALID' | 'USAGE_EXCEEDED', credits: number, region?: string): HistoryEvent {
    return this.add('keys.verifyKey', atMs, { keyId }, { status: 200, code, valid: code === 'VALID', keyId, credits }, region);
  }

  limit(atMs: number, identifier: string, limit: number, success: boolean, region?: string): HistoryEvent {
    const reset = (Math.floor(atMs / MINUTE) + 1) * MINUTE;
    return this.add(
      'ratelimit.limit',
      atMs,
      { namespace: 'ns', identifier, limit, duration: MINUTE },
      { status: 200, limit, remaining: 0, reset, success },
      region,
    );
  }
}

/**
 * A key of `balance` credits spent by cost-1 VALID answers from two regional counters, both created
 * from that balance within one 60 s period: region 1 spends `first`, region 2 `second`, each
 * reporting its own counter's balance (never below 0). The over-spend is first + second − balance.
 */
export function twoRegionSpend(balance: number, first: number, second: number, named = true): PromiseHistory {
  const h = new PromiseHistory();
  h.create(T0, 'key_p', balance);
  let at = T0 + 10;
  const spend = (region: string, count: number) => {
    for (let i = 1; i <= count; i++) {
      h.verify(at, 'key_p', 'VALID', Math.max(0, balance - i), named ? region : undefined);
      at += 5;
    }
  };
  spend('1', first);
  spend('2', second);
  return h;
}

/** `admitted` requests admitted of a limit of 100 in one 60 s window (then one denied). */
export function overAdmitted(admitted: number, limit = 100): PromiseHistory {
  const h = new PromiseHistory();
  const window = Math.ceil(T0 / MINUTE) * MINUTE;
  for (let i = 0; i < admitted; i++) h.limit(window + 10 + i * 5, 'user_1', limit, true);
  return h;
}

/** A key drained before midnight whose daily refill of 5 is first seen `lateMs` after the boundary. */
export function lateRefill(lateMs: number): PromiseHistory {
  const h = new PromiseHistory();
  const midnight = Date.UTC(2027, 0, 16);
  h.create(midnight - MINUTE, 'key_r', 1, { interval: 'daily', amount: 5 });
  h.verify(midnight - MINUTE + 10, 'key_r', 'VALID', 0);
  // Refused after the boundary, until the refill shows lateMs after it.
  for (let t = midnight + 1_000; t < midnight + lateMs; t += 10_000) h.verify(t, 'key_r', 'USAGE_EXCEEDED', 0);
  h.verify(midnight + lateMs, 'key_r', 'VALID', 4);
  return h;
}
