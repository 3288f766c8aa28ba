import { describe, expect, it } from 'vitest';
import { ManualClock, Random, sha256Base64Url, sha256Digest } from '../../src/engine/index.js';
import type { EngineContext } from '../../src/engine/context.js';
import { emptyState } from '../../src/engine/state.js';
import { createKey, updateKey } from '../../src/engine/keys.js';
import { createApi, createWorkspace } from '../../src/engine/workspace.js';
import { stateFromSnapshot, takeSnapshot } from '../../src/engine/snapshot.js';
import { NO_NAMES, StoredKey, keyToJson, packStart, unpackStart } from '../../src/engine/key-record.js';
import { KeyOwners, newKeyOwner } from '../../src/engine/key-owners.js';
import { flatString } from '../../src/engine/flat-string.js';
import { BASE58_ALPHABET } from '../../src/engine/base58.js';
import fc from 'fast-check';
import { assertProperty } from '../helpers/property.js';
import { NO_RATE_LIMITS } from '../../src/engine/attached-ratelimits.js';
import { unwrap } from '../helpers/engine.js';

const START_MS = Date.UTC(2027, 0, 15, 12);

function context(): { ctx: EngineContext; rootKey: string; apiId: string } {
  const ctx: EngineContext = {
    state: emptyState(),
    clock: new ManualClock(START_MS),
    random: new Random(5),
    compat: 'interface',
    sha256: sha256Base64Url,
    keyDigest: sha256Digest,
    faults: null,
  };
  const { rootKey } = unwrap(createWorkspace(ctx, { name: 'mem' }));
  const { apiId } = unwrap(createApi(ctx, rootKey, { name: 'mem-api' }));
  return { ctx, rootKey, apiId };
}

function storedKey(ctx: EngineContext, keyId: string): StoredKey {
  const key = ctx.state.keys.get(keyId);
  if (!(key instanceof StoredKey)) throw new Error(`key ${keyId} is not held as a StoredKey`);
  return key;
}

describe('StoredKey: the compact in-memory key', () => {
  it('reads defaults from the prototype and gives a key its own field only when it differs', () => {
    const { ctx, rootKey, apiId } = context();
    const a = storedKey(ctx, unwrap(createKey(ctx, rootKey, { apiId })).keyId);
    const b = storedKey(ctx, unwrap(createKey(ctx, rootKey, { apiId, name: 'named', permissions: ['p1'], enabled: false })).keyId);
    expect([a.name, a.meta, a.expiresAtMs, a.identityId, a.recoverablePlaintext, a.enabled]).toEqual([null, null, null, null, null, true]);
    expect(a.permissions).toBe(NO_NAMES);
    expect(a.roles).toBe(NO_NAMES);
    expect(a.ratelimits).toBe(NO_RATE_LIMITS);
    expect(Object.hasOwn(a, 'name')).toBe(false);
    expect([b.name, b.permissions, b.enabled]).toEqual(['named', ['p1'], false]);
    expect(Object.hasOwn(b, 'name')).toBe(true);
    // Setting a field on one key never reaches another (nor the shared default).
    unwrap(updateKey(ctx, rootKey, { keyId: a.id, name: 'now named', roles: ['r'] }));
    expect(a.name).toBe('now named');
    expect(a.roles).toEqual(['r']);
    expect(storedKey(ctx, b.id).roles).toBe(NO_NAMES);
    expect(NO_NAMES).toEqual([]);
  });

  it('keeps nextRefillAtMs exact: whole days as day numbers, any other instant as is', () => {
    const key = new StoredKey('key_x', newKeyOwner('api_x', 'ws_x'), 'hash', 'abcd', START_MS);
    // Beyond 2^30 days (past the largest instant) a day is no small integer: it must still come back exact.
    for (const value of [
      null,
      0,
      86_400_000,
      Date.UTC(2027, 1, 28),
      Date.UTC(9999, 11, 31),
      1,
      START_MS,
      8_640_000_000_000_000,
      2 ** 30 * 86_400_000,
      2 ** 31 * 86_400_000,
    ]) {
      key.nextRefillAtMs = value;
      expect(key.nextRefillAtMs).toBe(value);
    }
    key.nextRefillAtMs = Date.UTC(2027, 1, 1);
    expect(key.nextRefill).toBe(Date.UTC(2027, 1, 1) / 86_400_000);
  });

  it('packs a start of 4 base58 characters into a number and gives it back; any other start stays a string', () => {
    const base58 = fc.constantFrom(...BASE58_ALPHABET.split(''));
    assertProperty(
      fc.property(fc.array(base58, { minLength: 4, maxLength: 4 }), (chars) => {
        const start = chars.join('');
        const packed = packStart(start);
        expect(typeof packed).toBe('number');
        expect(unpackStart(packed)).toBe(start);
        const key = new StoredKey('key_x', newKeyOwner('api_x', 'ws_x'), 'hash', start, START_MS);
        expect(key.start).toBe(start);
      }),
    );
    for (const start of ['', 'abc', 'abcde', 'sk_abcd', 'ab0d', 'abIl', 'abé1', '1111', 'zzzz']) {
      expect(unpackStart(packStart(start))).toBe(start);
      expect(new StoredKey('key_x', newKeyOwner('api_x', 'ws_x'), 'hash', start, START_MS).start).toBe(start);
    }
    expect(packStart('ab0d')).toBe('ab0d');
    expect(packStart('sk_abcd')).toBe('sk_abcd');
  });

  it('keyToJson writes every field of a key and shares nothing with it', () => {
    const { ctx, rootKey, apiId } = context();
    const { keyId } = unwrap(
      createKey(ctx, rootKey, {
        apiId,
        meta: { a: { b: 1 } },
        ratelimits: [{ name: 'r', limit: 1, duration: 1000 }],
        credits: { remaining: 3, refill: { interval: 'daily', amount: 3 } },
      }),
    );
    const key = storedKey(ctx, keyId);
    const json = keyToJson(key);
    expect(Object.keys(json)).toEqual([
      'id',
      'apiId',
      'workspaceId',
      'hash',
      'start',
      'name',
      'meta',
      'permissions',
      'roles',
      'expiresAtMs',
      'enabled',
      'createdAt',
      'identityId',
      'remaining',
      'refill',
      'nextRefillAtMs',
      'ratelimits',
      'recoverablePlaintext',
    ]);
    expect(json).toMatchObject({
      meta: { a: { b: 1 } },
      remaining: 3,
      refill: { interval: 'daily', amount: 3, refillDay: null },
      nextRefillAtMs: Date.UTC(2027, 0, 16),
    });
    expect(json.meta).not.toBe(key.meta);
    expect(json.permissions).not.toBe(key.permissions);
    expect(json.ratelimits[0]).not.toBe(key.ratelimits[0]);
    expect(json.refill).not.toBe(key.refill);
    expect(Object.getPrototypeOf(json)).toBe(Object.prototype);
  });
});

