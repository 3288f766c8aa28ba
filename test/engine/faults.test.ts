/**
 * Injected wrong behaviour (src/engine/faults.ts): over-admitted verifications, skipped refills
 * and lost decrements each do exactly what they say at rate 1, nothing at rate 0 (the same
 * answers and snapshots as an engine without faults), never change generated ids, stay out of
 * snapshots, and are cleared by reset.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Engine, type EngineFaults, ManualClock } from '../../src/engine/index.js';
import { DEFAULT_START_MS, errorCode, makeEngine, unwrap } from '../helpers/engine.js';
import { assertProperty } from '../helpers/property.js';

const DAY = 86_400_000;

function withFaults(faults: EngineFaults | null, options: { seed?: number; startMs?: number } = {}) {
  const fx = makeEngine(options);
  if (faults !== null) unwrap(fx.engine.setFaults(faults));
  const keyWith = (credits: { remaining: number; refill?: { interval: 'daily' | 'monthly'; amount: number; refillDay?: number } }) => {
    const created = unwrap(fx.engine.keys.createKey(fx.rootKey, { apiId: fx.apiId, credits }));
    return {
      ...created,
      verify: (cost = 1) => unwrap(fx.engine.keys.verifyKey(undefined, { key: created.key, credits: { cost } })),
      balance: () => unwrap(fx.engine.keys.getKey(fx.rootKey, { keyId: created.keyId })).credits?.remaining,
    };
  };
  return { ...fx, keyWith };
}

describe('overAdmitRate', () => {
  it('at 1, an exhausted key verifies VALID and its balance stays as it was (and without faults it does not)', () => {
    const faulty = withFaults({ overAdmitRate: 1 });
    const k = faulty.keyWith({ remaining: 0 });
    expect(k.verify()).toMatchObject({ valid: true, code: 'VALID', credits: 0 });
    expect(k.verify(50)).toMatchObject({ valid: true, code: 'VALID', credits: 0 });
    expect(k.balance()).toBe(0);

    const normal = withFaults(null).keyWith({ remaining: 0 });
    expect(normal.verify()).toMatchObject({ valid: false, code: 'USAGE_EXCEEDED', credits: 0 });
  });

  it('a cost above a positive balance is admitted without touching it; affordable costs still deduct', () => {
    const k = withFaults({ overAdmitRate: 1 }).keyWith({ remaining: 5 });
    expect(k.verify(10)).toMatchObject({ valid: true, code: 'VALID', credits: 5 });
    expect(k.balance()).toBe(5);
    expect(k.verify(2)).toMatchObject({ valid: true, credits: 3 });
    expect(k.balance()).toBe(3);
  });

  it('only turns USAGE_EXCEEDED into VALID: other refusals stay refusals', () => {
    const fx = withFaults({ overAdmitRate: 1 });
    const disabled = unwrap(fx.engine.keys.createKey(fx.rootKey, { apiId: fx.apiId, enabled: false, credits: { remaining: 0 } }));
    expect(unwrap(fx.engine.keys.verifyKey(undefined, { key: disabled.key }))).toMatchObject({ valid: false, code: 'DISABLED' });
    const limited = unwrap(
      fx.engine.keys.createKey(fx.rootKey, {
        apiId: fx.apiId,
        credits: { remaining: 0 },
        ratelimits: [{ name: 'r', limit: 1, duration: 60_000, autoApply: true }],
      }),
    );
    expect(unwrap(fx.engine.keys.verifyKey(undefined, { key: limited.key }))).toMatchObject({ valid: true, code: 'VALID' });
    expect(unwrap(fx.engine.keys.verifyKey(undefined, { key: limited.key }))).toMatchObject({ valid: false, code: 'RATE_LIMITED' });
    expect(unwrap(fx.engine.keys.verifyKey(undefined, { key: 'sk_unknown' }))).toEqual({ valid: false, code: 'NOT_FOUND' });
  });

  it('at 0.5 strikes about half of the refusals, the same ones each time the faults are set', () => {
    const fx = withFaults({ overAdmitRate: 0.5 });
    const k = fx.keyWith({ remaining: 0 });
    const pattern = () => Array.from({ length: 400 }, () => k.verify().valid);
    const first = pattern();
    const admitted = first.filter(Boolean).length;
    expect(admitted).toBeGreaterThan(140);
    expect(admitted).toBeLessThan(260);
    expect(pattern()).not.toEqual(first); // the sequence goes on …
    unwrap(fx.engine.setFaults({ overAdmitRate: 0.5 }));
    expect(pattern()).toEqual(first); // … and restarts from the seed when the faults are set again
  });
});

describe('overAdmitRate on rate limits', () => {
  function namespaceFixture(faults: EngineFaults | null) {
    const fx = withFaults(faults);
    unwrap(fx.engine.admin.createNamespace(fx.workspaceId, 'api'));
    const limit = (identifier: string) => unwrap(fx.engine.ratelimit.limit(fx.rootKey, { namespace: 'api', identifier, limit: 2, duration: 60_000 }));
    const multi = () =>
      unwrap(
        fx.engine.ratelimit.multiLimit(fx.rootKey, [
          { namespace: 'api', identifier: 'm', limit: 1, duration: 60_000 },
          { namespace: 'api', identifier: 'n', limit: 5, duration: 60_000 },
        ]),
      );
    return { fx, limit, multi };
  }

  it('at 1, a request the window refuses is answered as admitted with remaining 0, and nothing is counted', () => {
    const { limit } = namespaceFixture({ overAdmitRate: 1 });
    expect(limit('u')).toMatchObject({ success: true, remaining: 1 });
    expect(limit('u')).toMatchObject({ success: true, remaining: 0 });
    expect(limit('u')).toMatchObject({ success: true, remaining: 0 });
    const normal = namespaceFixture(null).limit;
    normal('u');
    normal('u');
    expect(normal('u')).toMatchObject({ success: false, remaining: 0 });
  });

  it('multiLimit: a refused set is answered as passed, every entry passed, nothing counted', () => {
    const { multi } = namespaceFixture({ overAdmitRate: 1 });
    expect(multi().passed).toBe(true);
    const second = multi();
    expect(second.passed).toBe(true);
    expect(second.limits.every((l) => l.passed)).toBe(true);
    // 'n' (limit 5) holds only the first, genuine admission: 4 left, as if the second never came.
    expect(second.limits[1]?.remaining).toBe(4);
  });

  it('the operations filter confines it: refused rate limits stay refused when only verifications misbehave', () => {
    const { limit } = namespaceFixture({ overAdmitRate: 1, operations: ['keys.verifyKey'] });
    limit('u');
    limit('u');
    expect(limit('u')).toMatchObject({ success: false });
  });
});

describe('skipRefillRate', () => {
  it('at 1, crossing a refill boundary leaves the balance; the boundary is spent, the next one refills once faults are gone', () => {
    const start = Date.UTC(2027, 0, 15, 12);
    const fx = withFaults({ skipRefillRate: 1 }, { startMs: start });
    const k = fx.keyWith({ remaining: 5, refill: { interval: 'daily', amount: 100 } });
    fx.clock.set(Date.UTC(2027, 0, 16));
    expect(k.verify()).toMatchObject({ valid: true, credits: 4 });
    expect(k.balance()).toBe(4);
    // Several missed boundaries settle as one refill, skipped as one.
    fx.clock.set(Date.UTC(2027, 0, 20, 6));
    expect(k.balance()).toBe(4);

    unwrap(fx.engine.setFaults(null));
    expect(k.balance()).toBe(4); // the skipped boundary is not applied late
    fx.clock.set(Date.UTC(2027, 0, 21));
    expect(k.balance()).toBe(100);
  });

  it('without faults the same steps refill (the control)', () => {
    const fx = withFaults(null, { startMs: Date.UTC(2027, 0, 15, 12) });
    const k = fx.keyWith({ remaining: 5, refill: { interval: 'daily', amount: 100 } });
    fx.clock.set(Date.UTC(2027, 0, 16));
    expect(k.verify()).toMatchObject({ valid: true, credits: 99 });
  });

  it('applies to every key operation that settles refills, and the operations filter limits it', () => {
    const start = Date.UTC(2027, 0, 31, 12);
    const fx = withFaults({ skipRefillRate: 1, operations: ['keys.verifyKey'] }, { startMs: start });
    const a = fx.keyWith({ remaining: 1, refill: { interval: 'monthly', amount: 10, refillDay: 1 } });
    const b = fx.keyWith({ remaining: 1, refill: { interval: 'monthly', amount: 10, refillDay: 1 } });
    fx.clock.set(Date.UTC(2027, 1, 1));
    expect(a.verify(0)).toMatchObject({ credits: 1 }); // verifyKey settles first: skipped
    expect(b.balance()).toBe(10); // getKey settles first: not in the filter, refilled

    unwrap(fx.engine.setFaults({ skipRefillRate: 1 }));
    fx.clock.set(Date.UTC(2027, 2, 1));
    expect(b.balance()).toBe(10); // getKey now skips too: still 10 from February
    const c = unwrap(fx.engine.keys.updateCredits(fx.rootKey, { keyId: a.keyId, operation: 'increment', value: 1 }));
    expect(c.remaining).toBe(2); // updateCredits settled (skipped), then added 1 to 1
  });
});

describe('lostDecrementRate', () => {
  it('at 1, a VALID verification reports balance − cost but the balance does not go down', () => {
    const k = withFaults({ lostDecrementRate: 1 }).keyWith({ remaining: 10 });
    expect(k.verify(3)).toMatchObject({ valid: true, code: 'VALID', credits: 7 });
    expect(k.balance()).toBe(10);
    expect(k.verify(3)).toMatchObject({ valid: true, credits: 7 });
    expect(k.verify(10)).toMatchObject({ valid: true, credits: 0 });
    expect(k.balance()).toBe(10);
    // It loses writes; it does not admit: a cost above the balance is still refused.
    expect(k.verify(11)).toMatchObject({ valid: false, code: 'USAGE_EXCEEDED', credits: 10 });
  });

  it('cost 0 and unlimited keys are unaffected (nothing to lose)', () => {
    const fx = withFaults({ lostDecrementRate: 1 });
    const k = fx.keyWith({ remaining: 4 });
    expect(k.verify(0)).toMatchObject({ valid: true, credits: 4 });
    const unlimited = unwrap(fx.engine.keys.createKey(fx.rootKey, { apiId: fx.apiId }));
    const answer = unwrap(fx.engine.keys.verifyKey(undefined, { key: unlimited.key, credits: { cost: 5 } }));
    expect(answer).toMatchObject({ valid: true, code: 'VALID' });
    expect(answer.credits).toBeUndefined();
  });

  it('the operations filter: a list without keys.verifyKey turns it off', () => {
    const k = withFaults({ lostDecrementRate: 1, overAdmitRate: 1, operations: ['keys.getKey'] }).keyWith({ remaining: 2 });
    expect(k.verify(2)).toMatchObject({ valid: true, credits: 0 });
    expect(k.balance()).toBe(0);
    expect(k.verify()).toMatchObject({ valid: false, code: 'USAGE_EXCEEDED' });
  });
});

// ---------------------------------------------------------------------------------------------
// Rates 0 and ids: the same operations on an engine with faults and one without.
// ---------------------------------------------------------------------------------------------

type Step =
  | { kind: 'createKey'; remaining: number; refill: boolean }
  | { kind: 'verify'; key: number; cost: number }
  | { kind: 'getKey'; key: number }
  | { kind: 'updateCredits'; key: number; value: number }
  | { kind: 'advance'; byMs: number }
  | { kind: 'identity' };

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constant('createKey' as const), remaining: fc.integer({ min: 0, max: 5 }), refill: fc.boolean() }),
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('verify' as const), key: fc.nat(), cost: fc.integer({ min: 0, max: 4 }) }) },
  fc.record({ kind: fc.constant('getKey' as const), key: fc.nat() }),
  fc.record({ kind: fc.constant('updateCredits' as const), key: fc.nat(), value: fc.integer({ min: 0, max: 3 }) }),
  fc.record({ kind: fc.constant('advance' as const), byMs: fc.constantFrom(1, 3_600_000, DAY, 40 * DAY) }),
  fc.record({ kind: fc.constant('identity' as const) }),
);

/** Runs the steps; returns every answer and the final snapshot. */
function run(faults: EngineFaults | null, steps: readonly Step[]) {
  const fx = withFaults(faults, { seed: 21 });
  unwrap(fx.engine.keys.createKey(fx.rootKey, { apiId: fx.apiId, credits: { remaining: 0 } }));
  const keys: Array<{ keyId: string; key: string }> = [
    unwrap(fx.engine.keys.createKey(fx.rootKey, { apiId: fx.apiId, credits: { remaining: 2, refill: { interval: 'daily', amount: 3 } } })),
  ];
  const answers: unknown[] = [];
  const ids: string[] = [];
  let n = 0;
  for (const s of steps) {
    const k = keys[('key' in s ? s.key : 0) % keys.length] as { keyId: string; key: string };
    switch (s.kind) {
      case 'createKey': {
        const created = fx.engine.keys.createKey(fx.rootKey, {
          apiId: fx.apiId,
          credits: s.refill ? { remaining: s.remaining, refill: { interval: 'monthly', amount: 5, refillDay: 31 } } : { remaining: s.remaining },
        });
        answers.push(created);
        if (created.ok) {
          keys.push(created.value);
          ids.push(created.value.keyId, created.value.key);
        }
        break;
      }
      case 'verify':
        answers.push(fx.engine.keys.verifyKey(undefined, { key: k.key, credits: { cost: s.cost } }));
        break;
      case 'getKey':
        answers.push(fx.engine.keys.getKey(fx.rootKey, { keyId: k.keyId }));
        break;
      case 'updateCredits':
        answers.push(fx.engine.keys.updateCredits(fx.rootKey, { keyId: k.keyId, operation: 'decrement', value: s.value }));
        break;
      case 'advance':
        answers.push(fx.clock.advance(s.byMs));
        break;
      case 'identity': {
        const created = fx.engine.identities.createIdentity(fx.rootKey, { externalId: `user_${n++}` });
        answers.push(created);
        if (created.ok) ids.push(created.value.identityId);
        break;
      }
    }
  }
  return { answers, ids, snapshot: fx.engine.snapshot() };
}

