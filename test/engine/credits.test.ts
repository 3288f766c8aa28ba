/** The worked examples of the interface document, and the credit rules of docs/service-model.md#credits and #refill. */
import { describe, expect, it } from 'vitest';
import type { CreditsInput } from '../../src/engine/index.js';
import { errorCode, makeEngine, unwrap } from '../helpers/engine.js';

const HOUR = 3_600_000;

function limitedKey(credits: CreditsInput | undefined, startMs?: number) {
  const fx = makeEngine(startMs === undefined ? {} : { startMs });
  const created = unwrap(fx.engine.keys.createKey(fx.rootKey, credits === undefined ? { apiId: fx.apiId } : { apiId: fx.apiId, credits }));
  const verify = (cost?: number) =>
    unwrap(fx.engine.keys.verifyKey(undefined, cost === undefined ? { key: created.key } : { key: created.key, credits: { cost } }));
  const remaining = () => unwrap(fx.engine.keys.getKey(fx.rootKey, { keyId: created.keyId })).credits?.remaining;
  return { ...fx, ...created, verify, remaining };
}

describe('worked examples of the interface document', () => {
  it('a refill replaces the balance: 50 remaining with amount 1000 becomes exactly 1000', () => {
    const k = limitedKey({ remaining: 50, refill: { interval: 'daily', amount: 1000 } }, Date.UTC(2027, 2, 10, 18));
    expect(k.remaining()).toBe(50);
    k.clock.set(Date.UTC(2027, 2, 11));
    expect(k.remaining()).toBe(1000);
  });

  it('a key with 5 remaining rejects cost 10, reports 5, and keeps 5', () => {
    const k = limitedKey({ remaining: 5 });
    const result = k.verify(10);
    expect(result).toMatchObject({ valid: false, code: 'USAGE_EXCEEDED', credits: 5 });
    expect(k.remaining()).toBe(5);
    expect(k.verify(5)).toMatchObject({ valid: true, code: 'VALID', credits: 0 });
  });

  it('cost 0 checks the key without changing the balance, even at 0', () => {
    const k = limitedKey({ remaining: 3 });
    expect(k.verify(0)).toMatchObject({ valid: true, code: 'VALID', credits: 3 });
    expect(k.verify(3)).toMatchObject({ valid: true, credits: 0 });
    expect(k.verify(0)).toMatchObject({ valid: true, code: 'VALID', credits: 0 });
    expect(k.verify()).toMatchObject({ valid: false, code: 'USAGE_EXCEEDED', credits: 0 });
  });

  it('each verification decrements by the default cost 1 and reports the balance after it', () => {
    const k = limitedKey({ remaining: 3 });
    expect([k.verify().credits, k.verify().credits, k.verify().credits]).toEqual([2, 1, 0]);
    expect(k.verify()).toMatchObject({ valid: false, code: 'USAGE_EXCEEDED', credits: 0 });
  });

  it.each([
    ['common year', 2027, 28],
    ['leap year', 2028, 29],
    ['century common year', 2100, 28],
    ['400-year leap year', 2000, 29],
  ])('refillDay 31 refills on the last day of February (%s)', (_, year, lastDay) => {
    const k = limitedKey({ remaining: 7, refill: { interval: 'monthly', amount: 100, refillDay: 31 } }, Date.UTC(year, 1, 1, 9));
    k.clock.set(Date.UTC(year, 1, lastDay) - 1);
    expect(k.remaining()).toBe(7);
    k.clock.set(Date.UTC(year, 1, lastDay));
    expect(k.remaining()).toBe(100);
  });

  it.each([
    ['April', 3],
    ['June', 5],
    ['September', 8],
    ['November', 10],
  ])('refillDay 31 refills on the 30th in %s', (_, monthIndex) => {
    const k = limitedKey({ remaining: 1, refill: { interval: 'monthly', amount: 9, refillDay: 31 } }, Date.UTC(2027, monthIndex, 2));
    k.clock.set(Date.UTC(2027, monthIndex, 30) - 1);
    expect(k.remaining()).toBe(1);
    k.clock.set(Date.UTC(2027, monthIndex, 30));
    expect(k.remaining()).toBe(9);
  });

  it('refillDay 31 refills on the 31st in a 31-day month, not on the 30th', () => {
    const k = limitedKey({ remaining: 1, refill: { interval: 'monthly', amount: 9, refillDay: 31 } }, Date.UTC(2027, 0, 2));
    k.clock.set(Date.UTC(2027, 0, 30, 12));
    expect(k.remaining()).toBe(1);
    k.clock.set(Date.UTC(2027, 0, 31));
    expect(k.remaining()).toBe(9);
  });

  it('credits null on update makes the key unlimited', () => {
    const k = limitedKey({ remaining: 1, refill: { interval: 'daily', amount: 5 } });
    unwrap(k.engine.keys.updateKey(k.rootKey, { keyId: k.keyId, credits: null }));
    expect(unwrap(k.engine.keys.getKey(k.rootKey, { keyId: k.keyId })).credits).toBeUndefined();
    for (let i = 0; i < 5; i++) expect(k.verify()).toMatchObject({ valid: true, code: 'VALID' });
    expect(k.verify()).not.toHaveProperty('credits');
  });

  it('refill null on update keeps the balance and stops refilling', () => {
    const k = limitedKey({ remaining: 10, refill: { interval: 'daily', amount: 100 } });
    k.verify(4);
    unwrap(k.engine.keys.updateKey(k.rootKey, { keyId: k.keyId, credits: { refill: null } }));
    expect(unwrap(k.engine.keys.getKey(k.rootKey, { keyId: k.keyId })).credits).toEqual({ remaining: 6 });
    k.clock.advance(10 * 24 * HOUR);
    expect(k.remaining()).toBe(6);
  });

  it('defaults the monthly refill day to 1', () => {
    const k = limitedKey({ remaining: 0, refill: { interval: 'monthly', amount: 30 } }, Date.UTC(2027, 4, 15));
    expect(unwrap(k.engine.keys.getKey(k.rootKey, { keyId: k.keyId })).credits?.refill).toEqual({ interval: 'monthly', amount: 30, refillDay: 1 });
    k.clock.set(Date.UTC(2027, 5, 1) - 1);
    expect(k.remaining()).toBe(0);
    k.clock.set(Date.UTC(2027, 5, 1));
    expect(k.remaining()).toBe(30);
  });

  it('a key without credits is unlimited', () => {
    const k = limitedKey(undefined);
    for (let i = 0; i < 3; i++) expect(k.verify(1_000_000)).toMatchObject({ valid: true, code: 'VALID' });
    expect(k.remaining()).toBeUndefined();
  });
});

