/**
 * Verdicts under a promise set (docs/consistency.md): synthetic histories of a service with
 * regional counters are within promise under `production` and violated under `exact`; what goes
 * beyond a bound derived from the run is violated under both.
 */
import { describe, expect, test } from 'vitest';
import { type InvariantId, type InvariantReport, judgeInvariants } from '../../../src/load/invariants/judge.js';
import { promiseSet } from '../../../src/load/promises/index.js';
import { lateRefill, overAdmitted, twoRegionSpend } from '../../helpers/promise-history.js';

const exact = (events: Parameters<typeof judgeInvariants>[0]) => judgeInvariants(events, { wallSkewMs: 0 });
const production = (events: Parameters<typeof judgeInvariants>[0], overrides: Record<string, number> = {}) =>
  judgeInvariants(events, { wallSkewMs: 0, promises: promiseSet('production', overrides) });

function stateOf(report: InvariantReport, id: InvariantId) {
  const verdict = report.invariants.find((i) => i.id === id);
  if (verdict === undefined) throw new Error(`no verdict for ${id}`);
  return verdict;
}

describe('credits over-spend', () => {
  test('a 2-region over-spend inside (regions − 1) × balance is within promise under production, violated under exact', () => {
    const h = twoRegionSpend(100, 100, 60);
    const e = exact(h.events);
    expect(stateOf(e, 'credits.no-over-spend').state).toBe('violated');
    expect(e.passed).toBe(false);
    const p = production(h.events);
    expect(p.violations.map((v) => v.message)).toEqual([]);
    expect(p.passed).toBe(true);
    const verdict = stateOf(p, 'credits.no-over-spend');
    expect(verdict.state).toBe('within-promise');
    expect(verdict.passed).toBe(true);
    expect(verdict.measured).toMatch(
      /over-spend 60 credits ≤ bound 100 .*; judged per regional counter: 2 periods, each within the balance it was created from/,
    );
    expect(stateOf(p, 'credits.consistent').state).toBe('within-promise');
    expect(p.promises).toMatchObject({ name: 'production', regions: 2, regionsFrom: 'history' });
  });

  test('an over-spend beyond the bound is violated under both', () => {
    const h = twoRegionSpend(100, 100, 101);
    expect(stateOf(exact(h.events), 'credits.no-over-spend').state).toBe('violated');
    const p = production(h.events);
    const verdict = stateOf(p, 'credits.no-over-spend');
    expect(verdict.state).toBe('violated');
    expect(verdict.measured).toMatch(/over-spend 101 credits > bound 100 .*not all within the balance/);
    expect(p.passed).toBe(false);
    expect(p.violations.find((v) => v.invariant === 'credits.no-over-spend')?.message).toMatch(
      /region 2's counter .* beyond the database balance it was created from: at most 100 credits/,
    );
  });

  test('the bound counts the regions the history names, not the promise set’s: one named region bounds the over-spend at 0', () => {
    const h = twoRegionSpend(100, 100, 60);
    for (const e of h.events) if (e.region !== undefined) e.region = '1';
    expect(stateOf(production(h.events), 'credits.no-over-spend').state).toBe('violated');
  });

  test('without region attribution the promise set’s regions count', () => {
    const h = twoRegionSpend(100, 100, 60, false);
    expect(production(h.events).promises).toMatchObject({ regions: 2, regionsFrom: 'promise set' });
    expect(stateOf(production(h.events), 'credits.no-over-spend').state).toBe('within-promise');
    expect(stateOf(production(h.events, { regions: 1 }), 'credits.no-over-spend').state).toBe('violated');
  });

  test('an over-spend spread over two TTL periods is judged per period', () => {
    const h = twoRegionSpend(100, 100, 60);
    // The same 60 over-spend, but with a TTL of 1 ms each answer is its own counter: once region
    // 1's debits reached the database (a replay of 0 ms), region 2's counters start from 0.
    expect(stateOf(production(h.events, { creditTtlMs: 1, creditReplayMs: 0 }), 'credits.no-over-spend').state).toBe('violated');
    // With the debits still on their way (5 s), region 2's counters may start from the full balance.
    expect(stateOf(production(h.events, { creditTtlMs: 1 }), 'credits.no-over-spend').state).toBe('within-promise');
  });
});

describe('rate-limit admission', () => {
  test('over-admission of 7 % with 2 regions is within promise (band 40 % + two requests), violated under exact', () => {
    const h = overAdmitted(107);
    expect(stateOf(exact(h.events), 'ratelimit.no-over-admission').state).toBe('violated');
    const verdict = stateOf(production(h.events), 'ratelimit.no-over-admission');
    expect(verdict.state).toBe('within-promise');
    expect(verdict.measured).toMatch(/over-admission 7 % ≤ 40 % \(20 % × 2 regions\) \+ 2 × the largest request cost/);
  });

  test('over-admission of 43 % is violated under production too (band 40 % + two requests of cost 1)', () => {
    expect(stateOf(production(overAdmitted(142).events), 'ratelimit.no-over-admission').state).toBe('within-promise');
    const p = production(overAdmitted(143).events);
    expect(stateOf(p, 'ratelimit.no-over-admission').state).toBe('violated');
    expect(p.passed).toBe(false);
  });

  test('a denial once 95 % of the limit was used is within promise; at 90 % a false denial', () => {
    const h = overAdmitted(96);
    const last = h.events[h.events.length - 1];
    if (last === undefined) throw new Error('empty history');
    h.limit(last.invokeMs + 5, 'user_1', 100, false);
    expect(stateOf(exact(h.events), 'ratelimit.no-false-denial').state).toBe('violated');
    expect(stateOf(production(h.events), 'ratelimit.no-false-denial').state).toBe('within-promise');
    const early = overAdmitted(90);
    const end = early.events[early.events.length - 1];
    if (end === undefined) throw new Error('empty history');
    early.limit(end.invokeMs + 5, 'user_1', 100, false);
    expect(stateOf(production(early.events), 'ratelimit.no-false-denial').state).toBe('violated');
  });
});

describe('refills', () => {
  test('a refill seen 30 s late is within promise under production, violated under exact', () => {
    const h = lateRefill(30_000);
    expect(stateOf(exact(h.events), 'credits.refill').state).toBe('violated');
    const verdict = stateOf(production(h.events), 'credits.refill');
    expect(verdict.state).toBe('within-promise');
    expect(production(h.events).passed).toBe(true);
  });

  test('a refill seen 90 s late is violated under production (lag 60 s)', () => {
    expect(stateOf(production(lateRefill(90_000).events), 'credits.refill').state).toBe('violated');
  });
});

describe('exact, the default', () => {
  test('without a promise set each verdict is exact, violated or unknown and the report names no set', () => {
    const r = exact(twoRegionSpend(100, 50, 0).events);
    expect(r.promises).toBeUndefined();
    expect(stateOf(r, 'credits.no-over-spend').state).toBe('exact');
    expect(stateOf(r, 'ratelimit.no-over-admission').state).toBe('unknown');
  });

  test('--consistency exact judges as before, bit for bit', () => {
    const h = twoRegionSpend(100, 100, 60);
    const before = exact(h.events);
    const named = judgeInvariants(h.events, { wallSkewMs: 0, promises: promiseSet('exact') });
    expect(named.violations).toEqual(before.violations);
    expect(named.invariants).toEqual(before.invariants);
  });
});
