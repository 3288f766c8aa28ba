/**
 * The official SDK, `@unkey/api`, unchanged, pointed at the simulator with `serverURL`.
 *
 * Every operation keysim serves is driven through the SDK: successes must parse with the SDK's own
 * response schemas (a mismatch would surface as the SDK's `ResponseValidationError` and fail the
 * test), and errors must arrive as the SDK's typed error classes for the status codes the SDK maps
 * on that operation.
 *
 * 429: keysim has no way to produce a 429 yet (the fault-injection surface comes later), so no
 * test here fakes one; `TooManyRequestsErrorResponse` is not exercised.
 */
import { HTTPClient, Unkey } from '@unkey/api';
import {
  APIError,
  BadRequestErrorResponse,
  ConflictErrorResponse,
  ConnectionError,
  ForbiddenErrorResponse,
  GoneErrorResponse,
  NotFoundErrorResponse,
  UnauthorizedErrorResponse,
  UnkeyError,
} from '@unkey/api/models/errors';
import type { IdentitiesListIdentitiesResponse } from '@unkey/api/models/operations';
import type { Paginator } from '@unkey/api/types';
import { beforeEach, describe, expect, it } from 'vitest';
import { admin, errorBody, rejectsWith, rootKeyWith, sdk, startSimulator, useSimulator } from '../helpers/sdk.js';

/** The simulator's clock starts here (and goes back here on every reset): 2028 is a leap year. */
const START = Date.UTC(2028, 0, 10, 12, 0, 0); // 2028-01-10T12:00:00.000Z

const sim = useSimulator({ startMs: START });
let unkey: Unkey;
let sent: string[];

beforeEach(() => {
  ({ unkey, sent } = sdk(sim()));
});

async function newApi(name = 'payments'): Promise<string> {
  const res = await unkey.apis.createApi({ name });
  return res.data.apiId;
}

async function newNamespace(name: string): Promise<string> {
  const { namespaceId } = await admin<{ namespaceId: string }>(sim(), 'namespaces.create', { name });
  return namespaceId;
}

async function setClock(to: string | number): Promise<number> {
  const { nowMs } = await admin<{ nowMs: number }>(sim(), 'clock.set', { to });
  return nowMs;
}