describe('refill settlement', () => {
  it('applies a daily refill at 00:00:00.000 UTC exactly, not a millisecond earlier', () => {
    const k = limitedKey({ remaining: 2, refill: { interval: 'daily', amount: 10 } }, Date.UTC(2027, 6, 1, 23));
    k.verify(2);
    k.clock.set(Date.UTC(2027, 6, 2) - 1);
    expect(k.verify()).toMatchObject({ code: 'USAGE_EXCEEDED', credits: 0 });
    k.clock.set(Date.UTC(2027, 6, 2));
    expect(k.verify()).toMatchObject({ code: 'VALID', credits: 9 });
  });

  it('collapses many missed boundaries into one refill of exactly amount', () => {
    const k = limitedKey({ remaining: 0, refill: { interval: 'daily', amount: 10 } });
    k.clock.advance(3650 * 24 * HOUR);
    expect(k.remaining()).toBe(10);
  });

  it('a key created exactly on a boundary is first refilled at the next one', () => {
    const k = limitedKey({ remaining: 3, refill: { interval: 'daily', amount: 10 } }, Date.UTC(2027, 6, 2));
    expect(k.remaining()).toBe(3);
    k.clock.set(Date.UTC(2027, 6, 3) - 1);
    expect(k.remaining()).toBe(3);
    k.clock.set(Date.UTC(2027, 6, 3));
    expect(k.remaining()).toBe(10);
  });

  it('a refill on an unlimited key makes it limited at amount from the next boundary', () => {
    const k = limitedKey(undefined, Date.UTC(2027, 6, 1, 12));
    unwrap(k.engine.keys.updateKey(k.rootKey, { keyId: k.keyId, credits: { refill: { interval: 'daily', amount: 2 } } }));
    expect(k.verify(50)).toMatchObject({ valid: true });
    expect(k.remaining()).toBeNull();
    k.clock.set(Date.UTC(2027, 6, 2));
    expect(k.verify()).toMatchObject({ valid: true, credits: 1 });
    expect(k.verify(2)).toMatchObject({ valid: false, code: 'USAGE_EXCEEDED', credits: 1 });
  });

  it('manual increments add to the current balance between refills', () => {
    const k = limitedKey({ remaining: 10, refill: { interval: 'monthly', amount: 100, refillDay: 1 } }, Date.UTC(2027, 0, 20));
    expect(unwrap(k.engine.keys.updateCredits(k.rootKey, { keyId: k.keyId, operation: 'increment', value: 5 }))).toEqual({
      remaining: 15,
      refill: { interval: 'monthly', amount: 100, refillDay: 1 },
    });
    k.clock.set(Date.UTC(2027, 1, 1));
    expect(k.remaining()).toBe(100);
  });

  it("compat 'production' leaves a balance already at or above the amount alone", () => {
    const fx = makeEngine({ compat: 'production', startMs: Date.UTC(2027, 0, 10, 5) });
    const high = unwrap(fx.engine.keys.createKey(fx.rootKey, { apiId: fx.apiId, credits: { remaining: 500, refill: { interval: 'daily', amount: 100 } } }));
    const low = unwrap(fx.engine.keys.createKey(fx.rootKey, { apiId: fx.apiId, credits: { remaining: 5, refill: { interval: 'daily', amount: 100 } } }));
    fx.clock.set(Date.UTC(2027, 0, 11));
    expect(unwrap(fx.engine.keys.getKey(fx.rootKey, { keyId: high.keyId })).credits?.remaining).toBe(500);
    expect(unwrap(fx.engine.keys.getKey(fx.rootKey, { keyId: low.keyId })).credits?.remaining).toBe(100);
  });
});

