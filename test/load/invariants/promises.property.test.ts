/**
 * Property: histories generated from a 2-region counter model (each region spends from its own
 * counter, created from the database balance at the period's start, living 60 s) over-spend by at
 * most (regions − 1) × that balance, and production judging never reports a violation on them;
 * one more VALID beyond the bound in a period is always caught. The seed is printed.
 */
import fc from 'fast-check';
import { expect, test } from 'vitest';
import { judgeInvariants } from '../../../src/load/invariants/judge.js';
import { promiseSet } from '../../../src/load/promises/index.js';
import { PromiseHistory, T0 } from '../../helpers/promise-history.js';
import { assertProperty } from '../../helpers/property.js';

/** One period: which region answers each verification, in order (the counter decides VALID or refused). */
const periodArb = fc.array(fc.constantFrom('1', '2'), { minLength: 0, maxLength: 40 });
const modelArb = fc.record({ balance: fc.integer({ min: 0, max: 20 }), periods: fc.array(periodArb, { minLength: 1, maxLength: 4 }), named: fc.boolean() });
type Model = typeof modelArb extends fc.Arbitrary<infer M> ? M : never;

const PERIOD_MS = 61_000;

/** The history the model gives; `extra`: one more VALID beyond the bound in the last period. */
function history(model: Model, extra: boolean): PromiseHistory {
  const h = new PromiseHistory();
  h.create(T0, 'key_p', model.balance);
  let db = model.balance;
  for (const [p, answers] of model.periods.entries()) {
    const counters = new Map([
      ['1', db],
      ['2', db],
    ]);
    let at = T0 + 10 + p * PERIOD_MS;
    let spent = 0;
    const spend = (region: string) => {
      const left = counters.get(region) as number;
      const region_ = model.named ? region : undefined;
      if (left > 0) {
        counters.set(region, left - 1);
        h.verify(at, 'key_p', 'VALID', left - 1, region_);
        spent++;
      } else {
        h.verify(at, 'key_p', 'USAGE_EXCEEDED', 0, region_);
      }
      at += 5;
    };
    for (const region of answers) spend(region);
    if (extra && p === model.periods.length - 1) {
      // Both counters spent to 0 (over-spend = db, the bound), then one VALID more.
      for (const region of ['1', '2']) while ((counters.get(region) as number) > 0) spend(region);
      h.verify(at, 'key_p', 'VALID', 0, model.named ? '2' : undefined);
    }
    db = Math.max(0, db - spent);
  }
  return h;
}

const production = (h: PromiseHistory) => judgeInvariants(h.events, { wallSkewMs: 0, promises: promiseSet('production') });

test('a 2-region counter history within (regions − 1) × balance is never a violation under production; one VALID beyond is always caught', () => {
  const seed = (Math.random() * 0x7fff_ffff) | 0;
  console.log(`promises property seed: ${seed}`);
  assertProperty(
    fc.property(modelArb, (model) => {
      const within = production(history(model, false));
      expect(within.violations.map((v) => `${v.invariant}: ${v.message}`)).toEqual([]);
      const beyond = production(history(model, true));
      expect(beyond.invariants.find((i) => i.id === 'credits.no-over-spend')?.state).toBe('violated');
    }),
    { seed, numRuns: 60 },
  );
});