describe('apis and keys through the SDK', () => {
  it('apis.createApi answers an api_ id and a request id', async () => {
    const res = await unkey.apis.createApi({ name: 'payments' });
    expect(res.data.apiId).toMatch(/^api_[A-Za-z0-9]+$/);
    expect(res.meta.requestId).toMatch(/^req_/);
    expect(sent).toEqual(['POST /v2/apis.createApi']);
  });

  it('keys.createKey with every option, read back with keys.getKey', async () => {
    const apiId = await newApi();
    const expires = START + 30 * 86_400_000;
    const created = await unkey.keys.createKey({
      apiId,
      prefix: 'sk_live',
      name: 'checkout',
      byteLength: 24,
      externalId: 'user_123',
      meta: { plan: 'pro', seats: 3 },
      permissions: ['documents.read', 'documents.write'],
      roles: ['editor'],
      expires,
      credits: { remaining: 100, refill: { interval: 'daily', amount: 100 } },
      ratelimits: [{ name: 'requests', limit: 10, duration: 60_000, autoApply: true }],
      enabled: true,
    });
    expect(created.data.keyId).toMatch(/^key_/);
    expect(created.data.key).toMatch(/^sk_live_[1-9A-HJ-NP-Za-km-z]+$/);

    const got = await unkey.keys.getKey({ keyId: created.data.keyId });
    const key = got.data;
    expect(key.keyId).toBe(created.data.keyId);
    expect(created.data.key.startsWith(key.start)).toBe(true);
    expect(key.enabled).toBe(true);
    expect(key.createdAt).toBe(START);
    expect(key.name).toBe('checkout');
    expect(key.meta).toEqual({ plan: 'pro', seats: 3 });
    expect(key.expires).toBe(expires);
    expect([...(key.permissions ?? [])].sort()).toEqual(['documents.read', 'documents.write']);
    expect(key.roles).toEqual(['editor']);
    expect(key.credits).toEqual({ remaining: 100, refill: { interval: 'daily', amount: 100 } });
    expect(key.identity?.externalId).toBe('user_123');
    expect(key.identity?.id).toMatch(/^id_/);
    expect(key.ratelimits).toHaveLength(1);
    expect(key.ratelimits?.[0]).toMatchObject({ name: 'requests', limit: 10, duration: 60_000, autoApply: true });
    expect(key.ratelimits?.[0]?.id).toMatch(/^rl_/);
    expect(key.plaintext).toBeUndefined();
  });

  it('keys.createKey with no options: optional fields are omitted, not null', async () => {
    const apiId = await newApi();
    const { data } = await unkey.keys.createKey({ apiId });
    expect(data.key).toMatch(/^[1-9A-HJ-NP-Za-km-z]+$/);
    const { data: key } = await unkey.keys.getKey({ keyId: data.keyId });
    expect(key.enabled).toBe(true);
    for (const field of ['name', 'meta', 'expires', 'credits', 'identity', 'ratelimits', 'plaintext'] as const) {
      expect(key[field], field).toBeUndefined();
    }
  });

  it('keys.verifyKey: VALID spends credits, then USAGE_EXCEEDED keeps the balance', async () => {
    const apiId = await newApi();
    const { data } = await unkey.keys.createKey({ apiId, name: 'metered', meta: { tier: 'a' }, permissions: ['a', 'b'], credits: { remaining: 5 } });

    const first = await unkey.keys.verifyKey({ key: data.key, credits: { cost: 3 }, permissions: 'a AND b', tags: ['path=/x'] });
    expect(first.data).toMatchObject({ valid: true, code: 'VALID', keyId: data.keyId, enabled: true, name: 'metered', meta: { tier: 'a' }, credits: 2 });

    const refused = await unkey.keys.verifyKey({ key: data.key, credits: { cost: 3 } });
    expect(refused.data).toMatchObject({ valid: false, code: 'USAGE_EXCEEDED', keyId: data.keyId, credits: 2 });

    const free = await unkey.keys.verifyKey({ key: data.key, credits: { cost: 0 } });
    expect(free.data).toMatchObject({ valid: true, code: 'VALID', credits: 2 });
  });

  it('keys.verifyKey: INSUFFICIENT_PERMISSIONS, DISABLED, EXPIRED and NOT_FOUND parse', async () => {
    const apiId = await newApi();
    const { data } = await unkey.keys.createKey({ apiId, permissions: ['a'], expires: START + 60_000 });

    const denied = await unkey.keys.verifyKey({ key: data.key, permissions: 'a AND b' });
    expect(denied.data).toMatchObject({ valid: false, code: 'INSUFFICIENT_PERMISSIONS', keyId: data.keyId });

    const either = await unkey.keys.verifyKey({ key: data.key, permissions: '(b OR a) AND a' });
    expect(either.data.code).toBe('VALID');

    const unknown = await unkey.keys.verifyKey({ key: 'sk_does_not_exist' });
    expect(unknown.data).toEqual({ valid: false, code: 'NOT_FOUND' });

    await admin(sim(), 'clock.advance', { byMs: 60_001 });
    const expired = await unkey.keys.verifyKey({ key: data.key });
    expect(expired.data).toMatchObject({ valid: false, code: 'EXPIRED', expires: START + 60_000 });

    await unkey.keys.updateKey({ keyId: data.keyId, enabled: false });
    const disabled = await unkey.keys.verifyKey({ key: data.key });
    expect(disabled.data).toMatchObject({ valid: false, code: 'DISABLED', enabled: false });
  });

  it('keys.verifyKey: rate limits (auto-applied, named, inline) report RATE_LIMITED with their state', async () => {
    const apiId = await newApi();
    const { data } = await unkey.keys.createKey({
      apiId,
      externalId: 'acme',
      credits: { remaining: 10 },
      ratelimits: [
        { name: 'burst', limit: 2, duration: 60_000, autoApply: true },
        { name: 'heavy', limit: 5, duration: 60_000, autoApply: false },
      ],
    });

    const one = await unkey.keys.verifyKey({ key: data.key, ratelimits: [{ name: 'heavy', cost: 4 }] });
    expect(one.data.code).toBe('VALID');
    expect(one.data.identity?.externalId).toBe('acme');
    const heavy = one.data.ratelimits?.find((r) => r.name === 'heavy');
    expect(heavy).toMatchObject({ limit: 5, duration: 60_000, remaining: 1, exceeded: false, autoApply: false });
    expect(heavy?.reset).toBeGreaterThan(START);
    expect(heavy?.id).toMatch(/^rl_/);

    // heavy would go to 8 > 5: refused, and (all or nothing) burst does not consume either.
    const tooHeavy = await unkey.keys.verifyKey({ key: data.key, ratelimits: [{ name: 'heavy', cost: 4 }] });
    expect(tooHeavy.data).toMatchObject({ valid: false, code: 'RATE_LIMITED', credits: 9 });
    expect(tooHeavy.data.ratelimits?.find((r) => r.name === 'heavy')?.exceeded).toBe(true);

    expect((await unkey.keys.verifyKey({ key: data.key })).data.code).toBe('VALID');
    const limited = await unkey.keys.verifyKey({ key: data.key });
    expect(limited.data).toMatchObject({ valid: false, code: 'RATE_LIMITED', credits: 8 });
    expect(limited.data.ratelimits?.find((r) => r.name === 'burst')).toMatchObject({ exceeded: true, remaining: 0 });

    // An inline limit (limit + duration in the request) needs nothing on the key. The auto-applied
    // burst is exhausted, so clear it first.
    await unkey.keys.updateKey({ keyId: data.keyId, ratelimits: [] });
    const inline = await unkey.keys.verifyKey({ key: data.key, ratelimits: [{ name: 'adhoc', limit: 1, duration: 1_000 }] });
    expect(inline.data.code).toBe('VALID');
    expect((await unkey.keys.verifyKey({ key: data.key, ratelimits: [{ name: 'adhoc', limit: 1, duration: 1_000 }] })).data.code).toBe('RATE_LIMITED');
  });

  it('keys.verifyKey works with a root key that may only verify, and answers NOT_FOUND (not 403) without verify_key', async () => {
    const apiId = await newApi();
    const { data } = await unkey.keys.createKey({ apiId });
    const verifier = sdk(sim(), await rootKeyWith(sim(), ['api.*.verify_key'])).unkey;
    expect((await verifier.keys.verifyKey({ key: data.key })).data).toMatchObject({ valid: true, code: 'VALID', keyId: data.keyId });
    const reader = sdk(sim(), await rootKeyWith(sim(), ['api.*.read_key'])).unkey;
    expect((await reader.keys.verifyKey({ key: data.key })).data).toEqual({ valid: false, code: 'NOT_FOUND' });
  });

  it('keys.updateKey: omitted = unchanged, null = cleared, value = set; answers data {}', async () => {
    const apiId = await newApi();
    const { data } = await unkey.keys.createKey({
      apiId,
      name: 'before',
      meta: { a: 1 },
      expires: START + 86_400_000,
      credits: { remaining: 10, refill: { interval: 'daily', amount: 20 } },
      ratelimits: [{ name: 'rl', limit: 3, duration: 1_000 }],
    });
    const rlId = (await unkey.keys.getKey({ keyId: data.keyId })).data.ratelimits?.[0]?.id;
    expect(rlId).toMatch(/^rl_/);

    const updated = await unkey.keys.updateKey({
      keyId: data.keyId,
      name: null,
      meta: { b: 2 },
      expires: null,
      credits: { remaining: 7 },
      ratelimits: [
        { name: 'rl', limit: 9, duration: 2_000 },
        { name: 'new', limit: 1, duration: 1_000 },
      ],
      externalId: 'ext_1',
      permissions: ['p.one'],
      roles: ['r.one'],
    });
    expect(updated.data).toEqual({});
    expect(updated.meta.requestId).toMatch(/^req_/);

    const { data: key } = await unkey.keys.getKey({ keyId: data.keyId });
    expect(key.name).toBeUndefined();
    expect(key.expires).toBeUndefined();
    expect(key.meta).toEqual({ b: 2 });
    expect(key.credits).toEqual({ remaining: 7, refill: { interval: 'daily', amount: 20 } });
    expect(key.identity?.externalId).toBe('ext_1');
    expect(key.permissions).toEqual(['p.one']);
    expect(key.roles).toEqual(['r.one']);
    const byName = new Map((key.ratelimits ?? []).map((r) => [r.name, r]));
    expect(byName.get('rl')).toMatchObject({ id: rlId, limit: 9, duration: 2_000 });
    expect(byName.get('new')?.id).toMatch(/^rl_/);

    await unkey.keys.updateKey({ keyId: data.keyId, credits: { refill: null } });
    expect((await unkey.keys.getKey({ keyId: data.keyId })).data.credits).toEqual({ remaining: 7 });
    await unkey.keys.updateKey({ keyId: data.keyId, credits: null });
    expect((await unkey.keys.getKey({ keyId: data.keyId })).data.credits).toBeUndefined();
  });

  it('keys.updateCredits: set, increment, decrement (never below 0), set null = unlimited', async () => {
    const apiId = await newApi();
    const { data } = await unkey.keys.createKey({ apiId, credits: { remaining: 10, refill: { interval: 'monthly', amount: 50, refillDay: 15 } } });

    const set = await unkey.keys.updateCredits({ keyId: data.keyId, operation: 'set', value: 4 });
    expect(set.data).toEqual({ remaining: 4, refill: { interval: 'monthly', amount: 50, refillDay: 15 } });
    const inc = await unkey.keys.updateCredits({ keyId: data.keyId, operation: 'increment', value: 6 });
    expect(inc.data.remaining).toBe(10);
    const dec = await unkey.keys.updateCredits({ keyId: data.keyId, operation: 'decrement', value: 25 });
    expect(dec.data.remaining).toBe(0);
    const unlimited = await unkey.keys.updateCredits({ keyId: data.keyId, operation: 'set', value: null });
    expect(unlimited.data.remaining).toBeNull();
    expect(unlimited.data.refill).toBeUndefined();
    expect((await unkey.keys.getKey({ keyId: data.keyId })).data.credits).toBeUndefined();

    // increment on an unlimited key → 400, typed.
    const bad = await rejectsWith(unkey.keys.updateCredits({ keyId: data.keyId, operation: 'increment', value: 1 }), BadRequestErrorResponse);
    expect(bad.statusCode).toBe(400);
    expect(bad.error.errors.map((e) => e.location)).toEqual(['body.operation']);
    // increment without a value → 400 on a limited key too
    await unkey.keys.updateCredits({ keyId: data.keyId, operation: 'set', value: 1 });
    const noValue = await rejectsWith(unkey.keys.updateCredits({ keyId: data.keyId, operation: 'decrement' }), BadRequestErrorResponse);
    expect(noValue.error.errors.map((e) => e.location)).toEqual(['body.value']);
  });

  it('keys.deleteKey: data {}, the key then verifies NOT_FOUND and every key operation is 404', async () => {
    const apiId = await newApi();
    const { data } = await unkey.keys.createKey({ apiId, credits: { remaining: 3 } });
    const deleted = await unkey.keys.deleteKey({ keyId: data.keyId, permanent: false });
    expect(deleted.data).toEqual({});
    expect((await unkey.keys.verifyKey({ key: data.key })).data).toEqual({ valid: false, code: 'NOT_FOUND' });

    const calls: Array<() => Promise<unknown>> = [
      () => unkey.keys.getKey({ keyId: data.keyId }),
      () => unkey.keys.updateKey({ keyId: data.keyId, name: 'x' }),
      () => unkey.keys.deleteKey({ keyId: data.keyId }),
      () => unkey.keys.updateCredits({ keyId: data.keyId, operation: 'set', value: 1 }),
    ];
    for (const call of calls) {
      const err = await rejectsWith(call(), NotFoundErrorResponse);
      expect(err.statusCode).toBe(404);
      expect(err.error.type).toMatch(/\/service\/data\/key_not_found$/);
    }
  });

  it('keys of another workspace behave as if they did not exist', async () => {
    const apiId = await newApi();
    const { data } = await unkey.keys.createKey({ apiId });
    const other = await admin<{ rootKey: string }>(sim(), 'workspaces.create', { name: 'other' });
    const stranger = sdk(sim(), other.rootKey).unkey;
    await rejectsWith(stranger.keys.getKey({ keyId: data.keyId }), NotFoundErrorResponse);
    await rejectsWith(stranger.keys.createKey({ apiId }), NotFoundErrorResponse);
    expect((await stranger.keys.verifyKey({ key: data.key })).data).toEqual({ valid: false, code: 'NOT_FOUND' });
  });
});