describe('credit validation', () => {
  it('refuses a refill without a starting balance on create', () => {
    const fx = makeEngine();
    const result = fx.engine.keys.createKey(fx.rootKey, { apiId: fx.apiId, credits: { refill: { interval: 'daily', amount: 5 } } });
    expect(errorCode(result)).toBe('err:service:application:invalid_input');
    expect(result.ok ? undefined : result.error.errors?.[0]?.location).toBe('body.credits.remaining');
  });

  it('refuses refillDay on a daily refill, out-of-range refillDay, amount 0 and negative balances', () => {
    const fx = makeEngine();
    const bad = [
      { remaining: 1, refill: { interval: 'daily' as const, amount: 5, refillDay: 3 } },
      { remaining: 1, refill: { interval: 'monthly' as const, amount: 5, refillDay: 0 } },
      { remaining: 1, refill: { interval: 'monthly' as const, amount: 5, refillDay: 32 } },
      { remaining: 1, refill: { interval: 'monthly' as const, amount: 0 } },
      { remaining: -1 },
      { remaining: 1.5 },
    ];
    for (const credits of bad) {
      expect(errorCode(fx.engine.keys.createKey(fx.rootKey, { apiId: fx.apiId, credits }))).toBe('err:service:application:invalid_input');
    }
    expect(fx.engine.stats().keys).toBe(0);
  });

  it("compat 'production' rejects a monthly refill without refillDay", () => {
    const fx = makeEngine({ compat: 'production' });
    const result = fx.engine.keys.createKey(fx.rootKey, { apiId: fx.apiId, credits: { remaining: 1, refill: { interval: 'monthly', amount: 5 } } });
    expect(errorCode(result)).toBe('err:service:application:invalid_input');
  });
});

