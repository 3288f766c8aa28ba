/** Restore checks a state's invariants before it replaces the live one (regressions named after the bugs). */
import { describe, expect, it } from 'vitest';
import { Engine, type EngineSnapshot, MAX_META_BYTES, ManualClock, type Result } from '../../src/engine/index.js';
import { errorCode, makeEngine, unwrap } from '../helpers/engine.js';

const DAY = 86_400_000;

function populate() {
  const fx = makeEngine({ seed: 21 });
  const first = unwrap(
    fx.engine.keys.createKey(fx.rootKey, {
      apiId: fx.apiId,
      externalId: 'acme',
      credits: { remaining: 5, refill: { interval: 'monthly', amount: 5, refillDay: 31 } },
    }),
  );
  const second = unwrap(fx.engine.keys.createKey(fx.rootKey, { apiId: fx.apiId, credits: { remaining: 3 } }));
  const other = unwrap(fx.engine.admin.createWorkspace({ name: 'other' }));
  unwrap(fx.engine.admin.createNamespace(fx.workspaceId, 'api'));
  unwrap(fx.engine.ratelimit.setOverride(fx.rootKey, { namespace: 'api', identifier: 'vip', limit: 10, duration: 60_000 }));
  return { ...fx, first, second, other };
}

/** The refusal's field location; the engine's state must be unchanged. */
function refusedAt(engine: Engine, snapshot: unknown): string {
  const before = engine.snapshot();
  const result: Result<unknown> = engine.restore(snapshot);
  expect(errorCode(result)).toBe('err:service:application:invalid_input');
  expect(engine.snapshot()).toEqual(before);
  return result.ok ? '' : (result.error.errors?.[0]?.location ?? '');
}

const copy = (s: EngineSnapshot): EngineSnapshot => JSON.parse(JSON.stringify(s)) as EngineSnapshot;