describe('identities through the SDK', () => {
  it('create, get (by id and by externalId), update, delete; the externalId can then be reused', async () => {
    const created = await unkey.identities.createIdentity({
      externalId: 'user_42',
      meta: { email: 'a@example.com' },
      ratelimits: [{ name: 'api', limit: 100, duration: 60_000, autoApply: true }],
    });
    const identityId = created.data.identityId;
    expect(identityId).toMatch(/^id_/);

    const byId = await unkey.identities.getIdentity({ identity: identityId });
    expect(byId.data).toMatchObject({ id: identityId, externalId: 'user_42', meta: { email: 'a@example.com' } });
    expect(byId.data.ratelimits).toHaveLength(1);
    expect(byId.data.ratelimits?.[0]).toMatchObject({ name: 'api', limit: 100, duration: 60_000, autoApply: true });
    const apiRl = byId.data.ratelimits?.[0]?.id;
    expect(apiRl).toMatch(/^rl_/);
    const byExternal = await unkey.identities.getIdentity({ identity: 'user_42' });
    expect(byExternal.data).toEqual(byId.data);

    const updated = await unkey.identities.updateIdentity({
      identity: 'user_42',
      meta: { plan: 'team' },
      ratelimits: [
        { name: 'api', limit: 5, duration: 1_000, autoApply: false },
        { name: 'uploads', limit: 1, duration: 60_000 },
      ],
    });
    expect(updated.data.id).toBe(identityId);
    expect(updated.data.meta).toEqual({ plan: 'team' });
    const rls = new Map((updated.data.ratelimits ?? []).map((r) => [r.name, r]));
    expect(rls.get('api')).toEqual({ id: apiRl, name: 'api', limit: 5, duration: 1_000, autoApply: false });
    expect(rls.get('uploads')).toMatchObject({ limit: 1, duration: 60_000, autoApply: false });

    const cleared = await unkey.identities.updateIdentity({ identity: identityId, ratelimits: [] });
    expect(cleared.data.ratelimits ?? []).toEqual([]);
    expect(cleared.data.meta).toEqual({ plan: 'team' });

    const deleted = await unkey.identities.deleteIdentity({ identity: identityId });
    expect(deleted.meta.requestId).toMatch(/^req_/);
    expect(Object.keys(deleted)).toEqual(['meta']);

    for (const call of [
      () => unkey.identities.getIdentity({ identity: identityId }),
      () => unkey.identities.updateIdentity({ identity: 'user_42', meta: {} }),
    ]) {
      const err = await rejectsWith(call(), NotFoundErrorResponse);
      expect(err.error.type).toMatch(/\/service\/data\/identity_not_found$/);
    }

    const again = await unkey.identities.createIdentity({ externalId: 'user_42' });
    expect(again.data.identityId).not.toBe(identityId);
  });

  it('createIdentity with a live duplicate externalId → ConflictErrorResponse (409); case-sensitive', async () => {
    await unkey.identities.createIdentity({ externalId: 'Dup' });
    const err = await rejectsWith(unkey.identities.createIdentity({ externalId: 'Dup' }), ConflictErrorResponse);
    expect(err.statusCode).toBe(409);
    expect(err.error).toMatchObject({ status: 409, title: 'Conflicting Resource' });
    expect(err.error.type).toMatch(/\/service\/data\/identity_already_exists$/);
    expect((await unkey.identities.createIdentity({ externalId: 'dup' })).data.identityId).toMatch(/^id_/);
  });

  it('an identity limit shared by its keys shows up in keys.verifyKey; gone after deleteIdentity', async () => {
    const apiId = await newApi();
    await unkey.identities.createIdentity({
      externalId: 'org_1',
      meta: { org: true },
      ratelimits: [{ name: 'org', limit: 1, duration: 60_000, autoApply: true }],
    });
    const a = await unkey.keys.createKey({ apiId, externalId: 'org_1' });
    const b = await unkey.keys.createKey({ apiId, externalId: 'org_1' });
    const first = await unkey.keys.verifyKey({ key: a.data.key });
    expect(first.data.code).toBe('VALID');
    expect(first.data.identity).toMatchObject({ externalId: 'org_1', meta: { org: true } });
    expect((await unkey.keys.verifyKey({ key: b.data.key })).data.code).toBe('RATE_LIMITED');

    await unkey.identities.deleteIdentity({ identity: 'org_1' });
    const after = await unkey.keys.verifyKey({ key: b.data.key });
    expect(after.data.code).toBe('VALID');
    expect(after.data.identity).toBeUndefined();
  });

  it('listIdentities: 23 identities in pages of 5 via page.next(); each seen once; the last page has no cursor', async () => {
    const made = new Set<string>();
    for (let i = 0; i < 23; i++) {
      const res = await unkey.identities.createIdentity({ externalId: `user_${String(i).padStart(2, '0')}`, meta: { i } });
      made.add(res.data.identityId);
    }

    const seen: string[] = [];
    const pageSizes: number[] = [];
    // Paginator<V> pages: each has .result and .next() (null once the cursor is absent).
    let page: IdentitiesListIdentitiesResponse & { next: Paginator<IdentitiesListIdentitiesResponse> } = await unkey.identities.listIdentities({ limit: 5 });
    for (let guard = 0; ; guard++) {
      expect(guard, 'pagination did not terminate').toBeLessThan(10);
      const body = page.result;
      pageSizes.push(body.data.length);
      for (const identity of body.data) {
        seen.push(identity.id);
        expect(identity.externalId).toMatch(/^user_\d\d$/);
      }
      const next = page.next();
      if (body.pagination.hasMore) {
        expect(body.pagination.cursor).toEqual(expect.any(String));
        expect(next).not.toBeNull();
      } else {
        expect(body.pagination.cursor).toBeUndefined();
        expect(next).toBeNull();
        break;
      }
      if (next === null) break;
      page = await next;
    }
    expect(pageSizes).toEqual([5, 5, 5, 5, 3]);
    expect(seen).toHaveLength(23);
    expect(new Set(seen)).toEqual(made);
    expect(seen).toEqual([...seen].sort());
  });

  it('listIdentities: the async iterator terminates on an exact multiple (20 in pages of 4) and on the default page size', async () => {
    for (let i = 0; i < 20; i++) await unkey.identities.createIdentity({ externalId: `e${i}` });
    const sizes: number[] = [];
    const ids = new Set<string>();
    for await (const page of await unkey.identities.listIdentities({ limit: 4 })) {
      sizes.push(page.result.data.length);
      for (const identity of page.result.data) ids.add(identity.id);
      if (sizes.length > 10) throw new Error('pagination did not terminate');
    }
    expect(sizes).toEqual([4, 4, 4, 4, 4]);
    expect(ids.size).toBe(20);

    const all = await unkey.identities.listIdentities({});
    expect(all.result.data).toHaveLength(20);
    expect(all.result.pagination).toEqual({ hasMore: false });
    expect(all.next()).toBeNull();
  });
});

