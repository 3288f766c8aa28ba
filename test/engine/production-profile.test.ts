/**
 * The production profile (src/engine/production/): regions with their own credit counters and key
 * caches in front of the exact engine as database, and the debits replayed to it later.
 */
import { describe, expect, it } from 'vitest';
import { Engine, ManualClock, PRODUCTION_FIGURES, ProductionProfile, type VerifyKeyOutput } from '../../src/engine/index.js';
import { unwrap } from '../helpers/engine.js';
import { type ProfileFixture, makeProfile } from '../helpers/production.js';

const TTL = PRODUCTION_FIGURES.counterTtlMs;

function verify(fx: ProfileFixture, region: number, key: string, cost = 1): VerifyKeyOutput {
  return unwrap(fx.region(region).keys.verifyKey(fx.rootKey, { key, credits: { cost } }));
}

describe('credits in regional counters', () => {
  it('a key of 100 credits verified alternately in two regions gives more than 100 VALID, at most 200, within one TTL', () => {
    const fx = makeProfile();
    const { key, keyId } = fx.createKey({ credits: { remaining: 100 } });
    let valid = 0;
    for (let i = 0; i < 300; i++) {
      if (verify(fx, 1 + (i % 2), key).valid) valid++;
      fx.clock.advance(100); // 30 s in all: one counter per region
    }
    expect(valid).toBeGreaterThan(100);
    expect(valid).toBeLessThanOrEqual(200);
    fx.converge();
    // Every valid debit replayed, floored at 0.
    expect(fx.balance(keyId)).toBe(Math.max(0, 100 - valid));
  });

  it('after the TTL and the replays the database holds 100 less the debits, and both regions converge on it', () => {
    const fx = makeProfile();
    const { key, keyId } = fx.createKey({ credits: { remaining: 100 } });
    for (let i = 0; i < 30; i++) {
      expect(verify(fx, 1 + (i % 2), key).valid).toBe(true);
      fx.clock.advance(50);
    }
    // Each region counted only its own 15 debits (and what had landed before its counter was made).
    expect(verify(fx, 1, key, 0).credits).toBeGreaterThanOrEqual(85);
    fx.converge();
    expect(fx.balance(keyId)).toBe(70);
    expect(verify(fx, 1, key, 0).credits).toBe(70);
    expect(verify(fx, 2, key, 0).credits).toBe(70);
  });

  it('a region never spends more than its counter held: exact within one region', () => {
    const fx = makeProfile();
    const { key } = fx.createKey({ credits: { remaining: 10 } });
    const codes = Array.from({ length: 15 }, () => verify(fx, 1, key).code);
    expect(codes.filter((c) => c === 'VALID')).toHaveLength(10);
    expect(codes.slice(10)).toEqual(Array(5).fill('USAGE_EXCEEDED'));
  });

  it('the refill at midnight reaches a region only when its counter is created again (at most a TTL later)', () => {
    const fx = makeProfile({ startMs: Date.UTC(2027, 0, 15, 23, 59, 30) });
    const { key } = fx.createKey({ credits: { remaining: 10, refill: { interval: 'daily', amount: 10 } } });
    for (let i = 0; i < 10; i++) expect(verify(fx, 1, key).valid).toBe(true);
    expect(verify(fx, 1, key).code).toBe('USAGE_EXCEEDED');
    fx.clock.set(Date.UTC(2027, 0, 16, 0, 0, 10));
    // Region 1's counter, made at 23:59:30, still holds 0: the refill went to the database only.
    expect(verify(fx, 1, key).code).toBe('USAGE_EXCEEDED');
    // Region 2 makes its counter now, from the refilled database.
    expect(verify(fx, 2, key)).toMatchObject({ code: 'VALID', credits: 9 });
    fx.clock.set(Date.UTC(2027, 0, 15, 23, 59, 30) + TTL);
    expect(verify(fx, 1, key)).toMatchObject({ code: 'VALID' });
  });
});

