/**
 * Rate limits in the production profile's regions (src/engine/production/regional-windows.ts):
 * each region decides on its own copy of a counter, publishes at a share of the limit, syncs on
 * its seeded period, stays strict after a denial, and caches overrides.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PRODUCTION_FIGURES } from '../../src/engine/index.js';
import { unwrap } from '../helpers/engine.js';
import { assertProperty } from '../helpers/property.js';
import { type ProfileFixture, makeProfile } from '../helpers/production.js';

const WINDOW_MS = 60_000;
/** A window start: nothing of a previous window weighs on the counts. */
const START_MS = Math.ceil(Date.UTC(2027, 0, 15, 12) / WINDOW_MS) * WINDOW_MS;

function limit(fx: ProfileFixture, region: number, input: { identifier?: string; limit?: number; duration?: number; cost?: number } = {}) {
  return unwrap(fx.region(region).ratelimit.limit(fx.rootKey, { namespace: 'api', identifier: 'user', limit: 10, duration: WINDOW_MS, ...input }));
}

describe('regional rate-limit counters', () => {
  it('a limit of 10 alternated over two regions admits more than 10 in one window, but no more than 10 + 2 × (20 % of 10 + 1)', () => {
    const fx = makeProfile({ startMs: START_MS });
    let admitted = 0;
    for (let i = 0; i < 40; i++) if (limit(fx, 1 + (i % 2)).success) admitted++;
    expect(admitted).toBeGreaterThan(10);
    expect(admitted).toBeLessThanOrEqual(10 + 2 * 3);
  });

  it('one region alone admits exactly the limit', () => {
    const fx = makeProfile({ startMs: START_MS, regions: 1 });
    const successes = Array.from({ length: 30 }, () => limit(fx, 1).success);
    expect(successes.filter(Boolean)).toHaveLength(10);
  });

  it('what a region admitted reaches the other region at its next pull (5 s fresh)', () => {
    const fx = makeProfile({ startMs: START_MS });
    expect(limit(fx, 2, { cost: 0 }).remaining).toBe(10); // region 2 pulls 0
    for (let i = 0; i < 10; i++) expect(limit(fx, 1).success).toBe(true);
    // Region 1 published every 2 (20 % of 10): the database counts 10; region 2's copy still says 0.
    expect(limit(fx, 2, { cost: 0 }).remaining).toBe(10);
    fx.clock.advance(PRODUCTION_FIGURES.rateLimitFreshMs);
    expect(limit(fx, 2)).toMatchObject({ success: false, remaining: 0 });
  });

  it('after a denial a region stays strict until the window ends, though the sliding window would admit', () => {
    const fx = makeProfile({ startMs: START_MS, regions: 1 });
    const duration = 10_000;
    for (let i = 0; i < 10; i++) expect(limit(fx, 1, { duration }).success).toBe(true);
    // The next window, 1 s in: the previous window weighs 9, so one more fits, then none.
    fx.clock.set(START_MS + duration + 1_000);
    expect(limit(fx, 1, { duration }).success).toBe(true);
    expect(limit(fx, 1, { duration }).success).toBe(false);
    // 6 s in, the previous window weighs 4: the exact engine would admit; this region is strict.
    fx.clock.set(START_MS + duration + 6_000);
    expect(limit(fx, 1, { duration }).success).toBe(false);
    // The window ended: strict no more.
    fx.clock.set(START_MS + 2 * duration);
    expect(limit(fx, 1, { duration }).success).toBe(true);
  });

  it('an override set in region 1 applies there at once, and in region 2 only once its cached answer is 60 s old', () => {
    const fx = makeProfile({ startMs: START_MS });
    expect(limit(fx, 2).limit).toBe(10); // region 2 caches "no override"
    unwrap(fx.region(1).ratelimit.setOverride(fx.rootKey, { namespace: 'api', identifier: 'user', limit: 1, duration: WINDOW_MS }));
    expect(limit(fx, 1).limit).toBe(1);
    expect(limit(fx, 2).limit).toBe(10);
    fx.clock.advance(PRODUCTION_FIGURES.overrideCacheMs);
    expect(limit(fx, 2).limit).toBe(1);
  });

  it("a key's rate limit in verification is decided by the region too", () => {
    const fx = makeProfile({ startMs: START_MS });
    const { key } = fx.createKey({ ratelimits: [{ name: 'calls', limit: 10, duration: WINDOW_MS, autoApply: true }] });
    let valid = 0;
    for (let i = 0; i < 40; i++) if (unwrap(fx.region(1 + (i % 2)).keys.verifyKey(fx.rootKey, { key })).valid) valid++;
    expect(valid).toBeGreaterThan(10);
    expect(valid).toBeLessThanOrEqual(16);
  });
});

describe('regional rate-limit bound', () => {
  it('for any seed and interleaving, a window admits at most limit + regions × (20 % of the limit + the largest cost)', () => {
    // Two steps in three at the same instant: bursts, where regions drift most.
    const scenario = fc.record({
      seed: fc.integer({ min: 1, max: 0x7fff_ffff }),
      regions: fc.integer({ min: 1, max: 4 }),
      limit: fc.integer({ min: 1, max: 30 }),
      steps: fc.array(
        fc.record({
          region: fc.integer({ min: 1, max: 4 }),
          cost: fc.integer({ min: 0, max: 2 }),
          advanceMs: fc.oneof(fc.constant(0), fc.constant(0), fc.integer({ min: 0, max: 2_000 })),
        }),
        {
          minLength: 20,
          maxLength: 200,
          size: 'large',
        },
      ),
    });
    const duration = 10_000;
    assertProperty(
      fc.property(scenario, ({ seed, regions, limit: max, steps }) => {
        const fx = makeProfile({ startMs: START_MS, seed, regions });
        const admitted = new Map<number, number>();
        for (const step of steps) {
          const region = 1 + ((step.region - 1) % regions);
          const window = Math.floor(fx.clock.now() / duration);
          if (limit(fx, region, { limit: max, duration, cost: step.cost }).success) admitted.set(window, (admitted.get(window) ?? 0) + step.cost);
          fx.clock.advance(step.advanceMs);
        }
        const bound = max + regions * (PRODUCTION_FIGURES.rateLimitPublishShare * max + 2);
        for (const [window, cost] of admitted) if (cost > bound) throw new Error(`window ${window}: ${cost} admitted, bound ${bound}`);
      }),
      { numRuns: 150 },
    );
  });
});