describe('ratelimit through the SDK', () => {
  const MINUTE = 60_000;
  /** The end of the fixed window containing `now`: windows are aligned to the Unix epoch. */
  const windowEnd = (now: number, duration: number) => (Math.floor(now / duration) + 1) * duration;

  it('ratelimit.limit admits exactly `limit`, then denies with remaining 0 and the window end as reset', async () => {
    const namespaceId = await newNamespace('api.requests');
    for (let i = 1; i <= 3; i++) {
      const res = await unkey.ratelimit.limit({ namespace: 'api.requests', identifier: 'u1', limit: 3, duration: MINUTE });
      expect(res.data).toEqual({ success: true, limit: 3, remaining: 3 - i, reset: windowEnd(START, MINUTE) });
    }
    const denied = await unkey.ratelimit.limit({ namespace: namespaceId, identifier: 'u1', limit: 3, duration: MINUTE });
    expect(denied.data).toEqual({ success: false, limit: 3, remaining: 0, reset: windowEnd(START, MINUTE) });
    // another identifier has its own counter
    expect((await unkey.ratelimit.limit({ namespace: 'api.requests', identifier: 'u2', limit: 3, duration: MINUTE })).data.success).toBe(true);
  });

  it('ratelimit.limit: cost, cost 0, and a window that slides on the simulator clock', async () => {
    await newNamespace('ns');
    const call = (cost: number) => unkey.ratelimit.limit({ namespace: 'ns', identifier: 'u', limit: 10, duration: MINUTE, cost });
    expect((await call(7)).data).toMatchObject({ success: true, remaining: 3 });
    expect((await call(4)).data).toMatchObject({ success: false, remaining: 0 });
    expect((await call(0)).data).toMatchObject({ success: true, remaining: 3 });
    expect((await call(3)).data).toMatchObject({ success: true, remaining: 0 });

    // Into the next window, 3/4 of it elapsed: previous 10 counts as floor(10 * 0.25) = 2.
    const next = windowEnd(START, MINUTE) + 45_000;
    await setClock(next);
    const res = await call(8);
    expect(res.data).toEqual({ success: true, limit: 10, remaining: 0, reset: windowEnd(next, MINUTE) });
  });

  it('ratelimit.multiLimit is all or nothing', async () => {
    await newNamespace('a');
    await newNamespace('b');
    const ok = await unkey.ratelimit.multiLimit([
      { namespace: 'a', identifier: 'x', limit: 2, duration: MINUTE },
      { namespace: 'b', identifier: 'x', limit: 1, duration: MINUTE },
    ]);
    expect(ok.data.passed).toBe(true);
    expect(ok.data.limits).toEqual([
      { namespace: 'a', identifier: 'x', limit: 2, remaining: 1, reset: windowEnd(START, MINUTE), passed: true },
      { namespace: 'b', identifier: 'x', limit: 1, remaining: 0, reset: windowEnd(START, MINUTE), passed: true },
    ]);
    const refused = await unkey.ratelimit.multiLimit([
      { namespace: 'a', identifier: 'x', limit: 2, duration: MINUTE },
      { namespace: 'b', identifier: 'x', limit: 1, duration: MINUTE },
    ]);
    expect(refused.data.passed).toBe(false);
    expect(refused.data.limits.map((l) => l.passed)).toEqual([true, false]);
    // 'a' did not consume on the refused call: one token is still there.
    expect((await unkey.ratelimit.limit({ namespace: 'a', identifier: 'x', limit: 2, duration: MINUTE })).data).toMatchObject({ success: true, remaining: 0 });
  });

  it('overrides: set (same identifier keeps the id), get, effect on limit, wildcard, delete', async () => {
    await newNamespace('ns');
    const set = await unkey.ratelimit.setOverride({ namespace: 'ns', identifier: 'vip', limit: 5, duration: MINUTE });
    const overrideId = set.data.overrideId;
    expect(overrideId).toMatch(/^rlor_/);
    const again = await unkey.ratelimit.setOverride({ namespace: 'ns', identifier: 'vip', limit: 4, duration: MINUTE });
    expect(again.data.overrideId).toBe(overrideId);

    const got = await unkey.ratelimit.getOverride({ namespace: 'ns', identifier: 'vip' });
    expect(got.data).toEqual({ overrideId, identifier: 'vip', limit: 4, duration: MINUTE });

    const limited = await unkey.ratelimit.limit({ namespace: 'ns', identifier: 'vip', limit: 1, duration: 1_000 });
    expect(limited.data).toEqual({ success: true, limit: 4, remaining: 3, reset: windowEnd(START, MINUTE), overrideId });

    const wildcard = await unkey.ratelimit.setOverride({ namespace: 'ns', identifier: 'team_*', limit: 0, duration: MINUTE });
    const blocked = await unkey.ratelimit.limit({ namespace: 'ns', identifier: 'team_7', limit: 100, duration: MINUTE });
    expect(blocked.data).toMatchObject({ success: false, limit: 0, remaining: 0, overrideId: wildcard.data.overrideId });

    const del = await unkey.ratelimit.deleteOverride({ namespace: 'ns', identifier: 'vip' });
    expect(del.data).toEqual({});
    const err = await rejectsWith(unkey.ratelimit.getOverride({ namespace: 'ns', identifier: 'vip' }), NotFoundErrorResponse);
    expect(err.error.type).toMatch(/\/service\/data\/ratelimit_override_not_found$/);
    await rejectsWith(unkey.ratelimit.deleteOverride({ namespace: 'ns', identifier: 'vip' }), NotFoundErrorResponse);
    const plain = await unkey.ratelimit.limit({ namespace: 'ns', identifier: 'vip', limit: 1, duration: 1_000 });
    expect(plain.data.overrideId).toBeUndefined();
    expect(plain.data.limit).toBe(1);
  });

  it('listOverrides: 12 overrides in pages of 5 and of 4 (exact multiple); each seen once; terminates', async () => {
    const namespaceId = await newNamespace('ns');
    const made = new Map<string, string>();
    for (let i = 0; i < 12; i++) {
      const res = await unkey.ratelimit.setOverride({ namespace: 'ns', identifier: `user_${i}`, limit: i, duration: MINUTE + i * 1_000 });
      made.set(res.data.overrideId, `user_${i}`);
    }
    for (const [limit, expected] of [
      [5, [5, 5, 2]],
      [4, [4, 4, 4]],
    ] as const) {
      const seen = new Map<string, string>();
      const sizes: number[] = [];
      let cursor: string | undefined;
      for (let guard = 0; ; guard++) {
        expect(guard, 'pagination did not terminate').toBeLessThan(10);
        const page = await unkey.ratelimit.listOverrides(cursor === undefined ? { namespace: namespaceId, limit } : { namespace: namespaceId, limit, cursor });
        const { data, pagination } = page.result;
        sizes.push(data.length);
        for (const o of data) {
          expect(seen.has(o.overrideId)).toBe(false);
          seen.set(o.overrideId, o.identifier);
          const i = Number(o.identifier.slice('user_'.length));
          expect(o).toEqual({ overrideId: o.overrideId, identifier: `user_${i}`, limit: i, duration: MINUTE + i * 1_000 });
        }
        if (!pagination.hasMore) {
          expect(pagination.cursor).toBeUndefined();
          break;
        }
        expect(pagination.cursor).toEqual(expect.any(String));
        cursor = pagination.cursor;
      }
      expect(sizes, `page size ${limit}`).toEqual(expected);
      expect(seen).toEqual(made);
    }

    // The SDK's own iterator over the same list also ends.
    let pages = 0;
    for await (const page of await unkey.ratelimit.listOverrides({ namespace: 'ns', limit: 5 })) {
      pages++;
      expect(page.result.data.length).toBeGreaterThan(0);
      if (pages > 10) throw new Error('pagination did not terminate');
    }
    expect(pages).toBe(3);
  });
});