describe('restored keys lose shared lists and interned refill settings', () => {
  it('a restored key has the same own fields, prototype, shared empty lists and refill object as a created one', () => {
    const { ctx, rootKey, apiId } = context();
    const monthly = { remaining: 1000, refill: { interval: 'monthly' as const, amount: 1000 } };
    const ids = [
      unwrap(createKey(ctx, rootKey, { apiId, credits: monthly })).keyId,
      unwrap(createKey(ctx, rootKey, { apiId, credits: monthly })).keyId,
      unwrap(createKey(ctx, rootKey, { apiId })).keyId,
      unwrap(createKey(ctx, rootKey, { apiId, name: 'n', permissions: ['x'], credits: { remaining: 2, refill: { interval: 'daily', amount: 2 } } })).keyId,
    ];
    const text = JSON.stringify(takeSnapshot(ctx, 5));
    const restored = unwrap(stateFromSnapshot(JSON.parse(text), sha256Base64Url)).state;
    for (const id of ids) {
      const created = storedKey(ctx, id);
      const back = restored.keys.get(id);
      expect(back).toBeInstanceOf(StoredKey);
      if (!(back instanceof StoredKey)) return;
      expect(Object.getPrototypeOf(back)).toBe(StoredKey.prototype);
      // Same own fields in the same order: the same hidden class as a created key.
      expect(Object.keys(back)).toEqual(Object.keys(created));
      expect(back.permissions === NO_NAMES).toBe(created.permissions === NO_NAMES);
      expect(back.roles).toBe(NO_NAMES);
      expect(back.ratelimits).toBe(NO_RATE_LIMITS);
      // The very refill object createKey shares between keys of one plan, not a copy per key.
      expect(back.refill).toBe(created.refill);
      expect(keyToJson(back)).toEqual(keyToJson(created));
      expect(restored.keysByDigest.get(created.digest)).toBe(back);
      expect(back.hash).toBe(created.hash);
    }
    const [first, second] = ids.map((id) => restored.keys.get(id));
    expect(first?.refill).not.toBeNull();
    expect(first?.refill).toBe(second?.refill);
  });
});