describe('rates 0, and generated ids', () => {
  const harmless: EngineFaults[] = [
    { overAdmitRate: 0, skipRefillRate: 0, lostDecrementRate: 0 },
    { overAdmitRate: 0, skipRefillRate: 0, lostDecrementRate: 0, operations: ['keys.verifyKey'] },
    {},
    // Every rate 1, but only in an operation that neither verifies nor limits: never strikes.
    { overAdmitRate: 1, skipRefillRate: 1, lostDecrementRate: 1, operations: ['identities.listIdentities'] },
  ];

  it('every rate 0 (or faults confined to an unrelated operation) behaves exactly like no faults: same answers, same snapshot', () =>
    assertProperty(
      fc.property(fc.array(step, { maxLength: 60 }), fc.constantFrom(...harmless), (steps, faults) => {
        const plain = run(null, steps);
        const faulty = run(faults, steps);
        expect(faulty.answers).toEqual(plain.answers);
        expect(faulty.snapshot).toEqual(plain.snapshot);
      }),
      { numRuns: 100 },
    ));

  it('the same comparison tells faults apart: at rate 1 the answers differ (and the stored balances, but for over-admission)', () => {
    const steps: Step[] = [
      { kind: 'verify', key: 0, cost: 1 },
      { kind: 'verify', key: 0, cost: 5 },
      { kind: 'advance', byMs: 2 * DAY },
      { kind: 'verify', key: 0, cost: 1 },
    ];
    const plain = run(null, steps);
    for (const [faults, storedDiffers] of [
      [{ overAdmitRate: 1 }, false],
      [{ skipRefillRate: 1 }, true],
      [{ lostDecrementRate: 1 }, true],
    ] as const) {
      const faulty = run(faults, steps);
      expect(faulty.answers, JSON.stringify(faults)).not.toEqual(plain.answers);
      if (storedDiffers) expect(faulty.snapshot, JSON.stringify(faults)).not.toEqual(plain.snapshot);
      else expect(faulty.snapshot, JSON.stringify(faults)).toEqual(plain.snapshot);
    }
  });

  it('generated ids and keys are identical with and without faults, and the id sequence goes on identically', () =>
    assertProperty(
      fc.property(fc.array(step, { maxLength: 60 }), (steps) => {
        const all: EngineFaults = { overAdmitRate: 0.5, skipRefillRate: 0.5, lostDecrementRate: 0.5 };
        const plain = run(null, steps);
        const faulty = run(all, steps);
        expect(faulty.ids).toEqual(plain.ids);
        expect(faulty.snapshot.randomState).toEqual(plain.snapshot.randomState);
        expect(faulty.snapshot.keys.map((k) => [k.id, k.hash, k.start])).toEqual(plain.snapshot.keys.map((k) => [k.id, k.hash, k.start]));
      }),
      { numRuns: 50 },
    ));
});