describe('key caches, invalidated in the caller region only', () => {
  it('a key disabled in region 1 still verifies VALID in region 2 until its cache goes stale, then DISABLED', () => {
    const fx = makeProfile();
    const { key, keyId } = fx.createKey();
    const t0 = fx.clock.now();
    expect(verify(fx, 1, key).code).toBe('VALID');
    expect(verify(fx, 2, key).code).toBe('VALID');
    fx.clock.advance(1_000);
    unwrap(fx.region(1).keys.updateKey(fx.rootKey, { keyId, enabled: false }));
    expect(verify(fx, 1, key).code).toBe('DISABLED');
    expect(verify(fx, 2, key).code).toBe('VALID');
    fx.clock.set(t0 + PRODUCTION_FIGURES.cacheFreshMs - 1);
    expect(verify(fx, 2, key).code).toBe('VALID');
    fx.clock.set(t0 + PRODUCTION_FIGURES.cacheFreshMs);
    // Stale: served once more while it is read again behind the answer; the next one sees it.
    expect(verify(fx, 2, key).code).toBe('VALID');
    expect(verify(fx, 2, key).code).toBe('DISABLED');
  });

  it('a key deleted in region 1 is still served from region 2 until its cache goes stale, then NOT_FOUND', () => {
    const fx = makeProfile();
    const { key, keyId } = fx.createKey({ credits: { remaining: 5 } });
    const t0 = fx.clock.now();
    verify(fx, 1, key);
    verify(fx, 2, key);
    unwrap(fx.region(1).keys.deleteKey(fx.rootKey, { keyId }));
    expect(verify(fx, 1, key).code).toBe('NOT_FOUND');
    expect(verify(fx, 2, key).code).toBe('VALID');
    fx.clock.set(t0 + PRODUCTION_FIGURES.cacheFreshMs);
    verify(fx, 2, key);
    expect(verify(fx, 2, key)).toEqual({ valid: false, code: 'NOT_FOUND' });
  });

  it('a key created in one region is found at once in another (unknown keys are not cached)', () => {
    const fx = makeProfile();
    expect(verify(fx, 2, 'not-yet')).toEqual({ valid: false, code: 'NOT_FOUND' });
    const { key } = fx.createKey();
    expect(verify(fx, 2, key).code).toBe('VALID');
  });
});

describe('updateCredits writes the database and drops the caller region counter only', () => {
  it('a verification of cost 1, then credits set to 50, ends at 49: the stale replay of the debit lands after the set', () => {
    const fx = makeProfile();
    const { key, keyId } = fx.createKey({ credits: { remaining: 100 } });
    expect(verify(fx, 1, key).credits).toBe(99);
    expect(unwrap(fx.region(1).keys.updateCredits(fx.rootKey, { keyId, operation: 'set', value: 50 })).remaining).toBe(50);
    fx.converge();
    expect(fx.balance(keyId)).toBe(49);
    expect(unwrap(fx.region(2).keys.getKey(fx.rootKey, { keyId })).credits?.remaining).toBe(49);
  });

  it('the caller region sees the new balance at once, the other region only after its counter expires', () => {
    const fx = makeProfile();
    const { key, keyId } = fx.createKey({ credits: { remaining: 100 } });
    verify(fx, 1, key, 0);
    verify(fx, 2, key, 0);
    unwrap(fx.region(1).keys.updateCredits(fx.rootKey, { keyId, operation: 'set', value: 5 }));
    expect(verify(fx, 1, key, 0).credits).toBe(5);
    expect(verify(fx, 2, key, 0).credits).toBe(100);
    fx.clock.advance(TTL);
    expect(verify(fx, 2, key, 0).credits).toBe(5);
  });
});

describe('the profile itself', () => {
  it('the same seed gives the same answers and the same database', () => {
    const run = () => {
      const fx = makeProfile({ seed: 7 });
      const { key, keyId } = fx.createKey({ credits: { remaining: 20 } });
      const answers: unknown[] = [];
      for (let i = 0; i < 40; i++) {
        answers.push(verify(fx, 1 + (i % 2), key));
        if (i === 20) answers.push(unwrap(fx.region(1).keys.updateCredits(fx.rootKey, { keyId, operation: 'increment', value: 3 })));
        fx.clock.advance(700);
      }
      answers.push(fx.balance(keyId));
      return answers;
    };
    expect(run()).toEqual(run());
  });

  it('a region out of range, or a figure out of range, is refused with the allowed range', () => {
    const fx = makeProfile({ regions: 3 });
    expect(() => fx.profile.region(4)).toThrow('region must be an integer from 1 to 3, got 4.');
    expect(() => fx.profile.region(0)).toThrow('from 1 to 3');
    const engine = new Engine({ clock: new ManualClock(0) });
    expect(() => new ProductionProfile({ engine, regions: 0 })).toThrow('regions must be an integer from 1 to 16, got 0.');
    expect(() => new ProductionProfile({ engine, replayDelayMs: { min: 5, max: 1 } })).toThrow('0 ≤ min ≤ max');
  });

  it('reset empties the database, the caches, the counters and the buffer', () => {
    const fx = makeProfile();
    const { key } = fx.createKey({ credits: { remaining: 3 } });
    verify(fx, 1, key);
    verify(fx, 2, key);
    expect(fx.profile.stats()).toMatchObject({
      keys: 1,
      pendingDebits: 2,
      regions: [
        { cachedKeys: 1, counters: 1 },
        { cachedKeys: 1, counters: 1 },
      ],
    });
    fx.region(2).reset();
    expect(fx.profile.stats()).toMatchObject({
      keys: 0,
      pendingDebits: 0,
      regions: [
        { cachedKeys: 0, counters: 0 },
        { cachedKeys: 0, counters: 0 },
      ],
    });
  });

  it('the exact engine without a profile spends in the database at once', () => {
    const fx = makeProfile();
    const { key, keyId } = fx.createKey({ credits: { remaining: 10 } });
    expect(unwrap(fx.engine.keys.verifyKey(fx.rootKey, { key })).credits).toBe(9);
    expect(fx.balance(keyId)).toBe(9);
  });
});