describe('keys of one API share one owner (API and workspace ids)', () => {
  it('created and restored keys of an API hold the same owner object, and read their ids through it', () => {
    const { ctx, rootKey, apiId } = context();
    const otherApi = unwrap(createApi(ctx, rootKey, { name: 'other-api' })).apiId;
    const ids = [apiId, apiId, otherApi].map((api) => unwrap(createKey(ctx, rootKey, { apiId: api })).keyId);
    const [a, b, c] = ids.map((id) => storedKey(ctx, id));
    expect(a?.owner).toBe(b?.owner);
    expect(a?.owner).not.toBe(c?.owner);
    expect([a?.apiId, c?.apiId]).toEqual([apiId, otherApi]);
    expect(a?.workspaceId).toBe(c?.workspaceId);
    expect(Object.hasOwn(a as object, 'apiId')).toBe(false);
    const restored = unwrap(stateFromSnapshot(JSON.parse(JSON.stringify(takeSnapshot(ctx, 5))), sha256Base64Url)).state;
    const [ra, rb, rc] = ids.map((id) => restored.keys.get(id) as StoredKey);
    expect(ra?.owner).toBe(rb?.owner);
    expect([ra?.apiId, ra?.workspaceId, rc?.apiId]).toEqual([apiId, a?.workspaceId, otherApi]);
    expect(keyToJson(rc as StoredKey)).toEqual(keyToJson(c as StoredKey));
  });

  it('setting apiId or workspaceId changes that key alone', () => {
    const owners = new KeyOwners();
    const a = new StoredKey('key_a', owners.of('api_shared', 'ws_1'), 'hash_a', 'abcd', START_MS);
    const b = new StoredKey('key_b', owners.of('api_shared', 'ws_1'), 'hash_b', 'abcd', START_MS);
    expect(a.owner).toBe(b.owner);
    a.workspaceId = 'ws_2';
    a.apiId = 'api_moved';
    expect([a.apiId, a.workspaceId]).toEqual(['api_moved', 'ws_2']);
    expect([b.apiId, b.workspaceId]).toEqual(['api_shared', 'ws_1']);
    // The same API id named in another workspace (a snapshot may say so) gets an owner of its own.
    const c = new StoredKey('key_c', owners.of('api_shared', 'ws_3'), 'hash_c', 'abcd', START_MS);
    expect([c.apiId, c.workspaceId]).toEqual(['api_shared', 'ws_3']);
    expect(owners.of('api_shared', 'ws_1')).toBe(b.owner);
    expect(owners.size).toBe(1);
  });
});

describe('keys of one API and refill share one owner (ids and refill settings)', () => {
  it('a key changing its refill moves to the shared owner of its API for that refill, and back', () => {
    const { ctx, rootKey, apiId } = context();
    const monthly = { remaining: 10, refill: { interval: 'monthly' as const, amount: 10 } };
    const [a, b, c] = [monthly, monthly, undefined].map((credits) =>
      storedKey(ctx, unwrap(createKey(ctx, rootKey, { apiId, ...(credits === undefined ? {} : { credits }) })).keyId),
    );
    expect(a!.owner).toBe(b!.owner);
    expect(a!.owner).not.toBe(c!.owner);
    expect(Object.hasOwn(a!, 'refill')).toBe(false);
    expect(a!.refill).toEqual({ interval: 'monthly', amount: 10, refillDay: 1 });
    unwrap(updateKey(ctx, rootKey, { keyId: a!.id, credits: { refill: null } }));
    expect(a!.refill).toBeNull();
    expect(a!.owner).toBe(c!.owner);
    expect(b!.refill).toEqual({ interval: 'monthly', amount: 10, refillDay: 1 });
    unwrap(updateKey(ctx, rootKey, { keyId: c!.id, credits: { remaining: 10, refill: { interval: 'monthly', amount: 10 } } }));
    expect(c!.owner).toBe(b!.owner);
    expect([a!.apiId, b!.apiId, c!.apiId]).toEqual([apiId, apiId, apiId]);
    expect(ctx.state.keyOwners.size).toBe(1);
  });

  it('moving a key to another API keeps its refill; its old owner is unchanged', () => {
    const owners = new KeyOwners();
    const refill = Object.freeze({ interval: 'daily' as const, amount: 3, refillDay: null });
    const a = new StoredKey('key_a', owners.of('api_1', 'ws_1', refill), 'digest_a', 'abcd', START_MS);
    const b = new StoredKey('key_b', owners.of('api_1', 'ws_1', refill), 'digest_b', 'abcd', START_MS);
    a.apiId = 'api_2';
    expect([a.apiId, a.workspaceId, a.refill]).toEqual(['api_2', 'ws_1', refill]);
    expect([b.apiId, b.refill]).toEqual(['api_1', refill]);
    expect(owners.of('api_1', 'ws_1', refill)).toBe(b.owner);
  });

  it('an API shares owners for at most 1,000 refill settings; a key with yet another gets one of its own', () => {
    const owners = new KeyOwners();
    const refills = Array.from({ length: 1_002 }, (_, i) => Object.freeze({ interval: 'daily' as const, amount: i + 1, refillDay: null }));
    const shared = refills.map((refill) => owners.of('api_1', 'ws_1', refill));
    expect(owners.of('api_1', 'ws_1', refills[999]!)).toBe(shared[999]);
    expect(owners.of('api_1', 'ws_1', refills[1_001]!)).not.toBe(shared[1_001]);
    expect(owners.of('api_1', 'ws_1', refills[1_001]!).refill).toBe(refills[1_001]);
  });
});