describe('errors arrive as the SDK typed errors', () => {
  it('400 BadRequestErrorResponse carries errors[] with the offending location', async () => {
    const apiId = await newApi();
    // byteLength 8 passes the SDK's own request schema (an int) but not the service (16..255).
    const err = await rejectsWith(unkey.keys.createKey({ apiId, byteLength: 8 }), BadRequestErrorResponse);
    expect(err.statusCode).toBe(400);
    expect(err.error).toMatchObject({ status: 400, title: 'Bad Request' });
    expect(err.error.type).toMatch(/\/service\/application\/invalid_input$/);
    expect(err.error.errors.map((e) => e.location)).toContain('body.byteLength');
    expect(err.meta.requestId).toMatch(/^req_/);

    await newNamespace('ns');
    const rl = await rejectsWith(unkey.ratelimit.limit({ namespace: 'ns', identifier: 'x', limit: 1, duration: 10 }), BadRequestErrorResponse);
    expect(rl.error.errors.map((e) => e.location)).toContain('body.duration');

    const id = await rejectsWith(unkey.identities.createIdentity({ externalId: 'has space' }), BadRequestErrorResponse);
    expect(id.error.errors.map((e) => e.location)).toContain('body.externalId');

    const refill = await rejectsWith(
      unkey.keys.createKey({ apiId, credits: { remaining: 5, refill: { interval: 'daily', amount: 5, refillDay: 3 } } }),
      BadRequestErrorResponse,
    );
    expect(refill.error.errors.map((e) => e.location).join(' ')).toContain('refillDay');

    const { data } = await unkey.keys.createKey({ apiId });
    const query = await rejectsWith(unkey.keys.verifyKey({ key: data.key, permissions: 'a AND (b' }), BadRequestErrorResponse);
    expect(query.error.type).toMatch(/\/service\/application\/invalid_input$/);
    expect(query.error.errors.map((e) => e.location)).toContain('body.permissions');

    const dupes = await rejectsWith(
      unkey.identities.createIdentity({
        externalId: 'ok',
        ratelimits: [
          { name: 'same', limit: 1, duration: 1_000 },
          { name: 'same', limit: 2, duration: 1_000 },
        ],
      }),
      BadRequestErrorResponse,
    );
    expect(dupes.statusCode).toBe(400);
    expect(dupes.error.errors.length).toBeGreaterThan(0);
    expect(dupes.error.errors.every((e) => typeof e.location === 'string' && e.location.startsWith('body.ratelimits'))).toBe(true);
  });

  it('401 UnauthorizedErrorResponse for an unknown root key, on every group', async () => {
    const stranger = sdk(sim(), 'unkey_not_a_root_key').unkey;
    const calls: Array<() => Promise<unknown>> = [
      () => stranger.apis.createApi({ name: 'x' }),
      () => stranger.keys.createKey({ apiId: 'api_x' }),
      () => stranger.keys.getKey({ keyId: 'key_x' }),
      () => stranger.keys.updateCredits({ keyId: 'key_x', operation: 'set', value: 1 }),
      () => stranger.keys.verifyKey({ key: 'whatever' }),
      () => stranger.identities.createIdentity({ externalId: 'x' }),
      () => stranger.identities.listIdentities({}),
      () => stranger.ratelimit.limit({ namespace: 'ns', identifier: 'x', limit: 1, duration: 1_000 }),
      () => stranger.ratelimit.listOverrides({ namespace: 'ns' }),
    ];
    for (const call of calls) {
      const err = await rejectsWith(call(), UnauthorizedErrorResponse);
      expect(err.statusCode).toBe(401);
      expect(err.error).toMatchObject({ status: 401, title: 'Unauthorized' });
      expect(err.error.type).toMatch(/\/service\/authentication\/key_not_found$/);
    }
  });

  it('403 ForbiddenErrorResponse for a root key without the permission', async () => {
    const apiId = await newApi();
    const { data } = await unkey.keys.createKey({ apiId, credits: { remaining: 1 } });
    await newNamespace('ns');
    await unkey.identities.createIdentity({ externalId: 'someone' });
    const weak = sdk(sim(), await rootKeyWith(sim(), ['api.*.verify_key'])).unkey;
    const calls: Array<() => Promise<unknown>> = [
      () => weak.apis.createApi({ name: 'x' }),
      () => weak.keys.createKey({ apiId }),
      () => weak.keys.getKey({ keyId: data.keyId }),
      () => weak.keys.updateKey({ keyId: data.keyId, name: 'x' }),
      () => weak.keys.deleteKey({ keyId: data.keyId }),
      () => weak.keys.updateCredits({ keyId: data.keyId, operation: 'set', value: 1 }),
      () => weak.identities.createIdentity({ externalId: 'x' }),
      () => weak.identities.getIdentity({ identity: 'someone' }),
      () => weak.identities.listIdentities({}),
      () => weak.identities.updateIdentity({ identity: 'someone', meta: {} }),
      () => weak.ratelimit.limit({ namespace: 'ns', identifier: 'x', limit: 1, duration: 1_000 }),
      () => weak.ratelimit.multiLimit([{ namespace: 'ns', identifier: 'x', limit: 1, duration: 1_000 }]),
      () => weak.ratelimit.setOverride({ namespace: 'ns', identifier: 'x', limit: 1, duration: 1_000 }),
      () => weak.ratelimit.getOverride({ namespace: 'ns', identifier: 'x' }),
      () => weak.ratelimit.listOverrides({ namespace: 'ns' }),
      () => weak.ratelimit.deleteOverride({ namespace: 'ns', identifier: 'x' }),
    ];
    for (const [i, call] of calls.entries()) {
      const err = await rejectsWith(call(), ForbiddenErrorResponse).catch((e: unknown) => {
        throw new Error(`call #${i}: ${e instanceof Error ? e.message : String(e)}`);
      });
      expect(err.statusCode).toBe(403);
      expect(err.error).toMatchObject({ status: 403, title: 'Insufficient Permissions' });
      expect(err.error.type).toMatch(/\/service\/authorization\/insufficient_permissions$/);
    }
    // The narrow permission that is granted works.
    const limiter = sdk(sim(), await rootKeyWith(sim(), ['ratelimit.*.limit'])).unkey;
    expect((await limiter.ratelimit.limit({ namespace: 'ns', identifier: 'x', limit: 1, duration: 1_000 })).data.success).toBe(true);
  });

  it('404 NotFoundErrorResponse for unknown APIs, keys, identities, namespaces and overrides', async () => {
    await newNamespace('ns');
    const cases: Array<[() => Promise<unknown>, string]> = [
      [() => unkey.keys.createKey({ apiId: 'api_missing' }), 'api_not_found'],
      [() => unkey.keys.getKey({ keyId: 'key_missing' }), 'key_not_found'],
      [() => unkey.keys.updateKey({ keyId: 'key_missing', enabled: false }), 'key_not_found'],
      [() => unkey.keys.deleteKey({ keyId: 'key_missing' }), 'key_not_found'],
      // 404 comes before any value check (increment without a value would be 400)
      [() => unkey.keys.updateCredits({ keyId: 'key_missing', operation: 'increment' }), 'key_not_found'],
      [() => unkey.identities.getIdentity({ identity: 'nobody' }), 'identity_not_found'],
      [() => unkey.identities.updateIdentity({ identity: 'id_missing', meta: {} }), 'identity_not_found'],
      [() => unkey.ratelimit.limit({ namespace: 'nope', identifier: 'x', limit: 1, duration: 1_000 }), 'ratelimit_namespace_not_found'],
      [() => unkey.ratelimit.multiLimit([{ namespace: 'nope', identifier: 'x', limit: 1, duration: 1_000 }]), 'ratelimit_namespace_not_found'],
      [() => unkey.ratelimit.setOverride({ namespace: 'nope', identifier: 'x', limit: 1, duration: 1_000 }), 'ratelimit_namespace_not_found'],
      [() => unkey.ratelimit.listOverrides({ namespace: 'nope' }), 'ratelimit_namespace_not_found'],
      [() => unkey.ratelimit.getOverride({ namespace: 'ns', identifier: 'x' }), 'ratelimit_override_not_found'],
      [() => unkey.ratelimit.deleteOverride({ namespace: 'ns', identifier: 'x' }), 'ratelimit_override_not_found'],
    ];
    for (const [call, name] of cases) {
      const err = await rejectsWith(call(), NotFoundErrorResponse);
      expect(err.statusCode).toBe(404);
      expect(err.error).toMatchObject({ status: 404, title: 'Not Found' });
      expect(err.error.type, name).toMatch(new RegExp(`/service/data/${name}$`));
    }
  });

  it('identities.deleteIdentity errors are typed too (this operation wants application/problem+json)', async () => {
    // Unlike every other operation here, the SDK's identities.deleteIdentity matches its typed
    // errors (400/401/403/404/429/500) only with Content-Type application/problem+json
    // (funcs/identitiesDeleteIdentity.js: M.jsonErr(404, ..., { ctype: "application/problem+json" })).
    // With any other content type the caller gets the untyped APIError "API error occurred".
    const existing = await unkey.identities.createIdentity({ externalId: 'someone' });

    const missing = await rejectsWith(unkey.identities.deleteIdentity({ identity: 'nobody' }), NotFoundErrorResponse);
    expect(missing.statusCode).toBe(404);
    expect(missing.error.type).toMatch(/\/service\/data\/identity_not_found$/);

    const bad = await rejectsWith(unkey.identities.deleteIdentity({ identity: '' }), BadRequestErrorResponse);
    expect(bad.error.errors.map((e) => e.location)).toContain('body.identity');

    await rejectsWith(sdk(sim(), 'unkey_not_a_root_key').unkey.identities.deleteIdentity({ identity: 'someone' }), UnauthorizedErrorResponse);
    const weak = sdk(sim(), await rootKeyWith(sim(), ['identity.*.read_identity'])).unkey;
    await rejectsWith(weak.identities.deleteIdentity({ identity: 'someone' }), ForbiddenErrorResponse);

    // and nothing was deleted by the refused calls
    expect((await unkey.identities.getIdentity({ identity: 'someone' })).data.id).toBe(existing.data.identityId);
  });

  it('410 GoneErrorResponse for a namespace deleted through /_sim/namespaces.delete', async () => {
    await newNamespace('old');
    expect((await unkey.ratelimit.limit({ namespace: 'old', identifier: 'x', limit: 1, duration: 1_000 })).data.success).toBe(true);
    await admin(sim(), 'namespaces.delete', { namespace: 'old' });
    const err = await rejectsWith(unkey.ratelimit.limit({ namespace: 'old', identifier: 'x', limit: 1, duration: 1_000 }), GoneErrorResponse);
    expect(err.statusCode).toBe(410);
    expect(err.error).toMatchObject({ status: 410, title: 'Resource Gone' });
    expect(err.error.type).toMatch(/\/service\/data\/ratelimit_namespace_gone$/);
    await rejectsWith(unkey.ratelimit.multiLimit([{ namespace: 'old', identifier: 'x', limit: 1, duration: 1_000 }]), GoneErrorResponse);
  });

  it('412 precondition_failed on keys.createKey and keys.verifyKey arrives as the generic APIError', async () => {
    // The SDK maps 412 to a typed class (PreconditionFailedErrorResponse) only on apis.deleteApi,
    // which keysim does not serve. keys.createKey / keys.verifyKey list 400/401/403/404/429/500 and
    // then M.fail("4XX"), so a 412 reaches the caller as APIError (an UnkeyError) with
    // statusCode 412 and the raw body: that is the SDK's correct behaviour here.
    const apiId = await newApi();
    const expect412 = async (call: Promise<unknown>, detail: string) => {
      const err = await rejectsWith(call, APIError);
      expect(err).toBeInstanceOf(UnkeyError);
      expect(err.statusCode).toBe(412);
      expect(err.contentType).toMatch(/^application\/json/);
      const body = errorBody(err.body);
      expect(body.error).toMatchObject({ status: 412, title: 'Precondition Failed', detail });
      expect(body.error.type).toMatch(/\/service\/application\/precondition_failed$/);
    };

    await expect412(unkey.keys.createKey({ apiId, recoverable: true }), "Vault hasn't been set up.");
    await admin(sim(), 'vault.configure', { enabled: true });
    await expect412(unkey.keys.createKey({ apiId, recoverable: true }), 'This API does not support key encryption.');
    await admin(sim(), 'apis.configure', { apiId, encryption: true });
    const recoverable = await unkey.keys.createKey({ apiId, recoverable: true });
    expect((await unkey.keys.getKey({ keyId: recoverable.data.keyId, decrypt: true })).data.plaintext).toBe(recoverable.data.key);

    await admin(sim(), 'apis.configure', { apiId, keyAuth: false });
    await expect412(unkey.keys.createKey({ apiId }), 'The requested API is not set up to handle keys.');

    // verifyKey naming a limit that exists neither on the key nor on its identity, without inline limit.
    const api2 = await newApi('second');
    const { data } = await unkey.keys.createKey({ apiId: api2 });
    const err = await rejectsWith(unkey.keys.verifyKey({ key: data.key, ratelimits: [{ name: 'ghost' }] }), APIError);
    expect(err.statusCode).toBe(412);
  });

  it('the SDK does not retry a 4XX and fails fast; a dead server fails fast with retries off', async () => {
    // Default retry config (backoff on 5XX and connection errors): a 404 goes out exactly once.
    const counted: string[] = [];
    const httpClient = new HTTPClient();
    httpClient.addHook('beforeRequest', (req) => {
      counted.push(new URL(req.url).pathname);
    });
    const defaults = new Unkey({ rootKey: sim().rootKey, serverURL: sim().url, httpClient });
    const t0 = performance.now();
    await rejectsWith(defaults.keys.getKey({ keyId: 'key_missing' }), NotFoundErrorResponse);
    expect(performance.now() - t0).toBeLessThan(2_000);
    expect(counted).toEqual(['/v2/keys.getKey']);

    // The helper's client (retries off): exactly one request per call.
    sent.length = 0;
    await rejectsWith(unkey.identities.getIdentity({ identity: 'nobody' }), NotFoundErrorResponse);
    expect(sent).toEqual(['POST /v2/identities.getIdentity']);

    // Nothing listening: with retries off the SDK gives up at once.
    const closed = await startSimulator();
    const deadUrl = closed.url;
    await closed.close();
    const dead = new Unkey({ rootKey: sim().rootKey, serverURL: deadUrl, retryConfig: { strategy: 'none' }, timeoutMs: 2_000 });
    const t1 = performance.now();
    await rejectsWith(dead.apis.createApi({ name: 'x' }), ConnectionError);
    expect(performance.now() - t1).toBeLessThan(2_000);
  });
});