describe('keys.updateCredits', () => {
  it('set, increment and decrement (never below 0) and answers the balance after the change', () => {
    const k = limitedKey({ remaining: 10 });
    const update = (operation: 'set' | 'increment' | 'decrement', value?: number | null) =>
      unwrap(k.engine.keys.updateCredits(k.rootKey, value === undefined ? { keyId: k.keyId, operation } : { keyId: k.keyId, operation, value }));
    expect(update('set', 3)).toEqual({ remaining: 3 });
    expect(update('increment', 4)).toEqual({ remaining: 7 });
    expect(update('decrement', 2)).toEqual({ remaining: 5 });
    expect(update('decrement', 50)).toEqual({ remaining: 0 });
    expect(k.verify()).toMatchObject({ code: 'USAGE_EXCEEDED' });
    expect(update('increment', 1)).toEqual({ remaining: 1 });
    expect(k.verify()).toMatchObject({ code: 'VALID', credits: 0 });
  });

  it('set keeps the refill; set null makes the key unlimited and removes the refill', () => {
    const k = limitedKey({ remaining: 10, refill: { interval: 'daily', amount: 20 } });
    expect(unwrap(k.engine.keys.updateCredits(k.rootKey, { keyId: k.keyId, operation: 'set', value: 4 }))).toEqual({
      remaining: 4,
      refill: { interval: 'daily', amount: 20 },
    });
    expect(unwrap(k.engine.keys.updateCredits(k.rootKey, { keyId: k.keyId, operation: 'set', value: null }))).toEqual({ remaining: null });
    k.clock.advance(48 * HOUR);
    expect(k.remaining()).toBeUndefined();
  });

  it('increment or decrement without a value, or on an unlimited key, is a 400 and changes nothing', () => {
    const k = limitedKey({ remaining: 10 });
    expect(errorCode(k.engine.keys.updateCredits(k.rootKey, { keyId: k.keyId, operation: 'increment' }))).toBe('err:service:application:invalid_input');
    expect(errorCode(k.engine.keys.updateCredits(k.rootKey, { keyId: k.keyId, operation: 'decrement', value: null }))).toBe(
      'err:service:application:invalid_input',
    );
    expect(k.remaining()).toBe(10);
    const unlimited = unwrap(k.engine.keys.createKey(k.rootKey, { apiId: k.apiId }));
    for (const operation of ['increment', 'decrement'] as const) {
      expect(errorCode(k.engine.keys.updateCredits(k.rootKey, { keyId: unlimited.keyId, operation, value: 1 }))).toBe('err:service:application:invalid_input');
    }
    expect(unwrap(k.engine.keys.updateCredits(k.rootKey, { keyId: unlimited.keyId, operation: 'set', value: 2 }))).toEqual({ remaining: 2 });
  });

  it('an unknown key is a 404 before any check of the value', () => {
    const fx = makeEngine();
    expect(errorCode(fx.engine.keys.updateCredits(fx.rootKey, { keyId: 'key_nope', operation: 'increment' }))).toBe('err:service:data:key_not_found');
  });
});

describe('keys.updateKey credits (three states)', () => {
  it('{ remaining: N } sets the balance and leaves the refill; { remaining: null } removes both', () => {
    const k = limitedKey({ remaining: 10, refill: { interval: 'daily', amount: 20 } });
    unwrap(k.engine.keys.updateKey(k.rootKey, { keyId: k.keyId, credits: { remaining: 3 } }));
    expect(unwrap(k.engine.keys.getKey(k.rootKey, { keyId: k.keyId })).credits).toEqual({ remaining: 3, refill: { interval: 'daily', amount: 20 } });
    unwrap(k.engine.keys.updateKey(k.rootKey, { keyId: k.keyId, credits: { remaining: null } }));
    expect(unwrap(k.engine.keys.getKey(k.rootKey, { keyId: k.keyId })).credits).toBeUndefined();
  });

  it('{ refill: {...} } sets the refill and leaves the balance; omitted credits change nothing', () => {
    const k = limitedKey({ remaining: 10 });
    unwrap(k.engine.keys.updateKey(k.rootKey, { keyId: k.keyId, credits: { refill: { interval: 'monthly', amount: 50, refillDay: 15 } } }));
    expect(unwrap(k.engine.keys.getKey(k.rootKey, { keyId: k.keyId })).credits).toEqual({
      remaining: 10,
      refill: { interval: 'monthly', amount: 50, refillDay: 15 },
    });
    unwrap(k.engine.keys.updateKey(k.rootKey, { keyId: k.keyId, name: 'renamed' }));
    expect(unwrap(k.engine.keys.getKey(k.rootKey, { keyId: k.keyId })).credits?.remaining).toBe(10);
  });

  it('a plan change gives a new allocation immediately', () => {
    const k = limitedKey({ remaining: 2, refill: { interval: 'monthly', amount: 100 } });
    k.verify(2);
    unwrap(k.engine.keys.updateKey(k.rootKey, { keyId: k.keyId, credits: { remaining: 5000, refill: { interval: 'monthly', amount: 5000 } } }));
    expect(k.verify(10)).toMatchObject({ valid: true, credits: 4990 });
  });
});