describe('regression: keyOwner leak (a module-level owner cache shared by every simulator, kept after reset and restore)', () => {
  it('each state shares owners among its own keys only, one per API with keys, and a new state starts with none', () => {
    // Two simulators of one seed draw the same workspace and API ids: a module-level cache gave their keys one owner.
    const first = context();
    const second = context();
    expect(second.apiId).toBe(first.apiId);
    const a = storedKey(first.ctx, unwrap(createKey(first.ctx, first.rootKey, { apiId: first.apiId })).keyId);
    const b = storedKey(second.ctx, unwrap(createKey(second.ctx, second.rootKey, { apiId: second.apiId })).keyId);
    expect([a.apiId, a.workspaceId]).toEqual([b.apiId, b.workspaceId]);
    expect(a.owner).not.toBe(b.owner);
    expect(first.ctx.state.keyOwners.size).toBe(1);
    expect(second.ctx.state.keyOwners.size).toBe(1);

    // Many simulators, each with APIs and keys: each state holds its own APIs' owners, no more.
    for (let i = 0; i < 50; i++) {
      const { ctx, rootKey, apiId } = context();
      const other = unwrap(createApi(ctx, rootKey, { name: `other-${i}` })).apiId;
      unwrap(createApi(ctx, rootKey, { name: `keyless-${i}` }));
      for (const api of [apiId, apiId, other]) unwrap(createKey(ctx, rootKey, { apiId: api }));
      expect(ctx.state.keyOwners.size).toBe(2);
      // A reset replaces the state (engine.ts): its owners go with it.
      ctx.state = emptyState();
      expect(ctx.state.keyOwners.size).toBe(0);
    }
  });

  it('a restored state holds the owners its keys were built with, and keys created after the restore share them', () => {
    const { ctx, rootKey, apiId } = context();
    const other = unwrap(createApi(ctx, rootKey, { name: 'other-api' })).apiId;
    for (const api of [apiId, other, apiId]) unwrap(createKey(ctx, rootKey, { apiId: api }));
    const before = storedKey(ctx, [...ctx.state.keys.keys()][0] as string);
    ctx.state = unwrap(stateFromSnapshot(JSON.parse(JSON.stringify(takeSnapshot(ctx, 5))), sha256Base64Url)).state;
    expect(ctx.state.keyOwners.size).toBe(2);
    const restored = [...ctx.state.keys.values()] as StoredKey[];
    expect(restored[0]?.owner).not.toBe(before.owner);
    const after = storedKey(ctx, unwrap(createKey(ctx, rootKey, { apiId })).keyId);
    expect(after.owner).toBe(restored[0]?.owner);
    expect(restored[1]?.owner).not.toBe(after.owner);
    expect(ctx.state.keyOwners.size).toBe(2);
  });
});

describe('flatString', () => {
  it('gives back an equal string for any text, lone surrogates included', () => {
    assertProperty(
      fc.property(fc.string({ unit: 'binary' }), fc.nat(20), (text, cut) => {
        // A slice and a rope, the two kinds of string it exists to copy.
        expect(flatString(text)).toBe(text);
        expect(flatString(text.slice(Math.min(cut, text.length)))).toBe(text.slice(Math.min(cut, text.length)));
        expect(flatString(`${text}${cut}`)).toBe(`${text}${cut}`);
      }),
    );
    for (const text of ['', '"', '\\', '\u2028', '\ud800', 'x'.repeat(100_000)]) expect(flatString(text)).toBe(text);
  });
});
