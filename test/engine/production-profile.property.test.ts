/**
 * Properties of the production profile over any seed and any interleaving of verifications
 * across regions and time: each region's counter spends at most the balance it was created
 * from (so a key is over-spent by at most (regions − 1) × its balance per counter period), the
 * database ends at the balance less every valid debit, and a seed replays the same answers.
 */
import fc from 'fast-check';
import { describe, it, expect } from 'vitest';
import { PRODUCTION_FIGURES } from '../../src/engine/index.js';
import { unwrap } from '../helpers/engine.js';
import { assertProperty } from '../helpers/property.js';
import { makeProfile } from '../helpers/production.js';

interface Step {
  region: number;
  cost: number;
  advanceMs: number;
}

const TTL = PRODUCTION_FIGURES.counterTtlMs;

const scenario = fc.record({
  seed: fc.integer({ min: 1, max: 0x7fff_ffff }),
  regions: fc.integer({ min: 1, max: 4 }),
  balance: fc.integer({ min: 1, max: 40 }),
  steps: fc.array(fc.record({ region: fc.integer({ min: 1, max: 4 }), cost: fc.integer({ min: 0, max: 3 }), advanceMs: fc.integer({ min: 0, max: 8_000 }) }), {
    // Long interleavings: counters expire and are created again within one case.
    minLength: 10,
    maxLength: 120,
    size: 'large',
  }),
});

/** One counter's life in one region, as seen from outside: the balance it began with, what it spent. */
interface Period {
  startMs: number;
  createdFrom: number;
  spent: number;
}

function run(seed: number, regions: number, balance: number, steps: readonly Step[]) {
  const fx = makeProfile({ seed, regions });
  const { key, keyId } = fx.createKey({ credits: { remaining: balance } });
  const periods = new Map<number, Period[]>();
  const answers: unknown[] = [];
  let debited = 0;
  for (const step of steps) {
    const region = 1 + ((step.region - 1) % regions);
    const now = fx.clock.now();
    const mine = periods.get(region) ?? [];
    const current = mine.at(-1);
    if (current === undefined || now >= current.startMs + TTL) {
      // The region creates its counter from the database now (the debits due by now landed).
      mine.push({ startMs: now, createdFrom: fx.balance(keyId) ?? 0, spent: 0 });
      periods.set(region, mine);
    }
    const out = unwrap(fx.region(region).keys.verifyKey(fx.rootKey, { key, credits: { cost: step.cost } }));
    answers.push(out);
    if (out.valid) {
      (mine.at(-1) as Period).spent += step.cost;
      debited += step.cost;
    }
    fx.clock.advance(step.advanceMs);
  }
  fx.converge();
  return { answers, periods, debited, finalBalance: fx.balance(keyId) };
}

describe('production profile properties', () => {
  it('no counter period of any region spends more than the balance its counter was created from', () => {
    assertProperty(
      fc.property(scenario, ({ seed, regions, balance, steps }) => {
        const { periods } = run(seed, regions, balance, steps);
        for (const [region, list] of periods) {
          for (const p of list) {
            if (p.spent > p.createdFrom) throw new Error(`region ${region}: spent ${p.spent} from a counter created at ${p.createdFrom}`);
          }
        }
        // So within one TTL period from any counter's creation, a key is over-spent by at most
        // (regions − 1) × the largest balance a counter was created from.
        const all = [...periods.values()].flat();
        for (const p of all) {
          const overlapping = all.filter((q) => q.startMs < p.startMs + TTL && q.startMs + TTL > p.startMs && q.startMs >= p.startMs);
          const spent = overlapping.reduce((sum, q) => sum + q.spent, 0);
          const largest = Math.max(...overlapping.map((q) => q.createdFrom));
          expect(spent).toBeLessThanOrEqual(regions * largest);
        }
      }),
      { numRuns: 150 },
    );
  });

  it('after the replays the database holds the balance less every valid debit, floored at 0', () => {
    assertProperty(
      fc.property(scenario, ({ seed, regions, balance, steps }) => {
        const { debited, finalBalance } = run(seed, regions, balance, steps);
        expect(finalBalance).toBe(Math.max(0, balance - debited));
      }),
      { numRuns: 150 },
    );
  });

  it('the same seed and interleaving give the same answers', () => {
    assertProperty(
      fc.property(scenario, ({ seed, regions, balance, steps }) => {
        expect(run(seed, regions, balance, steps)).toEqual(run(seed, regions, balance, steps));
      }),
      { numRuns: 60 },
    );
  });
});
