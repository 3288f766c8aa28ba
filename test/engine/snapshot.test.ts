import { describe, expect, it } from 'vitest';
import { Engine, ManualClock } from '../../src/engine/index.js';
import { errorCode, makeEngine, unwrap } from '../helpers/engine.js';

function populate() {
  const fx = makeEngine({ seed: 9 });
  const key = unwrap(
    fx.engine.keys.createKey(fx.rootKey, { apiId: fx.apiId, externalId: 'acme', credits: { remaining: 10, refill: { interval: 'daily', amount: 10 } } }),
  );
  unwrap(fx.engine.keys.verifyKey(undefined, { key: key.key, credits: { cost: 3 } }));
  unwrap(fx.engine.admin.createNamespace(fx.workspaceId, 'api'));
  unwrap(fx.engine.ratelimit.setOverride(fx.rootKey, { namespace: 'api', identifier: 'vip_*', limit: 100, duration: 60_000 }));
  unwrap(fx.engine.ratelimit.limit(fx.rootKey, { namespace: 'api', identifier: 'u1', limit: 5, duration: 60_000 }));
  return { ...fx, key };
}

describe('snapshot / restore / reset', () => {
  it('is plain JSON and round-trips to an engine that behaves identically', () => {
    const a = populate();
    const snapshot = JSON.parse(JSON.stringify(a.engine.snapshot())) as unknown;
    const b = new Engine({ clock: new ManualClock(a.clock.now()), seed: 9 });
    unwrap(b.restore(snapshot));
    expect(b.snapshot()).toEqual(a.engine.snapshot());
    // The same next operations give the same answers, including freshly drawn ids.
    const next = (engine: Engine) => [
      engine.keys.verifyKey(undefined, { key: a.key.key, credits: { cost: 2 } }),
      engine.ratelimit.limit(a.rootKey, { namespace: 'api', identifier: 'u1', limit: 5, duration: 60_000 }),
      engine.keys.createKey(a.rootKey, { apiId: a.apiId }),
    ];
    expect(next(b)).toEqual(next(a.engine));
  });

  it('does not share objects with the live state', () => {
    const a = populate();
    const snapshot = a.engine.snapshot();
    const key = snapshot.keys[0];
    if (key === undefined) throw new Error('no key in snapshot');
    key.remaining = 999_999;
    expect(unwrap(a.engine.keys.getKey(a.rootKey, { keyId: a.key.keyId })).credits?.remaining).toBe(7);
  });

  it('settles due refills into the snapshot, so unobservable differences do not show', () => {
    const a = populate();
    a.clock.advance(2 * 86_400_000);
    const snapshot = a.engine.snapshot();
    expect(snapshot.keys[0]?.remaining).toBe(10);
    expect(a.engine.snapshot()).toEqual(snapshot);
  });

  it('refuses a malformed snapshot and keeps the state', () => {
    const a = populate();
    const before = a.engine.snapshot();
    // The last two pass every record's check and fail only the invariants across records (snapshot-check.ts).
    const key = before.keys[0];
    expect(key).toBeDefined();
    for (const bad of [
      null,
      42,
      {},
      { ...before, version: 2 },
      { ...before, keys: 'nope' },
      { ...before, keys: [{}] },
      { ...before, randomState: [1] },
      { ...before, keys: [key, key] },
      { ...before, rootKeys: [] },
    ]) {
      expect(errorCode(a.engine.restore(bad))).toBe('err:service:application:invalid_input');
    }
    expect(a.engine.snapshot()).toEqual(before);
  });

  it('reset empties the state and restarts the seeded sequence', () => {
    const fx = makeEngine({ seed: 4 });
    const firstRootKey = fx.rootKey;
    fx.engine.reset();
    expect(fx.engine.stats()).toEqual({ workspaces: 0, apis: 0, keys: 0, identities: 0, namespaces: 0, overrides: 0, windows: 0 });
    expect(errorCode(fx.engine.admin.authenticate(firstRootKey))).toBe('err:service:authentication:key_not_found');
    expect(unwrap(fx.engine.admin.createWorkspace({ name: 'test' })).rootKey).toBe(firstRootKey);
  });
});