describe('restore refuses states the engine could not have produced', () => {
  it('duplicate key ids left a deleted key that still verified VALID', () => {
    const fx = populate();
    const bad = copy(fx.engine.snapshot());
    const [a, b] = bad.keys;
    if (a === undefined || b === undefined) throw new Error('two keys expected');
    b.id = a.id;
    expect(refusedAt(fx.engine, bad)).toBe('body.snapshot.keys[1].id');
    // What the check prevents: restored, deleting "the" key would leave the other hash verifiable.
    const fresh = new Engine({ clock: new ManualClock(fx.clock.now()), seed: 21 });
    expect(fresh.restore(bad).ok).toBe(false);
  });

  it('a duplicated key hash is refused too', () => {
    const fx = populate();
    const bad = copy(fx.engine.snapshot());
    (bad.keys[1] as EngineSnapshot['keys'][number]).hash = (bad.keys[0] as EngineSnapshot['keys'][number]).hash;
    expect(refusedAt(fx.engine, bad)).toBe('body.snapshot.keys[1].hash');
  });

  it('a duplicated id is reported before a duplicated hash earlier in the list, with the first of each pair', () => {
    const fx = populate();
    const third = unwrap(fx.engine.keys.createKey(fx.rootKey, { apiId: fx.apiId }));
    expect(third.keyId).toBeDefined();
    const bad = copy(fx.engine.snapshot());
    const [a, b, c] = bad.keys;
    if (a === undefined || b === undefined || c === undefined) throw new Error('three keys expected');
    b.hash = a.hash;
    c.id = b.id;
    expect(refusedAt(fx.engine, bad)).toBe('body.snapshot.keys[2].id');
    const result = fx.engine.restore(bad);
    expect(result.ok ? '' : result.error.errors?.[0]?.message).toMatch(/keys\[2\] has the same id as keys\[1\]/);
    c.id = 'key_unique';
    expect(refusedAt(fx.engine, bad)).toBe('body.snapshot.keys[1].hash');
  });

  it('a duplicated root-key hash moved a key to another workspace', () => {
    const fx = populate();
    const bad = copy(fx.engine.snapshot());
    const mine = bad.rootKeys.find((r) => r.workspaceId === fx.workspaceId);
    const theirs = bad.rootKeys.find((r) => r.workspaceId === fx.other.workspaceId);
    if (mine === undefined || theirs === undefined) throw new Error('two root keys expected');
    theirs.hash = mine.hash;
    expect(refusedAt(fx.engine, bad)).toMatch(/^body\.snapshot\.rootKeys\[\d+\]\.hash$/);
  });

  it('a refill set so that it never happened', () => {
    const fx = populate();
    const good = fx.engine.snapshot();
    const index = good.keys.findIndex((k) => k.refill !== null);
    const withKey = (change: (key: EngineSnapshot['keys'][number]) => void) => {
      const bad = copy(good);
      change(bad.keys[index] as EngineSnapshot['keys'][number]);
      return bad;
    };
    const at = `body.snapshot.keys[${index}].nextRefillAtMs`;
    // Never scheduled: the engine settles nothing without a next instant.
    expect(
      refusedAt(
        fx.engine,
        withKey((k) => (k.nextRefillAtMs = null)),
      ),
    ).toBe(at);
    // Scheduled a year late: every refill in between would be skipped.
    expect(
      refusedAt(
        fx.engine,
        withKey((k) => (k.nextRefillAtMs = (k.nextRefillAtMs ?? 0) + 365 * DAY)),
      ),
    ).toBe(at);
    // Not an instant of its calendar (monthly on day 31 is never at noon).
    expect(
      refusedAt(
        fx.engine,
        withKey((k) => (k.nextRefillAtMs = (k.nextRefillAtMs ?? 0) - DAY / 2)),
      ),
    ).toBe(at);
    // A next instant without a refill.
    expect(
      refusedAt(
        fx.engine,
        withKey((k) => (k.refill = null)),
      ),
    ).toBe(at);
  });

  it('refill settings a request could not have set', () => {
    const fx = populate();
    const good = fx.engine.snapshot();
    const index = good.keys.findIndex((k) => k.refill !== null);
    const at = `body.snapshot.keys[${index}].refill`;
    for (const refill of [
      { interval: 'monthly', amount: 5, refillDay: 0 },
      { interval: 'monthly', amount: 5, refillDay: 32 },
      { interval: 'monthly', amount: 5, refillDay: null },
      { interval: 'daily', amount: 5, refillDay: 3 },
      { interval: 'daily', amount: 0, refillDay: null },
      { interval: 'daily', amount: 2.5, refillDay: null },
      { interval: 'weekly', amount: 5, refillDay: null },
    ]) {
      const bad = copy(good) as unknown as { keys: Array<Record<string, unknown>> };
      (bad.keys[index] as Record<string, unknown>).refill = refill;
      expect(refusedAt(fx.engine, bad)).toBe(at);
    }
  });

  it('references that do not resolve', () => {
    const fx = populate();
    const good = fx.engine.snapshot();
    const cases: Array<[(s: EngineSnapshot) => void, RegExp]> = [
      [(s) => ((s.keys[0] as EngineSnapshot['keys'][number]).apiId = 'api_missing'), /keys\[0\]\.apiId$/],
      [(s) => ((s.keys[0] as EngineSnapshot['keys'][number]).workspaceId = fx.other.workspaceId), /keys\[0\]\.workspaceId$/],
      [(s) => ((s.apis[0] as EngineSnapshot['apis'][number]).workspaceId = 'ws_missing'), /apis\[0\]\.workspaceId$/],
      [(s) => s.rootKeys.forEach((r) => (r.workspaceId = 'ws_missing')), /rootKeys\[0\]\.workspaceId$/],
      [(s) => ((s.overrides[0] as EngineSnapshot['overrides'][number]).namespaceId = 'rlns_missing'), /overrides\[0\]\.namespaceId$/],
      [
        (s) => {
          const key = s.keys.find((k) => k.identityId !== null) as EngineSnapshot['keys'][number];
          (s.identities.find((i) => i.id === key.identityId) as EngineSnapshot['identities'][number]).workspaceId = fx.other.workspaceId;
        },
        /keys\[\d+\]\.identityId$/,
      ],
      [(s) => s.workspaces.push({ ...(s.workspaces[0] as EngineSnapshot['workspaces'][number]) }), /workspaces\[2\]\.id$/],
      [(s) => s.identities.push({ ...(s.identities[0] as EngineSnapshot['identities'][number]), id: 'id_other' }), /identities\[1\]$/],
    ];
    for (const [change, location] of cases) {
      const bad = copy(good);
      change(bad);
      expect(refusedAt(fx.engine, bad)).toMatch(location);
    }
  });

  it('a deleted identity leaves keys that still restore (their identityId dangles, as the engine leaves it)', () => {
    const fx = populate();
    unwrap(fx.engine.identities.deleteIdentity(fx.rootKey, { identity: 'acme' }));
    const snapshot = copy(fx.engine.snapshot());
    const fresh = new Engine({ clock: new ManualClock(fx.clock.now()), seed: 21 });
    unwrap(fresh.restore(snapshot));
    expect(fresh.snapshot()).toEqual(fx.engine.snapshot());
  });

  it('metadata over the bound is refused like on create; unknown fields are dropped', () => {
    const fx = populate();
    const bad = copy(fx.engine.snapshot());
    (bad.keys[0] as EngineSnapshot['keys'][number]).meta = { blob: 'x'.repeat(MAX_META_BYTES) };
    expect(refusedAt(fx.engine, bad)).toBe('body.snapshot.keys[0].meta');
    const extra = copy(fx.engine.snapshot()) as unknown as { keys: Array<Record<string, unknown>> };
    (extra.keys[0] as Record<string, unknown>).surplus = { deep: [[[1]]] };
    const fresh = new Engine({ clock: new ManualClock(fx.clock.now()), seed: 21 });
    unwrap(fresh.restore(extra));
    expect(fresh.snapshot()).toEqual(fx.engine.snapshot());
  });

  it('a snapshot after many refills, deletions and updates still restores (the checks accept what the engine produces)', () => {
    const fx = populate();
    fx.clock.advance(70 * DAY + 12_345);
    unwrap(fx.engine.keys.verifyKey(undefined, { key: fx.first.key }));
    unwrap(fx.engine.keys.updateKey(fx.rootKey, { keyId: fx.second.keyId, credits: { remaining: 9, refill: { interval: 'daily', amount: 9 } } }));
    unwrap(fx.engine.keys.deleteKey(fx.rootKey, { keyId: fx.first.keyId }));
    unwrap(fx.engine.admin.deleteNamespace(fx.workspaceId, 'api'));
    unwrap(fx.engine.admin.createNamespace(fx.workspaceId, 'api'));
    fx.clock.advance(3 * DAY);
    // Root keys keep their permission list as given, repeats included.
    unwrap(fx.engine.admin.createRootKey(fx.workspaceId, ['api.*.read_key', 'api.*.read_key']));
    const snapshot = copy(fx.engine.snapshot());
    const fresh = new Engine({ clock: new ManualClock(fx.clock.now()), seed: 21 });
    unwrap(fresh.restore(snapshot));
    expect(fresh.snapshot()).toEqual(fx.engine.snapshot());
  });
});