describe('time travel with the SDK', () => {
  it('a monthly refill on day 31 lands on Jan 31, Feb 29 2028 (leap year) and Mar 31', async () => {
    const apiId = await newApi();
    const { data } = await unkey.keys.createKey({
      apiId,
      credits: { remaining: 10, refill: { interval: 'monthly', amount: 100, refillDay: 31 } },
    });
    const remaining = async () => (await unkey.keys.getKey({ keyId: data.keyId })).data.credits?.remaining;
    const spend = async (cost: number) => (await unkey.keys.verifyKey({ key: data.key, credits: { cost } })).data;

    expect(await spend(10)).toMatchObject({ valid: true, credits: 0 });
    expect(await spend(1)).toMatchObject({ valid: false, code: 'USAGE_EXCEEDED', credits: 0 });

    await setClock('2028-01-30T23:59:59.999Z');
    expect(await remaining()).toBe(0);
    await setClock('2028-01-31T00:00:00.000Z');
    expect(await remaining()).toBe(100);
    expect(await spend(60)).toMatchObject({ valid: true, credits: 40 });

    // February 2028 has 29 days: day 31 becomes Feb 29, not Feb 28 and not Mar 2.
    await setClock('2028-02-28T23:59:59.999Z');
    expect(await remaining()).toBe(40);
    expect(await spend(1)).toMatchObject({ valid: true, credits: 39 });
    await setClock(Date.UTC(2028, 1, 29, 0, 0, 0, 0));
    // A refill replaces the balance (39 → 100), observed first by verification, then by getKey.
    expect(await spend(1)).toMatchObject({ valid: true, credits: 99 });
    expect(await remaining()).toBe(99);
    expect((await unkey.keys.getKey({ keyId: data.keyId })).data.credits?.refill).toEqual({ interval: 'monthly', amount: 100, refillDay: 31 });

    await setClock('2028-03-30T23:59:59.999Z');
    expect(await remaining()).toBe(99);
    await spend(99);
    await setClock('2028-03-31T00:00:00.000Z');
    expect(await spend(0)).toMatchObject({ valid: true, credits: 100 });
    // April has 30 days.
    await spend(100);
    await setClock('2028-04-30T00:00:00.000Z');
    expect(await remaining()).toBe(100);
  });

  it('a daily refill configured on an unlimited key through updateKey starts at the next midnight and replaces the balance', async () => {
    const apiId = await newApi();
    const { data } = await unkey.keys.createKey({ apiId });
    await unkey.keys.updateKey({ keyId: data.keyId, credits: { remaining: 2, refill: { interval: 'daily', amount: 3 } } });
    expect((await unkey.keys.verifyKey({ key: data.key, credits: { cost: 2 } })).data.credits).toBe(0);
    await setClock('2028-01-10T23:59:59.999Z');
    expect((await unkey.keys.verifyKey({ key: data.key })).data.code).toBe('USAGE_EXCEEDED');
    await setClock('2028-01-11T00:00:00.000Z');
    expect((await unkey.keys.verifyKey({ key: data.key })).data).toMatchObject({ code: 'VALID', credits: 2 });
    const credits = await unkey.keys.updateCredits({ keyId: data.keyId, operation: 'increment', value: 5 });
    expect(credits.data).toEqual({ remaining: 7, refill: { interval: 'daily', amount: 3 } });
    // A refill replaces the balance, also downwards (interface document): 7 → 3 at the next midnight.
    await setClock('2028-01-12T00:00:00.000Z');
    expect((await unkey.keys.getKey({ keyId: data.keyId })).data.credits?.remaining).toBe(3);
  });

  it('createdAt and expiry follow the simulator clock, and reset brings the clock back', async () => {
    const later = await setClock('2028-06-01T08:00:00.000Z');
    const apiId = await newApi();
    const { data } = await unkey.keys.createKey({ apiId, expires: later + 1_000 });
    expect((await unkey.keys.getKey({ keyId: data.keyId })).data.createdAt).toBe(later);
    expect((await unkey.keys.verifyKey({ key: data.key })).data.code).toBe('VALID');
    await admin(sim(), 'clock.advance', { byMs: 1_000 });
    expect((await unkey.keys.verifyKey({ key: data.key })).data.code).toBe('VALID'); // now == expires is not past
    await admin(sim(), 'clock.advance', { byMs: 1 });
    expect((await unkey.keys.verifyKey({ key: data.key })).data.code).toBe('EXPIRED');

    sim().reset();
    expect((await admin<{ nowMs: number }>(sim(), 'clock.get')).nowMs).toBe(START);
    await rejectsWith(unkey.keys.getKey({ keyId: data.keyId }), NotFoundErrorResponse);
  });
});