describe('configuration, snapshot and reset', () => {
  it('setFaults answers the whole configuration; faults reads it back; null removes it', () => {
    const { engine } = makeEngine();
    expect(engine.faults).toBeNull();
    expect(unwrap(engine.setFaults({ overAdmitRate: 0.25, operations: ['keys.verifyKey'] }))).toEqual({
      overAdmitRate: 0.25,
      skipRefillRate: 0,
      lostDecrementRate: 0,
      operations: ['keys.verifyKey'],
    });
    expect(engine.faults).toEqual({ overAdmitRate: 0.25, skipRefillRate: 0, lostDecrementRate: 0, operations: ['keys.verifyKey'] });
    expect(unwrap(engine.setFaults(null))).toBeNull();
    expect(engine.faults).toBeNull();
  });

  it('rejects rates outside 0..1 (and non-numbers) as values, and keeps the configuration it had', () => {
    const { engine } = makeEngine();
    unwrap(engine.setFaults({ lostDecrementRate: 1 }));
    for (const bad of [
      { overAdmitRate: 1.5 },
      { skipRefillRate: -0.1 },
      { lostDecrementRate: Number.NaN },
      { overAdmitRate: Number.POSITIVE_INFINITY },
      { overAdmitRate: '1' as unknown as number },
    ]) {
      const result = engine.setFaults(bad);
      expect(errorCode(result), JSON.stringify(bad)).toBe('err:service:application:invalid_input');
    }
    expect(engine.faults).toEqual({ overAdmitRate: 0, skipRefillRate: 0, lostDecrementRate: 1 });
    expect(() => new Engine({ clock: new ManualClock(DEFAULT_START_MS), faults: { overAdmitRate: 2 } })).toThrow(/overAdmitRate/);
  });

  it('the faults option of the constructor sets them from the start', () => {
    const clock = new ManualClock(DEFAULT_START_MS);
    const engine = new Engine({ clock, faults: { overAdmitRate: 1 } });
    const ws = unwrap(engine.admin.createWorkspace({}));
    const api = unwrap(engine.apis.createApi(ws.rootKey, { name: 'a' }));
    const key = unwrap(engine.keys.createKey(ws.rootKey, { apiId: api.apiId, credits: { remaining: 0 } }));
    expect(unwrap(engine.keys.verifyKey(undefined, { key: key.key }))).toMatchObject({ code: 'VALID' });
  });

  it('reset clears the faults', () => {
    const fx = withFaults({ overAdmitRate: 1, skipRefillRate: 1, lostDecrementRate: 1 });
    fx.engine.reset();
    expect(fx.engine.faults).toBeNull();
    const ws = unwrap(fx.engine.admin.createWorkspace({}));
    const api = unwrap(fx.engine.apis.createApi(ws.rootKey, { name: 'a' }));
    const key = unwrap(fx.engine.keys.createKey(ws.rootKey, { apiId: api.apiId, credits: { remaining: 1 } }));
    expect(unwrap(fx.engine.keys.verifyKey(undefined, { key: key.key }))).toMatchObject({ code: 'VALID', credits: 0 });
    expect(unwrap(fx.engine.keys.verifyKey(undefined, { key: key.key }))).toMatchObject({ code: 'USAGE_EXCEEDED', credits: 0 });
  });

  it('snapshots do not contain faults; restore keeps the faults that are set', () => {
    const faulty = withFaults({ overAdmitRate: 1, skipRefillRate: 0.5, lostDecrementRate: 0.25, operations: ['keys.verifyKey'] }, { seed: 4 });
    const plain = withFaults(null, { seed: 4 });
    for (const fx of [faulty, plain]) fx.keyWith({ remaining: 3, refill: { interval: 'daily', amount: 3 } });
    const snapshot = faulty.engine.snapshot();
    expect(snapshot).toEqual(plain.engine.snapshot());
    const text = JSON.stringify(snapshot);
    for (const word of ['overAdmitRate', 'skipRefillRate', 'lostDecrementRate', 'faults']) expect(text).not.toContain(word);

    unwrap(faulty.engine.restore(plain.engine.snapshot()));
    expect(faulty.engine.faults).toMatchObject({ overAdmitRate: 1 });
  });
});
