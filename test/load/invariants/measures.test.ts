/**
 * The checkers' measures (docs/consistency.md#measures) on hand-made histories: each figure as
 * defined, its promise under the set in force, and answers that never came counted as unknown,
 * never as samples.
 */
import { describe, expect, test } from 'vitest';
import { judgeInvariants } from '../../../src/load/invariants/judge.js';
import { windowName } from '../../../src/load/invariants/measures.js';
import { promiseSet } from '../../../src/load/promises/index.js';
import type { Measure } from '../../../src/report/model.js';
import { PromiseHistory, T0, lateRefill, overAdmitted, twoRegionSpend } from '../../helpers/promise-history.js';

const MINUTE = 60_000;
const measuresOf = (h: PromiseHistory, production = false) =>
  judgeInvariants(h.events, { wallSkewMs: 0, ...(production ? { promises: promiseSet('production') } : {}) }).measures ?? [];
const named = (measures: readonly Measure[], name: string) => measures.find((m) => m.name === name);

/** `admitted` of a limit of 100 admitted in one 60 s window, then a denial. */
function deniedAfter(admitted: number): PromiseHistory {
  const h = overAdmitted(admitted);
  const last = h.events[h.events.length - 1];
  if (last === undefined) throw new Error('empty history');
  h.limit(last.invokeMs + 5, 'user_1', 100, false);
  return h;
}

describe('rate-limit measures', () => {
  test('over-admission: one sample per window, the share of its admitted cost over the limit; promise 0.20 × regions, 0 under exact', () => {
    const production = named(measuresOf(overAdmitted(107), true), 'ratelimit.over-admission.60s');
    expect(production).toMatchObject({ unit: 'share', count: 1, source: 'history', promise: 0.4 });
    expect(production?.max).toBeCloseTo(0.07);
    expect(named(measuresOf(overAdmitted(107)), 'ratelimit.over-admission.60s')).toMatchObject({ count: 1, promise: 0 });
    // A window within its limit is a sample of 0.
    expect(named(measuresOf(overAdmitted(50)), 'ratelimit.over-admission.60s')).toMatchObject({ count: 1, max: 0 });
  });

  test('under-admission: one sample per denial, the share of the limit not yet usable (0 once reached); promise 1 − 0.95', () => {
    const early = named(measuresOf(deniedAfter(90), true), 'ratelimit.under-admission.60s');
    expect(early).toMatchObject({ count: 1 });
    expect(early?.max).toBeCloseTo(0.09); // (100 − 90 − 1) / 100
    expect(early?.promise).toBeCloseTo(0.05);
    expect(named(measuresOf(deniedAfter(100), true), 'ratelimit.under-admission.60s')).toMatchObject({ count: 1, max: 0 });
    expect(named(measuresOf(overAdmitted(50)), 'ratelimit.under-admission.60s')).toBeUndefined();
  });

  test('one measure per window size, named 60s, 1s, 500ms', () => {
    expect([60_000, 1_000, 500, 1_500].map(windowName)).toEqual(['60s', '1s', '500ms', '1500ms']);
    const h = new PromiseHistory();
    const at = Math.ceil(T0 / MINUTE) * MINUTE + 10;
    h.add(
      'ratelimit.limit',
      at,
      { namespace: 'ns', identifier: 'a', limit: 5, duration: 1_000 },
      { status: 200, limit: 5, remaining: 4, reset: at - 10 + 1_000, success: true },
    );
    h.add(
      'ratelimit.limit',
      at,
      { namespace: 'ns', identifier: 'b', limit: 5, duration: 60_000 },
      { status: 200, limit: 5, remaining: 4, reset: at - 10 + 60_000, success: true },
    );
    expect(measuresOf(h).map((m) => m.name)).toEqual(['ratelimit.over-admission.1s', 'ratelimit.over-admission.60s']);
  });

  test('an admission whose answer never came is unknown, not a sample', () => {
    const h = overAdmitted(10);
    const lost = h.limit(Math.ceil(T0 / MINUTE) * MINUTE + 5 * MINUTE, 'user_1', 100, true);
    lost.outcome = 'unknown';
    expect(named(measuresOf(h), 'ratelimit.over-admission.60s')).toMatchObject({ count: 1, unknown: 1 });
  });
});

describe('credit measures', () => {
  test('over-spend: per key and counter period, the credits granted beyond the exact balance; the period’s bound as promise', () => {
    const production = named(measuresOf(twoRegionSpend(100, 100, 60), true), 'credits.over-spend');
    expect(production).toMatchObject({ unit: 'credits', count: 1, max: 60, promise: 100 });
    // Exact: one exact counter, no over-spend allowed.
    expect(named(measuresOf(twoRegionSpend(100, 100, 60)), 'credits.over-spend')).toMatchObject({ count: 1, max: 60, promise: 0 });
    expect(named(measuresOf(twoRegionSpend(100, 50, 0)), 'credits.over-spend')).toMatchObject({ count: 1, max: 0 });
  });

  test('over-spend: no promise when the periods’ bounds differ', () => {
    const h = twoRegionSpend(100, 100, 60);
    h.create(T0 + 1, 'key_q', 10);
    h.verify(T0 + 2_000, 'key_q', 'VALID', 9, '1');
    const m = named(measuresOf(h, true), 'credits.over-spend');
    expect(m).toMatchObject({ count: 2, max: 60 });
    expect(m?.promise).toBeUndefined();
  });

  test('under-serve: per refusal, the credits surely left beyond cost − 1; promise 0 under exact, none under production', () => {
    const h = new PromiseHistory();
    h.create(T0, 'key_u', 5);
    h.verify(T0 + 10, 'key_u', 'VALID', 4, '1');
    h.verify(T0 + 20, 'key_u', 'USAGE_EXCEEDED', 4, '2'); // 4 surely left, cost 1: 4 beyond the 0 a refusal allows
    expect(named(measuresOf(h), 'credits.under-serve')).toMatchObject({ unit: 'credits', count: 1, max: 4, promise: 0 });
    const p = named(measuresOf(h, true), 'credits.under-serve');
    expect(p).toMatchObject({ count: 1, max: 4 });
    expect(p?.promise).toBeUndefined();
  });

  test('lag.refill: per refill judged, how late an answer still saw the balance before it; promise refillLagMs', () => {
    // Refused 1 s, 11 s and 21 s after midnight, the refill seen 30 s after it.
    expect(named(measuresOf(lateRefill(30_000), true), 'lag.refill')).toMatchObject({ unit: 'ms', count: 1, max: 21_000, promise: 60_000 });
    expect(named(measuresOf(lateRefill(1_000)), 'lag.refill')).toMatchObject({ count: 1, max: 0, promise: 0 });
  });
});
