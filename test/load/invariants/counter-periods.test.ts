/**
 * Credit counter periods per region (docs/consistency.md#credits): regional counters are created
 * at different instants, so a region's counter may straddle the 60 s periods a cut per key would
 * make. The over-spend bound is judged per region's own counter periods; these histories are ones
 * the production profile can give.
 */
import { describe, expect, test } from 'vitest';
import { type InvariantReport, judgeInvariants } from '../../../src/load/invariants/judge.js';
import { promiseSet } from '../../../src/load/promises/index.js';
import { PromiseHistory, T0 } from '../../helpers/promise-history.js';

const production = (h: PromiseHistory, overrides: Record<string, number> = {}) =>
  judgeInvariants(h.events, { wallSkewMs: 0, promises: promiseSet('production', overrides) });
const exact = (h: PromiseHistory) => judgeInvariants(h.events, { wallSkewMs: 0 });
const stateOf = (r: InvariantReport, id: string) => r.invariants.find((i) => i.id === id)?.state;

/**
 * A key of 100 credits. Region 1 creates its counter at t0 (100) and spends it all within its
 * 60 s. Region 2 creates its counter 30 s in, from the database (99: region 1's first debit has
 * landed), spends 1, then the 98 it has left 70 s in — after a cut per key would have ended the
 * first period, while region 2's counter still lives. Each region stays within the balance its
 * counter was created from; the key is over-spent by 100 ≤ (2 − 1) × 100.
 */
function straddlingCounters(named = true): PromiseHistory {
  const h = new PromiseHistory();
  const region = (r: string) => (named ? r : undefined);
  h.create(T0, 'key_s', 100);
  const t0 = T0 + 10;
  h.verify(t0, 'key_s', 'VALID', 99, region('1'));
  h.verify(t0 + 30_000, 'key_s', 'VALID', 98, region('2'));
  for (let i = 1; i <= 99; i++) h.verify(t0 + 30_000 + i * 100, 'key_s', 'VALID', 99 - i, region('1'));
  for (let i = 1; i <= 98; i++) h.verify(t0 + 70_000 + i * 10, 'key_s', 'VALID', 98 - i, region('2'));
  return h;
}

describe('counter periods per region', () => {
  test('counters created at different instants in two regions, within the promise, are not judged over the bound (a cut per key called it violated)', () => {
    const h = straddlingCounters();
    const p = production(h);
    expect(p.violations.map((v) => `${v.invariant}: ${v.message}`)).toEqual([]);
    expect(stateOf(p, 'credits.no-over-spend')).toBe('within-promise');
    expect(stateOf(p, 'credits.consistent')).toBe('within-promise');
    // No exact service grants 200 of 100.
    expect(stateOf(exact(h), 'credits.no-over-spend')).toBe('violated');
  });

  test('the same regions spending one credit more than their counters held are violated', () => {
    const h = straddlingCounters();
    const last = h.events[h.events.length - 1];
    if (last === undefined) throw new Error('empty history');
    h.verify(last.invokeMs + 10, 'key_s', 'VALID', 0, '2');
    const p = production(h);
    expect(stateOf(p, 'credits.no-over-spend')).toBe('violated');
    expect(p.violations.find((v) => v.invariant === 'credits.no-over-spend')?.message).toMatch(/region 2's counter/);
  });

  test('without regions the conservative bound holds the same history within the promise', () => {
    const p = production(straddlingCounters(false));
    expect(p.violations.map((v) => `${v.invariant}: ${v.message}`)).toEqual([]);
    expect(p.promises).toMatchObject({ regionsFrom: 'promise set' });
  });

  test('a region spending again 60 s later from a balance its debits had emptied is violated', () => {
    const h = new PromiseHistory();
    h.create(T0, 'key_e', 10);
    for (let i = 0; i < 10; i++) h.verify(T0 + 10 + i, 'key_e', 'VALID', 9 - i, '1');
    // 70 s later every debit has reached the database (0): a new counter holds nothing.
    h.verify(T0 + 70_000, 'key_e', 'VALID', 9, '1');
    expect(stateOf(production(h), 'credits.no-over-spend')).toBe('violated');
  });

  test('a top-up in one region refused in another from its older counter is within the promise (under-serve was judged with the refill lag only)', () => {
    const h = new PromiseHistory();
    h.create(T0, 'key_t', 1);
    h.verify(T0 + 10, 'key_t', 'VALID', 0, '2'); // region 2's counter: 1, now 0
    h.add('keys.updateCredits', T0 + 20, { keyId: 'key_t', operation: 'increment', value: 5 }, { status: 200, remaining: 5 }, '1');
    // Region 2 counts from its counter until it is 60 s old: the top-up is not there yet.
    h.verify(T0 + 30_000, 'key_t', 'USAGE_EXCEEDED', 0, '2');
    expect(stateOf(exact(h), 'credits.no-under-serve')).toBe('violated');
    const p = production(h);
    expect(p.violations.map((v) => `${v.invariant}: ${v.message}`)).toEqual([]);
    expect(stateOf(p, 'credits.no-under-serve')).toBe('within-promise');
    // 60 s after the top-up every region's counter has been created again: a refusal sent after
    // the first operation past that instant is a violation.
    h.verify(T0 + 20 + 61_000, 'key_t', 'USAGE_EXCEEDED', 0, '2');
    h.verify(T0 + 20 + 62_000, 'key_t', 'USAGE_EXCEEDED', 0, '2');
    expect(stateOf(production(h), 'credits.no-under-serve')).toBe('violated');
  });
});
