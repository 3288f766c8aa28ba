/**
 * The behaviour (contract) suite: what the service promises (docs/service-model.md), written once
 * against `ServiceClient` and registered for every target — the engine called directly, the HTTP
 * simulator through a client, and two replicas of a Redis-backed simulator taking turns
 * (docs/architecture.md#conventions). A difference between them is a bug of the HTTP mapping (or
 * of the replicated log); a difference from the documents is a bug of all.
 *
 * Errors of the catalogue NOT exercised here, and why:
 * - `bad_request:request_body_too_large` (413), `authentication:malformed`, unknown routes and
 *   wrong methods are transport errors with no engine counterpart; the HTTP tests cover them.
 * - `data:workspace_not_found` is unreachable through the operations: the workspace always comes
 *   from a valid root key; only the admin fixtures can name a workspace that does not exist.
 * - `application:unexpected_error` (500) is what a bug becomes; no valid or invalid request
 *   produces it on purpose.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import type { CreateKeyInput, ErrorCode, VerifyKeyInput, VerifyKeyOutput } from '../../src/engine/index.js';
import type { Failure, Outcome, ServiceClient } from '../helpers/service-client.js';

/** Where both targets' clocks start: 2027-01-15T12:00:00Z, aligned to the minute and the hour. */
export const CONTRACT_START_MS = Date.UTC(2027, 0, 15, 12);

const SECOND = 1_000;
const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;
const BASE58 = /^[1-9A-HJ-NP-Za-km-z]+$/;

/** The value of a success; throws (failing the test) with the error otherwise. */
function okData<T>(outcome: Outcome<T>): T {
  if (!outcome.ok)
    throw new Error(`expected success, got ${outcome.code}${outcome.status === undefined ? '' : ` (HTTP ${outcome.status})`}: ${outcome.detail}`);
  return outcome.data;
}

/** Asserts a failure with this identifier and returns it. */
function expectError(outcome: Outcome<unknown>, code: ErrorCode): Failure {
  expect(outcome.ok ? `success: ${JSON.stringify(outcome.data)}` : outcome.code).toBe(code);
  return outcome as Failure;
}

const INVALID: ErrorCode = 'err:service:application:invalid_input';

/** What the permission tests need to exist: one of each resource, made with the `*` root key. */
interface Fixture {
  apiId: string;
  keyId: string;
  key: string;
  identityId: string;
  namespace: string;
  namespaceId: string;
}

interface ManagementOp {
  name: string;
  /** The one permission (docs/service-model.md#authentication-and-permissions) that allows it. */
  permission: string;
  run(c: ServiceClient, rootKey: string | undefined, fx: Fixture): Promise<Outcome<unknown>>;
}

/** Every management operation (all but verifyKey), with a valid request on the fixture. */
const MANAGEMENT_OPS: readonly ManagementOp[] = [
  { name: 'apis.createApi', permission: 'api.*.create_api', run: (c, r) => c.apis.createApi(r, { name: 'another-api' }) },
  { name: 'keys.createKey', permission: 'api.*.create_key', run: (c, r, fx) => c.keys.createKey(r, { apiId: fx.apiId }) },
  { name: 'keys.getKey', permission: 'api.*.read_key', run: (c, r, fx) => c.keys.getKey(r, { keyId: fx.keyId }) },
  { name: 'keys.updateKey', permission: 'api.*.update_key', run: (c, r, fx) => c.keys.updateKey(r, { keyId: fx.keyId, name: 'renamed' }) },
  {
    name: 'keys.updateCredits',
    permission: 'api.*.update_key',
    run: (c, r, fx) => c.keys.updateCredits(r, { keyId: fx.keyId, operation: 'increment', value: 1 }),
  },
  { name: 'keys.deleteKey', permission: 'api.*.delete_key', run: (c, r, fx) => c.keys.deleteKey(r, { keyId: fx.keyId }) },
  {
    name: 'identities.createIdentity',
    permission: 'identity.*.create_identity',
    run: (c, r) => c.identities.createIdentity(r, { externalId: 'another-owner' }),
  },
  { name: 'identities.getIdentity', permission: 'identity.*.read_identity', run: (c, r, fx) => c.identities.getIdentity(r, { identity: fx.identityId }) },
  { name: 'identities.listIdentities', permission: 'identity.*.read_identity', run: (c, r) => c.identities.listIdentities(r, {}) },
  {
    name: 'identities.updateIdentity',
    permission: 'identity.*.update_identity',
    run: (c, r, fx) => c.identities.updateIdentity(r, { identity: fx.identityId, meta: { plan: 'pro' } }),
  },
  {
    name: 'identities.deleteIdentity',
    permission: 'identity.*.delete_identity',
    run: (c, r, fx) => c.identities.deleteIdentity(r, { identity: fx.identityId }),
  },
  {
    name: 'ratelimit.limit',
    permission: 'ratelimit.*.limit',
    run: (c, r, fx) => c.ratelimit.limit(r, { namespace: fx.namespace, identifier: 'u1', limit: 10, duration: MINUTE }),
  },
  {
    name: 'ratelimit.multiLimit',
    permission: 'ratelimit.*.limit',
    run: (c, r, fx) => c.ratelimit.multiLimit(r, [{ namespace: fx.namespace, identifier: 'u1', limit: 10, duration: MINUTE }]),
  },
  {
    name: 'ratelimit.setOverride',
    permission: 'ratelimit.*.set_override',
    run: (c, r, fx) => c.ratelimit.setOverride(r, { namespace: fx.namespace, identifier: 'u2', limit: 3, duration: MINUTE }),
  },
  {
    name: 'ratelimit.getOverride',
    permission: 'ratelimit.*.read_override',
    run: (c, r, fx) => c.ratelimit.getOverride(r, { namespace: fx.namespace, identifier: 'fixture-user' }),
  },
  {
    name: 'ratelimit.listOverrides',
    permission: 'ratelimit.*.read_override',
    run: (c, r, fx) => c.ratelimit.listOverrides(r, { namespaceName: fx.namespace }),
  },
  {
    name: 'ratelimit.deleteOverride',
    permission: 'ratelimit.*.delete_override',
    run: (c, r, fx) => c.ratelimit.deleteOverride(r, { namespace: fx.namespace, identifier: 'fixture-user' }),
  },
];

/** Every permission name of docs/service-model.md#authentication-and-permissions in its `*` form. */
const ALL_PERMISSIONS = [...new Set([...MANAGEMENT_OPS.map((op) => op.permission), 'api.*.verify_key'])];

/**
 * Registers the contract suite. `makeTarget` is called before every test and must answer a client
 * on a fresh start state (one workspace, its `*` root key, no APIs) with the clock at
 * CONTRACT_START_MS.
 */
export function describeContract(name: string, makeTarget: () => Promise<ServiceClient>): void {
  describe(`service contract: ${name}`, () => {
    let c: ServiceClient;
    beforeEach(async () => {
      c = await makeTarget();
    });

    // ── helpers over the current client ──────────────────────────────────────────────────

    const newApi = async (rootKey = c.rootKey) => okData(await c.apis.createApi(rootKey, { name: 'contract-api' })).apiId;
    const newKey = async (apiId: string, input: Omit<CreateKeyInput, 'apiId'> = {}, rootKey = c.rootKey) =>
      okData(await c.keys.createKey(rootKey, { apiId, ...input }));
    const verify = async (key: string, input: Omit<VerifyKeyInput, 'key'> = {}, rootKey?: string): Promise<VerifyKeyOutput> =>
      okData(await c.keys.verifyKey(rootKey, { key, ...input }));
    const creditsOf = async (keyId: string) => okData(await c.keys.getKey(c.rootKey, { keyId })).credits;
    const balance = async (keyId: string) => (await creditsOf(keyId))?.remaining;
    const fixture = async (): Promise<Fixture> => {
      const apiId = await newApi();
      const { keyId, key } = await newKey(apiId, { credits: { remaining: 100 } });
      const { identityId } = okData(await c.identities.createIdentity(c.rootKey, { externalId: 'fixture-owner' }));
      const namespace = 'fixture.ns';
      const namespaceId = await c.createNamespace(namespace);
      okData(await c.ratelimit.setOverride(c.rootKey, { namespace, identifier: 'fixture-user', limit: 5, duration: MINUTE }));
      return { apiId, keyId, key, identityId, namespace, namespaceId };
    };

    it('starts at the fixed instant, with an empty workspace', async () => {
      expect(await c.now()).toBe(CONTRACT_START_MS);
      const page = await c.identities.listIdentities(c.rootKey, {});
      expect(okData(page)).toEqual([]);
      expect(page.ok && page.pagination).toEqual({ hasMore: false });
    });

    // ── every operation: success shapes ──────────────────────────────────────────────────

    describe('apis and keys: success shapes', () => {
      it('apis.createApi answers an api_ id', async () => {
        expect(okData(await c.apis.createApi(c.rootKey, { name: 'payments' }))).toEqual({ apiId: expect.stringMatching(/^api_/) });
      });

      it('keys.createKey answers keyId and the plaintext key once; a prefix is put in front', async () => {
        const apiId = await newApi();
        const plain = await newKey(apiId);
        expect(plain).toEqual({ keyId: expect.stringMatching(/^key_/), key: expect.stringMatching(BASE58) });
        const prefixed = await newKey(apiId, { prefix: 'acme' });
        expect(prefixed.key).toMatch(/^acme_[1-9A-HJ-NP-Za-km-z]+$/);
        expect(prefixed.keyId).not.toBe(plain.keyId);
        // Only a hash is kept: reading the key never shows the plaintext.
        const view = okData(await c.keys.getKey(c.rootKey, { keyId: prefixed.keyId }));
        expect(JSON.stringify(view)).not.toContain(prefixed.key);
        expect(prefixed.key.startsWith(view.start)).toBe(true);
        expect(view.start.length).toBeGreaterThan(0);
      });

      it('keys.getKey shows every field that was set, and omits the unset ones', async () => {
        const apiId = await newApi();
        const expires = CONTRACT_START_MS + 30 * DAY;
        const { keyId } = await newKey(apiId, {
          name: 'checkout',
          meta: { plan: 'pro', seats: 3 },
          expires,
          permissions: ['docs.read'],
          roles: ['admin'],
          externalId: 'owner-1',
          credits: { remaining: 10, refill: { interval: 'daily', amount: 10 } },
          ratelimits: [{ name: 'burst', limit: 5, duration: SECOND }],
        });
        const view = okData(await c.keys.getKey(c.rootKey, { keyId }));
        expect(view).toEqual({
          keyId,
          start: expect.any(String),
          enabled: true,
          createdAt: CONTRACT_START_MS,
          name: 'checkout',
          meta: { plan: 'pro', seats: 3 },
          expires,
          permissions: ['docs.read'],
          roles: ['admin'],
          credits: { remaining: 10, refill: { interval: 'daily', amount: 10 } },
          identity: { id: expect.stringMatching(/^id_/), externalId: 'owner-1' },
          ratelimits: [{ id: expect.stringMatching(/^rl_/), name: 'burst', limit: 5, duration: SECOND, autoApply: false }],
        });

        const bare = await newKey(apiId);
        expect(okData(await c.keys.getKey(c.rootKey, { keyId: bare.keyId }))).toEqual({
          keyId: bare.keyId,
          start: expect.any(String),
          enabled: true,
          createdAt: CONTRACT_START_MS,
        });
      });

      it('keys.updateKey answers {}: omitted fields stay, null clears, a value sets', async () => {
        const apiId = await newApi();
        const { keyId, key } = await newKey(apiId, {
          name: 'old',
          meta: { a: 1 },
          permissions: ['p.read'],
          roles: ['r'],
          ratelimits: [
            { name: 'keep', limit: 5, duration: MINUTE },
            { name: 'drop', limit: 5, duration: MINUTE },
          ],
        });
        const before = okData(await c.keys.getKey(c.rootKey, { keyId }));
        const keptId = before.ratelimits?.find((r) => r.name === 'keep')?.id;
        expect(keptId).toMatch(/^rl_/);

        expect(okData(await c.keys.updateKey(c.rootKey, { keyId, name: null, meta: { b: 2 }, roles: null }))).toEqual({});
        const after = okData(await c.keys.getKey(c.rootKey, { keyId }));
        expect(after).not.toHaveProperty('name');
        expect(after).not.toHaveProperty('roles');
        expect(after.meta).toEqual({ b: 2 });
        expect(after.permissions).toEqual(['p.read']);

        expect(
          okData(
            await c.keys.updateKey(c.rootKey, {
              keyId,
              ratelimits: [
                { name: 'keep', limit: 9, duration: MINUTE },
                { name: 'new', limit: 1, duration: MINUTE },
              ],
            }),
          ),
        ).toEqual({});
        const limits = okData(await c.keys.getKey(c.rootKey, { keyId })).ratelimits ?? [];
        expect(limits.map((r) => r.name).sort()).toEqual(['keep', 'new']);
        expect(limits.find((r) => r.name === 'keep')).toEqual({ id: keptId, name: 'keep', limit: 9, duration: MINUTE, autoApply: false });

        okData(await c.keys.updateKey(c.rootKey, { keyId, enabled: false }));
        expect((await verify(key)).code).toBe('DISABLED');
        okData(await c.keys.updateKey(c.rootKey, { keyId, enabled: true }));
        expect((await verify(key)).code).toBe('VALID');
      });

      it('keys.deleteKey answers {}; the key then verifies NOT_FOUND and every key operation on it is 404', async () => {
        const apiId = await newApi();
        const { keyId, key } = await newKey(apiId, { credits: { remaining: 5 } });
        expect((await verify(key)).code).toBe('VALID');
        expect(okData(await c.keys.deleteKey(c.rootKey, { keyId, permanent: true }))).toEqual({});
        expect(await verify(key)).toEqual({ valid: false, code: 'NOT_FOUND' });
        expect(await verify(key, {}, c.rootKey)).toEqual({ valid: false, code: 'NOT_FOUND' });
        const gone: ErrorCode = 'err:service:data:key_not_found';
        expectError(await c.keys.getKey(c.rootKey, { keyId }), gone);
        expectError(await c.keys.updateKey(c.rootKey, { keyId, name: 'x' }), gone);
        expectError(await c.keys.updateCredits(c.rootKey, { keyId, operation: 'set', value: 1 }), gone);
        expectError(await c.keys.deleteKey(c.rootKey, { keyId }), gone);
      });

      it('keys.verifyKey: a VALID result carries the key and its identity', async () => {
        const apiId = await newApi();
        const expires = CONTRACT_START_MS + DAY;
        const { keyId, key } = await newKey(apiId, {
          name: 'k',
          meta: { plan: 'pro' },
          expires,
          permissions: ['a.read'],
          roles: ['admin'],
          externalId: 'owner-1',
          credits: { remaining: 10 },
        });
        expect(await verify(key)).toEqual({
          valid: true,
          code: 'VALID',
          keyId,
          enabled: true,
          name: 'k',
          meta: { plan: 'pro' },
          expires,
          credits: 9,
          permissions: ['a.read'],
          roles: ['admin'],
          identity: { id: expect.stringMatching(/^id_/), externalId: 'owner-1' },
        });
        // An unlimited key has no credits field.
        const unlimited = await newKey(apiId);
        expect(await verify(unlimited.key)).toEqual({ valid: true, code: 'VALID', keyId: unlimited.keyId, enabled: true });
      });

      it('keys.verifyKey needs no root key; a root key that is sent must be valid and of the key\u2019s workspace', async () => {
        const apiId = await newApi();
        const { keyId, key } = await newKey(apiId, { credits: { remaining: 5 } });
        expect((await verify(key)).credits).toBe(4);
        expect((await verify(key, {}, c.rootKey)).credits).toBe(3);
        expectError(await c.keys.verifyKey('root_unknown_0000000000', { key }), 'err:service:authentication:key_not_found');
        const other = await c.createWorkspace();
        expect(await verify(key, {}, other.rootKey)).toEqual({ valid: false, code: 'NOT_FOUND' });
        // Neither refusal consumed anything.
        expect(await balance(keyId)).toBe(3);
      });

      it('keys.updateCredits: set, increment, decrement (never below 0), set null = unlimited', async () => {
        const apiId = await newApi();
        const { keyId, key } = await newKey(apiId, { credits: { remaining: 10, refill: { interval: 'daily', amount: 100 } } });
        const refill = { interval: 'daily', amount: 100 };
        expect(okData(await c.keys.updateCredits(c.rootKey, { keyId, operation: 'set', value: 5 }))).toEqual({ remaining: 5, refill });
        expect(okData(await c.keys.updateCredits(c.rootKey, { keyId, operation: 'increment', value: 3 }))).toEqual({ remaining: 8, refill });
        expect(okData(await c.keys.updateCredits(c.rootKey, { keyId, operation: 'decrement', value: 2 }))).toEqual({ remaining: 6, refill });
        expect(okData(await c.keys.updateCredits(c.rootKey, { keyId, operation: 'decrement', value: 50 }))).toEqual({ remaining: 0, refill });
        expect(await verify(key)).toMatchObject({ valid: false, code: 'USAGE_EXCEEDED', credits: 0 });
        // Exhausted → available again by a manual increment.
        expect(okData(await c.keys.updateCredits(c.rootKey, { keyId, operation: 'increment', value: 2 }))).toEqual({ remaining: 2, refill });
        expect(await verify(key)).toMatchObject({ valid: true, code: 'VALID', credits: 1 });
        expect(okData(await c.keys.updateCredits(c.rootKey, { keyId, operation: 'set', value: null }))).toEqual({ remaining: null });
        expect(await creditsOf(keyId)).toBeUndefined();
        expect(await verify(key)).not.toHaveProperty('credits');
      });
    });

    describe('identities: success shapes', () => {
      it('createIdentity answers an id_; getIdentity by id or by externalId', async () => {
        const created = okData(
          await c.identities.createIdentity(c.rootKey, {
            externalId: 'user_42',
            meta: { tier: 'gold' },
            ratelimits: [{ name: 'requests', limit: 100, duration: MINUTE }],
          }),
        );
        expect(created).toEqual({ identityId: expect.stringMatching(/^id_/) });
        const expected = {
          id: created.identityId,
          externalId: 'user_42',
          meta: { tier: 'gold' },
          ratelimits: [{ id: expect.stringMatching(/^rl_/), name: 'requests', limit: 100, duration: MINUTE, autoApply: false }],
        };
        expect(okData(await c.identities.getIdentity(c.rootKey, { identity: created.identityId }))).toEqual(expected);
        expect(okData(await c.identities.getIdentity(c.rootKey, { identity: 'user_42' }))).toEqual(expected);

        const bare = okData(await c.identities.createIdentity(c.rootKey, { externalId: 'bare' }));
        expect(okData(await c.identities.getIdentity(c.rootKey, { identity: 'bare' }))).toEqual({ id: bare.identityId, externalId: 'bare' });
      });

      it('an identity reference is tried as an id first, then as an externalId', async () => {
        const b = okData(await c.identities.createIdentity(c.rootKey, { externalId: 'bee' })).identityId;
        const a = okData(await c.identities.createIdentity(c.rootKey, { externalId: b })).identityId;
        expect(okData(await c.identities.getIdentity(c.rootKey, { identity: b })).id).toBe(b);
        expect(okData(await c.identities.getIdentity(c.rootKey, { identity: a })).externalId).toBe(b);
        okData(await c.identities.deleteIdentity(c.rootKey, { identity: b }));
        expect(okData(await c.identities.getIdentity(c.rootKey, { identity: b })).id).toBe(a);
      });

      it('updateIdentity replaces meta and the rate-limit set (kept names keep their id) and answers the identity', async () => {
        const { identityId } = okData(
          await c.identities.createIdentity(c.rootKey, {
            externalId: 'acme',
            meta: { a: 1, b: 2 },
            ratelimits: [
              { name: 'keep', limit: 1, duration: MINUTE },
              { name: 'drop', limit: 1, duration: MINUTE },
            ],
          }),
        );
        const keptId = okData(await c.identities.getIdentity(c.rootKey, { identity: identityId })).ratelimits?.find((r) => r.name === 'keep')?.id;
        const updated = okData(
          await c.identities.updateIdentity(c.rootKey, {
            identity: 'acme',
            meta: { c: 3 },
            ratelimits: [
              { name: 'keep', limit: 7, duration: HOUR, autoApply: true },
              { name: 'fresh', limit: 2, duration: SECOND },
            ],
          }),
        );
        expect(updated).toEqual({
          id: identityId,
          externalId: 'acme',
          meta: { c: 3 },
          ratelimits: [
            { id: keptId, name: 'keep', limit: 7, duration: HOUR, autoApply: true },
            { id: expect.stringMatching(/^rl_/), name: 'fresh', limit: 2, duration: SECOND, autoApply: false },
          ],
        });
        expect(okData(await c.identities.getIdentity(c.rootKey, { identity: identityId }))).toEqual(updated);
        // [] removes every limit; omitted meta stays.
        expect(okData(await c.identities.updateIdentity(c.rootKey, { identity: identityId, ratelimits: [] }))).toEqual({
          id: identityId,
          externalId: 'acme',
          meta: { c: 3 },
        });
      });

      it('deleteIdentity answers only meta; the identity is gone and its externalId is free again', async () => {
        const { identityId } = okData(await c.identities.createIdentity(c.rootKey, { externalId: 'leaving' }));
        const deleted = await c.identities.deleteIdentity(c.rootKey, { identity: 'leaving' });
        expect(deleted.ok).toBe(true);
        expect(deleted.ok && deleted.data).toBeUndefined();
        const gone: ErrorCode = 'err:service:data:identity_not_found';
        expectError(await c.identities.getIdentity(c.rootKey, { identity: identityId }), gone);
        expectError(await c.identities.getIdentity(c.rootKey, { identity: 'leaving' }), gone);
        expectError(await c.identities.updateIdentity(c.rootKey, { identity: identityId, meta: {} }), gone);
        expectError(await c.identities.deleteIdentity(c.rootKey, { identity: identityId }), gone);
        const again = okData(await c.identities.createIdentity(c.rootKey, { externalId: 'leaving' }));
        expect(again.identityId).not.toBe(identityId);
      });

      it('listIdentities answers an array of identities and pagination without a cursor on the last page', async () => {
        const { identityId } = okData(await c.identities.createIdentity(c.rootKey, { externalId: 'only', meta: { x: 1 } }));
        const page = await c.identities.listIdentities(c.rootKey, { limit: 10 });
        expect(okData(page)).toEqual([{ id: identityId, externalId: 'only', meta: { x: 1 } }]);
        expect(page.ok && page.pagination).toEqual({ hasMore: false });
      });

      it('createKey with an externalId links the key to that identity, creating it when missing', async () => {
        const apiId = await newApi();
        const { identityId } = okData(await c.identities.createIdentity(c.rootKey, { externalId: 'existing' }));
        const linked = await newKey(apiId, { externalId: 'existing' });
        expect(okData(await c.keys.getKey(c.rootKey, { keyId: linked.keyId })).identity).toEqual({ id: identityId, externalId: 'existing' });
        const created = await newKey(apiId, { externalId: 'brand-new' });
        const identity = okData(await c.identities.getIdentity(c.rootKey, { identity: 'brand-new' }));
        expect(identity).toEqual({ id: expect.stringMatching(/^id_/), externalId: 'brand-new' });
        expect((await verify(created.key)).identity).toEqual(identity);
      });
    });

    describe('ratelimit: success shapes', () => {
      it('limit answers limit, remaining, reset (end of the window) and success; a denial consumes nothing', async () => {
        await c.createNamespace('api');
        const req = { namespace: 'api', identifier: 'user_1', limit: 3, duration: MINUTE };
        const reset = CONTRACT_START_MS + MINUTE;
        expect(okData(await c.ratelimit.limit(c.rootKey, req))).toEqual({ limit: 3, remaining: 2, reset, success: true });
        expect(okData(await c.ratelimit.limit(c.rootKey, req))).toEqual({ limit: 3, remaining: 1, reset, success: true });
        expect(okData(await c.ratelimit.limit(c.rootKey, req))).toEqual({ limit: 3, remaining: 0, reset, success: true });
        expect(okData(await c.ratelimit.limit(c.rootKey, req))).toEqual({ limit: 3, remaining: 0, reset, success: false });
        // Cost 0 never fails; counters are per identifier.
        expect(okData(await c.ratelimit.limit(c.rootKey, { ...req, cost: 0 }))).toMatchObject({ success: true, remaining: 0 });
        expect(okData(await c.ratelimit.limit(c.rootKey, { ...req, identifier: 'user_2' }))).toMatchObject({ success: true, remaining: 2 });
        // Counters are per (namespace, identifier, duration): another duration counts apart.
        expect(okData(await c.ratelimit.limit(c.rootKey, { ...req, duration: HOUR }))).toEqual({
          limit: 3,
          remaining: 2,
          reset: CONTRACT_START_MS + HOUR,
          success: true,
        });
        // Two windows on, nothing of the past counts.
        await c.advanceClock(2 * MINUTE);
        expect(okData(await c.ratelimit.limit(c.rootKey, req))).toEqual({ limit: 3, remaining: 2, reset: reset + 2 * MINUTE, success: true });
      });

      it('limit uses the sliding window of two epoch-aligned fixed windows', async () => {
        await c.createNamespace('api');
        const req = { namespace: 'api', identifier: 'slide', limit: 10, duration: MINUTE };
        expect(okData(await c.ratelimit.limit(c.rootKey, { ...req, cost: 10 }))).toMatchObject({ success: true, remaining: 0 });
        await c.advanceClock(30 * SECOND);
        expect(okData(await c.ratelimit.limit(c.rootKey, req)).success).toBe(false);
        // Start of the next window: the previous one still weighs fully.
        await c.advanceClock(30 * SECOND);
        expect(okData(await c.ratelimit.limit(c.rootKey, req)).success).toBe(false);
        // Halfway: floor(10 · 0.5) = 5 used, + 1 → 4 left.
        await c.advanceClock(30 * SECOND);
        expect(okData(await c.ratelimit.limit(c.rootKey, req))).toEqual({ limit: 10, remaining: 4, reset: CONTRACT_START_MS + 2 * MINUTE, success: true });
      });

      it('a namespace is named by its name or its rlns_ id, with one set of counters', async () => {
        const namespaceId = await c.createNamespace('api');
        expect(namespaceId).toMatch(/^rlns_/);
        const req = { identifier: 'u', limit: 5, duration: MINUTE };
        expect(okData(await c.ratelimit.limit(c.rootKey, { ...req, namespace: 'api' })).remaining).toBe(4);
        expect(okData(await c.ratelimit.limit(c.rootKey, { ...req, namespace: namespaceId })).remaining).toBe(3);
      });

      it('multiLimit answers passed and one entry per request', async () => {
        await c.createNamespace('api');
        await c.createNamespace('llm');
        const out = okData(
          await c.ratelimit.multiLimit(c.rootKey, [
            { namespace: 'api', identifier: 'u', limit: 2, duration: MINUTE },
            { namespace: 'llm', identifier: 'u', limit: 100, duration: HOUR, cost: 10 },
          ]),
        );
        expect(out).toEqual({
          passed: true,
          limits: [
            { namespace: 'api', identifier: 'u', limit: 2, remaining: 1, reset: CONTRACT_START_MS + MINUTE, passed: true },
            { namespace: 'llm', identifier: 'u', limit: 100, remaining: 90, reset: CONTRACT_START_MS + HOUR, passed: true },
          ],
        });
      });

      it('setOverride / getOverride / listOverrides / deleteOverride', async () => {
        await c.createNamespace('api');
        const { overrideId } = okData(await c.ratelimit.setOverride(c.rootKey, { namespace: 'api', identifier: 'vip', limit: 50, duration: MINUTE }));
        expect(overrideId).toMatch(/^rlor_/);
        expect(okData(await c.ratelimit.getOverride(c.rootKey, { namespace: 'api', identifier: 'vip' }))).toEqual({
          overrideId,
          identifier: 'vip',
          limit: 50,
          duration: MINUTE,
        });
        // Setting the same identifier again updates it and keeps the id.
        expect(okData(await c.ratelimit.setOverride(c.rootKey, { namespace: 'api', identifier: 'vip', limit: 70, duration: HOUR }))).toEqual({ overrideId });
        const listed = await c.ratelimit.listOverrides(c.rootKey, { namespaceName: 'api' });
        expect(okData(listed)).toEqual([{ overrideId, identifier: 'vip', limit: 70, duration: HOUR }]);
        expect(listed.ok && listed.pagination).toEqual({ hasMore: false });
        expect(okData(await c.ratelimit.listOverrides(c.rootKey, { namespace: 'api' }))).toEqual([
          { overrideId, identifier: 'vip', limit: 70, duration: HOUR },
        ]);
        expect(okData(await c.ratelimit.deleteOverride(c.rootKey, { namespace: 'api', identifier: 'vip' }))).toEqual({});
        expectError(await c.ratelimit.getOverride(c.rootKey, { namespace: 'api', identifier: 'vip' }), 'err:service:data:ratelimit_override_not_found');
        expect(okData(await c.ratelimit.listOverrides(c.rootKey, { namespaceName: 'api' }))).toEqual([]);
        expect(okData(await c.ratelimit.limit(c.rootKey, { namespace: 'api', identifier: 'vip', limit: 2, duration: MINUTE }))).toEqual({
          limit: 2,
          remaining: 1,
          reset: CONTRACT_START_MS + MINUTE,
          success: true,
        });
      });
    });

    // ── authentication and permissions, for every management operation ───────────────────

    describe('authentication and permissions', () => {
      for (const op of MANAGEMENT_OPS) {
        it(`${op.name}: no root key → missing, unknown → key_not_found, without ${op.permission} → 403, with only it → success`, async () => {
          const fx = await fixture();
          expectError(await op.run(c, undefined, fx), 'err:service:authentication:missing');
          expectError(await op.run(c, 'root_unknown_0000000000', fx), 'err:service:authentication:key_not_found');
          const lacking = await c.createRootKey(ALL_PERMISSIONS.filter((p) => p !== op.permission));
          expectError(await op.run(c, lacking, fx), 'err:service:authorization:insufficient_permissions');
          const holding = await c.createRootKey([op.permission]);
          okData(await op.run(c, holding, fx));
        });
      }

      it('keys.verifyKey: a root key without api.*.verify_key gets NOT_FOUND, not 403, and consumes nothing', async () => {
        const fx = await fixture();
        const lacking = await c.createRootKey(ALL_PERMISSIONS.filter((p) => p !== 'api.*.verify_key'));
        expect(await verify(fx.key, {}, lacking)).toEqual({ valid: false, code: 'NOT_FOUND' });
        expect(await balance(fx.keyId)).toBe(100);
        const holding = await c.createRootKey(['api.*.verify_key']);
        expect(await verify(fx.key, {}, holding)).toMatchObject({ valid: true, code: 'VALID', credits: 99 });
      });

      it('a permission scoped to one API or one namespace allows only that one', async () => {
        const first = await newApi();
        const second = await newApi();
        const scoped = await c.createRootKey([`api.${first}.create_key`]);
        okData(await c.keys.createKey(scoped, { apiId: first }));
        expectError(await c.keys.createKey(scoped, { apiId: second }), 'err:service:authorization:insufficient_permissions');

        const nsId = await c.createNamespace('scoped');
        await c.createNamespace('other');
        const limiter = await c.createRootKey([`ratelimit.${nsId}.limit`]);
        okData(await c.ratelimit.limit(limiter, { namespace: 'scoped', identifier: 'u', limit: 1, duration: MINUTE }));
        expectError(
          await c.ratelimit.limit(limiter, { namespace: 'other', identifier: 'u', limit: 1, duration: MINUTE }),
          'err:service:authorization:insufficient_permissions',
        );
      });
    });

    // ── the rest of the error catalogue ──────────────────────────────────────────────────

    describe('error catalogue', () => {
      it('invalid_input: semantic violations the schema cannot see', async () => {
        const apiId = await newApi();
        // A refill needs a starting balance.
        const noBalance = expectError(await c.keys.createKey(c.rootKey, { apiId, credits: { refill: { interval: 'daily', amount: 10 } } }), INVALID);
        expect(noBalance.errors?.some((e) => e.location.includes('credits'))).toBe(true);
        // refillDay is for monthly refills only.
        expectError(await c.keys.createKey(c.rootKey, { apiId, credits: { remaining: 1, refill: { interval: 'daily', amount: 10, refillDay: 3 } } }), INVALID);
        // increment / decrement on an unlimited key, or without a value.
        const unlimited = await newKey(apiId);
        expectError(await c.keys.updateCredits(c.rootKey, { keyId: unlimited.keyId, operation: 'increment', value: 5 }), INVALID);
        expectError(await c.keys.updateCredits(c.rootKey, { keyId: unlimited.keyId, operation: 'decrement', value: 5 }), INVALID);
        const limited = await newKey(apiId, { credits: { remaining: 5 } });
        expectError(await c.keys.updateCredits(c.rootKey, { keyId: limited.keyId, operation: 'increment' }), INVALID);
        expect(await balance(limited.keyId)).toBe(5);
        // A permission query with a syntax error.
        for (const permissions of ['a.read AND', '(a.read OR b.read', 'AND', 'a.read b.read']) {
          const bad = expectError(await c.keys.verifyKey(undefined, { key: limited.key, permissions }), INVALID);
          expect(bad.errors?.some((e) => e.location.includes('permissions'))).toBe(true);
        }
        expect(await balance(limited.keyId)).toBe(5);
        // Duplicate rate-limit names in one request.
        expectError(
          await c.identities.createIdentity(c.rootKey, {
            externalId: 'dup',
            ratelimits: [
              { name: 'x', limit: 1, duration: MINUTE },
              { name: 'x', limit: 2, duration: MINUTE },
            ],
          }),
          INVALID,
        );
        okData(await c.identities.createIdentity(c.rootKey, { externalId: 'dup' }));
        expectError(
          await c.identities.updateIdentity(c.rootKey, {
            identity: 'dup',
            ratelimits: [
              { name: 'x', limit: 1, duration: MINUTE },
              { name: 'x', limit: 2, duration: MINUTE },
            ],
          }),
          INVALID,
        );
        // Page sizes are 1..100.
        expectError(await c.identities.listIdentities(c.rootKey, { limit: 0 }), INVALID);
        expectError(await c.identities.listIdentities(c.rootKey, { limit: 101 }), INVALID);
        // multiLimit needs at least one request.
        expectError(await c.ratelimit.multiLimit(c.rootKey, []), INVALID);
      });

      it('invalid_input: values out of range, the same on both targets', async () => {
        const apiId = await newApi();
        await c.createNamespace('api');
        expectError(await c.keys.createKey(c.rootKey, { apiId, prefix: 'bad-prefix' }), INVALID);
        expectError(await c.keys.createKey(c.rootKey, { apiId, byteLength: 8 }), INVALID);
        expectError(await c.keys.createKey(c.rootKey, { apiId, ratelimits: [{ name: 'r', limit: 1, duration: 999 }] }), INVALID);
        expectError(await c.identities.createIdentity(c.rootKey, { externalId: 'has space' }), INVALID);
        expectError(await c.ratelimit.limit(c.rootKey, { namespace: 'api', identifier: 'u', limit: 1, duration: 999 }), INVALID);
        expectError(await c.ratelimit.limit(c.rootKey, { namespace: 'api', identifier: 'u', limit: 0, duration: MINUTE }), INVALID);
        expectError(await c.ratelimit.setOverride(c.rootKey, { namespace: 'api', identifier: 'u', limit: -1, duration: MINUTE }), INVALID);
        const { keyId, key } = await newKey(apiId, { credits: { remaining: 5 } });
        expectError(await c.keys.verifyKey(undefined, { key, credits: { cost: 1e12 + 1 } }), INVALID);
        expectError(await c.keys.verifyKey(undefined, { key, tags: Array.from({ length: 21 }, (_, i) => `t${i}`) }), INVALID);
        expect(await balance(keyId)).toBe(5);
        // Nothing was created by the refused requests.
        expect(okData(await c.identities.listIdentities(c.rootKey, {}))).toEqual([]);
      });

      it('key_not_found: unknown key id; updateCredits answers 404 before checking the value', async () => {
        await newApi();
        const code: ErrorCode = 'err:service:data:key_not_found';
        expectError(await c.keys.getKey(c.rootKey, { keyId: 'key_doesNotExist' }), code);
        expectError(await c.keys.updateKey(c.rootKey, { keyId: 'key_doesNotExist', enabled: false }), code);
        expectError(await c.keys.deleteKey(c.rootKey, { keyId: 'key_doesNotExist' }), code);
        expectError(await c.keys.updateCredits(c.rootKey, { keyId: 'key_doesNotExist', operation: 'increment' }), code);
      });

      it('api_not_found: unknown API or an API of another workspace', async () => {
        expectError(await c.keys.createKey(c.rootKey, { apiId: 'api_doesNotExist' }), 'err:service:data:api_not_found');
        const other = await c.createWorkspace();
        const theirs = await newApi(other.rootKey);
        expectError(await c.keys.createKey(c.rootKey, { apiId: theirs }), 'err:service:data:api_not_found');
      });

      it('identity_not_found: unknown identity, by id or externalId', async () => {
        const code: ErrorCode = 'err:service:data:identity_not_found';
        expectError(await c.identities.getIdentity(c.rootKey, { identity: 'id_doesNotExist' }), code);
        expectError(await c.identities.getIdentity(c.rootKey, { identity: 'nobody' }), code);
        expectError(await c.identities.updateIdentity(c.rootKey, { identity: 'nobody', meta: {} }), code);
        expectError(await c.identities.deleteIdentity(c.rootKey, { identity: 'nobody' }), code);
      });

      it('identity_already_exists: a live identity with the same externalId (case-sensitive)', async () => {
        okData(await c.identities.createIdentity(c.rootKey, { externalId: 'user_1' }));
        expectError(await c.identities.createIdentity(c.rootKey, { externalId: 'user_1' }), 'err:service:data:identity_already_exists');
        okData(await c.identities.createIdentity(c.rootKey, { externalId: 'USER_1' }));
      });

      it('ratelimit_namespace_not_found: unknown, mistyped (case-sensitive) or fake id, on every ratelimit operation', async () => {
        await c.createNamespace('api');
        const code: ErrorCode = 'err:service:data:ratelimit_namespace_not_found';
        for (const namespace of ['nope', 'API', 'rlns_doesNotExist']) {
          expectError(await c.ratelimit.limit(c.rootKey, { namespace, identifier: 'u', limit: 1, duration: MINUTE }), code);
          expectError(await c.ratelimit.multiLimit(c.rootKey, [{ namespace, identifier: 'u', limit: 1, duration: MINUTE }]), code);
          expectError(await c.ratelimit.setOverride(c.rootKey, { namespace, identifier: 'u', limit: 1, duration: MINUTE }), code);
          expectError(await c.ratelimit.getOverride(c.rootKey, { namespace, identifier: 'u' }), code);
          expectError(await c.ratelimit.deleteOverride(c.rootKey, { namespace, identifier: 'u' }), code);
          expectError(await c.ratelimit.listOverrides(c.rootKey, { namespaceName: namespace }), code);
        }
      });

      it('ratelimit_override_not_found: no override for that identifier', async () => {
        await c.createNamespace('api');
        okData(await c.ratelimit.setOverride(c.rootKey, { namespace: 'api', identifier: 'user_*', limit: 1, duration: MINUTE }));
        const code: ErrorCode = 'err:service:data:ratelimit_override_not_found';
        expectError(await c.ratelimit.getOverride(c.rootKey, { namespace: 'api', identifier: 'someone' }), code);
        // Overrides are read by their exact identifier, not by wildcard matching.
        expectError(await c.ratelimit.getOverride(c.rootKey, { namespace: 'api', identifier: 'user_1' }), code);
        expectError(await c.ratelimit.deleteOverride(c.rootKey, { namespace: 'api', identifier: 'someone' }), code);
      });

      it('ratelimit_namespace_gone: a deleted namespace, by name or id', async () => {
        const namespaceId = await c.createNamespace('old');
        okData(await c.ratelimit.limit(c.rootKey, { namespace: 'old', identifier: 'u', limit: 1, duration: MINUTE }));
        await c.deleteNamespace('old');
        const code: ErrorCode = 'err:service:data:ratelimit_namespace_gone';
        for (const namespace of ['old', namespaceId]) {
          expectError(await c.ratelimit.limit(c.rootKey, { namespace, identifier: 'u', limit: 1, duration: MINUTE }), code);
          expectError(await c.ratelimit.setOverride(c.rootKey, { namespace, identifier: 'u', limit: 1, duration: MINUTE }), code);
          expectError(await c.ratelimit.listOverrides(c.rootKey, { namespace }), code);
        }
      });

      it('precondition_failed: the three createKey conditions, each named in the detail', async () => {
        const PRECONDITION: ErrorCode = 'err:service:application:precondition_failed';
        // 1. The API is not set up to handle keys.
        const noKeys = await newApi();
        await c.configureApi({ apiId: noKeys, keyAuth: false });
        expect(expectError(await c.keys.createKey(c.rootKey, { apiId: noKeys }), PRECONDITION).detail).toContain('not set up to handle keys');
        await c.configureApi({ apiId: noKeys, keyAuth: true });
        okData(await c.keys.createKey(c.rootKey, { apiId: noKeys }));
        // 2. recoverable while the vault is not set up (the API supports encryption).
        const encrypted = await newApi();
        await c.configureApi({ apiId: encrypted, encryption: true });
        expect(expectError(await c.keys.createKey(c.rootKey, { apiId: encrypted, recoverable: true }), PRECONDITION).detail).toContain(
          "Vault hasn't been set up.",
        );
        // 3. recoverable on an API without key encryption (the vault is set up).
        await c.configureVault(true);
        const plain = await newApi();
        expect(expectError(await c.keys.createKey(c.rootKey, { apiId: plain, recoverable: true }), PRECONDITION).detail).toContain(
          'does not support key encryption',
        );
        // Everything set up: a recoverable key is created and works.
        const recoverable = okData(await c.keys.createKey(c.rootKey, { apiId: encrypted, recoverable: true }));
        expect((await verify(recoverable.key)).code).toBe('VALID');
        // Without recoverable, neither the vault nor encryption matters.
        okData(await c.keys.createKey(c.rootKey, { apiId: plain, recoverable: false }));
      });

      it('precondition_failed: decrypting a key needs the vault', async () => {
        const apiId = await newApi();
        const { keyId } = await newKey(apiId);
        const failed = expectError(await c.keys.getKey(c.rootKey, { keyId, decrypt: true }), 'err:service:application:precondition_failed');
        expect(failed.detail).toContain("Vault hasn't been set up.");
      });

      it('precondition_failed: verifying with a named rate limit that exists neither on the key nor on its identity', async () => {
        const apiId = await newApi();
        const { keyId, key } = await newKey(apiId, { credits: { remaining: 3 }, externalId: 'owner' });
        const failed = expectError(
          await c.keys.verifyKey(undefined, { key, ratelimits: [{ name: 'nowhere' }] }),
          'err:service:application:precondition_failed',
        );
        expect(failed.detail).toContain('nowhere');
        expect(await balance(keyId)).toBe(3);
        // With an inline limit and duration, the same name is fine.
        expect((await verify(key, { ratelimits: [{ name: 'nowhere', limit: 5, duration: MINUTE }] })).code).toBe('VALID');
      });
    });

    // ── verification codes ───────────────────────────────────────────────────────────────

    describe('verification codes', () => {
      it('NOT_FOUND: an unknown key; the body has only valid and code', async () => {
        await newApi();
        expect(await verify('definitely-not-a-key')).toEqual({ valid: false, code: 'NOT_FOUND' });
        expect(await verify('definitely-not-a-key', {}, c.rootKey)).toEqual({ valid: false, code: 'NOT_FOUND' });
      });

      it('DISABLED, EXPIRED, INSUFFICIENT_PERMISSIONS, RATE_LIMITED, USAGE_EXCEEDED: in this order, each refusing', async () => {
        const apiId = await newApi();
        const { keyId, key } = await newKey(apiId, {
          enabled: false,
          expires: CONTRACT_START_MS + SECOND,
          credits: { remaining: 0 },
          ratelimits: [{ name: 'rl', limit: 1, duration: MINUTE, autoApply: true }],
        });
        await c.advanceClock(2 * SECOND);
        const query = { permissions: 'admin.write' };
        expect(await verify(key, query)).toMatchObject({ valid: false, code: 'DISABLED', keyId, enabled: false, credits: 0 });
        okData(await c.keys.updateKey(c.rootKey, { keyId, enabled: true }));
        expect(await verify(key, query)).toMatchObject({ valid: false, code: 'EXPIRED', keyId, enabled: true });
        okData(await c.keys.updateKey(c.rootKey, { keyId, expires: null }));
        expect(await verify(key, query)).toMatchObject({ valid: false, code: 'INSUFFICIENT_PERMISSIONS', keyId });
        // None of the refusals above used the rate limit: this one passes it, and is refused for credits…
        expect(await verify(key)).toMatchObject({ valid: false, code: 'USAGE_EXCEEDED', credits: 0 });
        // …having consumed its rate-limit token, so the next is RATE_LIMITED.
        const limited = await verify(key);
        expect(limited).toMatchObject({ valid: false, code: 'RATE_LIMITED', credits: 0 });
        expect(limited.ratelimits).toEqual([
          {
            id: expect.stringMatching(/^rl_/),
            name: 'rl',
            limit: 1,
            duration: MINUTE,
            reset: expect.any(Number),
            remaining: 0,
            exceeded: true,
            autoApply: true,
          },
        ]);
      });

      it('EXPIRED only once now is past expires', async () => {
        const apiId = await newApi();
        const { key } = await newKey(apiId, { expires: CONTRACT_START_MS + SECOND });
        await c.advanceClock(SECOND);
        expect((await verify(key)).code).toBe('VALID');
        await c.advanceClock(1);
        expect(await verify(key)).toMatchObject({ valid: false, code: 'EXPIRED', expires: CONTRACT_START_MS + SECOND });
      });

      it('INSUFFICIENT_PERMISSIONS: the query (AND binds tighter than OR; * is a literal)', async () => {
        const apiId = await newApi();
        const { key } = await newKey(apiId, { permissions: ['a.read', 'b.write', 'api.*'] });
        const cases: Array<[string, 'VALID' | 'INSUFFICIENT_PERMISSIONS']> = [
          ['a.read', 'VALID'],
          ['a.read AND b.write', 'VALID'],
          ['a.read AND c.admin', 'INSUFFICIENT_PERMISSIONS'],
          ['c.admin OR a.read', 'VALID'],
          ['(c.admin OR a.read) AND b.write', 'VALID'],
          ['c.admin AND d.x OR a.read', 'VALID'],
          ['c.admin AND (d.x OR a.read)', 'INSUFFICIENT_PERMISSIONS'],
          ['api.*', 'VALID'],
          ['api.read', 'INSUFFICIENT_PERMISSIONS'],
          ['*', 'INSUFFICIENT_PERMISSIONS'],
        ];
        for (const [permissions, code] of cases) {
          const out = await verify(key, { permissions });
          expect({ permissions, code: out.code, valid: out.valid }).toEqual({ permissions, code, valid: code === 'VALID' });
        }
      });

      it('RATE_LIMITED consumes no credits', async () => {
        const apiId = await newApi();
        const { keyId, key } = await newKey(apiId, {
          credits: { remaining: 10 },
          ratelimits: [{ name: 'per-key', limit: 2, duration: MINUTE, autoApply: true }],
        });
        const first = await verify(key);
        expect(first).toMatchObject({ valid: true, code: 'VALID', credits: 9 });
        expect(first.ratelimits).toEqual([
          {
            id: expect.stringMatching(/^rl_/),
            name: 'per-key',
            limit: 2,
            duration: MINUTE,
            reset: CONTRACT_START_MS + MINUTE,
            remaining: 1,
            exceeded: false,
            autoApply: true,
          },
        ]);
        expect(await verify(key)).toMatchObject({ valid: true, code: 'VALID', credits: 8 });
        expect(await verify(key)).toMatchObject({ valid: false, code: 'RATE_LIMITED', credits: 8 });
        expect(await balance(keyId)).toBe(8);
        await c.advanceClock(2 * MINUTE);
        expect(await verify(key)).toMatchObject({ valid: true, code: 'VALID', credits: 7 });
      });

      it('USAGE_EXCEEDED once the credits are used up, with credits 0', async () => {
        const apiId = await newApi();
        const { key } = await newKey(apiId, { credits: { remaining: 1 } });
        expect(await verify(key)).toMatchObject({ valid: true, code: 'VALID', credits: 0 });
        expect(await verify(key)).toMatchObject({ valid: false, code: 'USAGE_EXCEEDED', credits: 0 });
        expect(await verify(key)).toMatchObject({ valid: false, code: 'USAGE_EXCEEDED', credits: 0 });
      });
    });

    describe('rate limits during verification', () => {
      it('a named limit is checked with the request\u2019s cost; an unnamed, not auto-applied one is not checked', async () => {
        const apiId = await newApi();
        const { key } = await newKey(apiId, { ratelimits: [{ name: 'tokens', limit: 10, duration: MINUTE }] });
        expect(await verify(key)).not.toHaveProperty('ratelimits');
        expect((await verify(key, { ratelimits: [{ name: 'tokens', cost: 7 }] })).ratelimits?.[0]).toMatchObject({
          name: 'tokens',
          remaining: 3,
          exceeded: false,
        });
        expect((await verify(key, { ratelimits: [{ name: 'tokens', cost: 4 }] })).code).toBe('RATE_LIMITED');
        expect((await verify(key, { ratelimits: [{ name: 'tokens', cost: 3 }] })).code).toBe('VALID');
      });

      it('identity limits are shared by the identity\u2019s keys; a key\u2019s own limit of the same name wins', async () => {
        const apiId = await newApi();
        okData(
          await c.identities.createIdentity(c.rootKey, {
            externalId: 'org',
            ratelimits: [{ name: 'shared', limit: 2, duration: MINUTE, autoApply: true }],
          }),
        );
        const k1 = await newKey(apiId, { externalId: 'org' });
        const k2 = await newKey(apiId, { externalId: 'org' });
        const own = await newKey(apiId, { externalId: 'org', ratelimits: [{ name: 'shared', limit: 3, duration: MINUTE, autoApply: true }] });
        const first = await verify(k1.key);
        expect(first.code).toBe('VALID');
        expect(first.identity).toMatchObject({ externalId: 'org', ratelimits: [{ name: 'shared', limit: 2, duration: MINUTE, autoApply: true }] });
        expect((await verify(k2.key)).code).toBe('VALID');
        expect((await verify(k1.key)).code).toBe('RATE_LIMITED');
        expect((await verify(k2.key)).code).toBe('RATE_LIMITED');
        // The key's own "shared" (limit 3, per key) decides for that key.
        for (let i = 0; i < 3; i++) expect((await verify(own.key)).code).toBe('VALID');
        expect((await verify(own.key)).code).toBe('RATE_LIMITED');
      });

      it('an inline limit counts per key', async () => {
        const apiId = await newApi();
        const a = await newKey(apiId);
        const b = await newKey(apiId);
        const inline = { ratelimits: [{ name: 'inline', limit: 1, duration: MINUTE }] };
        expect((await verify(a.key, inline)).code).toBe('VALID');
        expect((await verify(a.key, inline)).code).toBe('RATE_LIMITED');
        expect((await verify(b.key, inline)).code).toBe('VALID');
      });

      it('several limits are all-or-nothing: if one is exceeded, none consumes', async () => {
        const apiId = await newApi();
        const { key } = await newKey(apiId, {
          ratelimits: [
            { name: 'tight', limit: 1, duration: MINUTE, autoApply: true },
            { name: 'loose', limit: 5, duration: MINUTE, autoApply: true },
          ],
        });
        expect((await verify(key)).code).toBe('VALID');
        expect((await verify(key)).code).toBe('RATE_LIMITED');
        expect((await verify(key)).code).toBe('RATE_LIMITED');
        const peek = await verify(key, {
          ratelimits: [
            { name: 'tight', cost: 0 },
            { name: 'loose', cost: 0 },
          ],
        });
        expect(peek.code).toBe('VALID');
        expect(peek.ratelimits?.find((r) => r.name === 'loose')?.remaining).toBe(4);
      });

      it('a deleted identity: its keys verify without the identity and without its limits', async () => {
        const apiId = await newApi();
        okData(
          await c.identities.createIdentity(c.rootKey, { externalId: 'gone', ratelimits: [{ name: 'one', limit: 1, duration: MINUTE, autoApply: true }] }),
        );
        const { keyId, key } = await newKey(apiId, { externalId: 'gone' });
        expect((await verify(key)).code).toBe('VALID');
        expect((await verify(key)).code).toBe('RATE_LIMITED');
        okData(await c.identities.deleteIdentity(c.rootKey, { identity: 'gone' }));
        const after = await verify(key);
        expect(after).toEqual({ valid: true, code: 'VALID', keyId, enabled: true });
        expect(okData(await c.keys.getKey(c.rootKey, { keyId }))).not.toHaveProperty('identity');
      });
    });

    // ── the interface document's worked examples ─────────────────────────────────────────

    describe('worked examples of the interface document', () => {
      it('a refill replaces the balance: 50 remaining with an amount of 1000 becomes exactly 1000 at midnight UTC', async () => {
        const apiId = await newApi();
        const { keyId, key } = await newKey(apiId, { credits: { remaining: 50, refill: { interval: 'daily', amount: 1000 } } });
        const above = await newKey(apiId, { credits: { remaining: 5000, refill: { interval: 'daily', amount: 1000 } } });
        await c.setClock(Date.UTC(2027, 0, 15, 23, 59, 59, 999));
        expect(await balance(keyId)).toBe(50);
        await c.setClock(Date.UTC(2027, 0, 16));
        expect(await balance(keyId)).toBe(1000);
        expect(await balance(above.keyId)).toBe(1000);
        expect(await verify(key)).toMatchObject({ code: 'VALID', credits: 999 });
        // Several missed boundaries: still exactly the amount.
        await c.advanceClock(10 * DAY);
        expect(await balance(keyId)).toBe(1000);
      });

      it('a key with 5 remaining rejects cost 10 and still reports 5', async () => {
        const apiId = await newApi();
        const { keyId, key } = await newKey(apiId, { credits: { remaining: 5 } });
        expect(await verify(key, { credits: { cost: 10 } })).toMatchObject({ valid: false, code: 'USAGE_EXCEEDED', credits: 5 });
        expect(await balance(keyId)).toBe(5);
        expect(await verify(key, { credits: { cost: 5 } })).toMatchObject({ valid: true, code: 'VALID', credits: 0 });
        expect(await verify(key)).toMatchObject({ valid: false, code: 'USAGE_EXCEEDED', credits: 0 });
      });

      it('cost 0 checks the key without changing the balance; the default cost is 1', async () => {
        const apiId = await newApi();
        const { keyId, key } = await newKey(apiId, { credits: { remaining: 3 } });
        expect(await verify(key, { credits: { cost: 0 } })).toMatchObject({ valid: true, code: 'VALID', credits: 3 });
        expect(await balance(keyId)).toBe(3);
        expect(await verify(key, { credits: {} })).toMatchObject({ valid: true, credits: 2 });
        expect(await verify(key)).toMatchObject({ valid: true, credits: 1 });
      });

      const refillDay31 = (label: string, createAt: number, dayBefore: number, refillAt: number, nextDayBefore: number, nextRefillAt: number) =>
        it(`refillDay 31 ${label}`, async () => {
          await c.setClock(createAt);
          const apiId = await newApi();
          const { keyId, key } = await newKey(apiId, { credits: { remaining: 7, refill: { interval: 'monthly', amount: 100, refillDay: 31 } } });
          expect(await creditsOf(keyId)).toEqual({ remaining: 7, refill: { interval: 'monthly', amount: 100, refillDay: 31 } });
          await c.setClock(dayBefore);
          expect(await balance(keyId)).toBe(7);
          await c.setClock(refillAt);
          expect(await balance(keyId)).toBe(100);
          expect(await verify(key, { credits: { cost: 100 } })).toMatchObject({ valid: true, credits: 0 });
          await c.setClock(nextDayBefore);
          expect(await verify(key)).toMatchObject({ code: 'USAGE_EXCEEDED', credits: 0 });
          await c.setClock(nextRefillAt);
          expect(await verify(key)).toMatchObject({ code: 'VALID', credits: 99 });
        });
      const END = (y: number, m: number, d: number) => Date.UTC(y, m - 1, d, 23, 59, 59, 999);
      refillDay31(
        'in February of a leap year: Feb 29, then Mar 31',
        Date.UTC(2028, 1, 1),
        END(2028, 2, 28),
        Date.UTC(2028, 1, 29),
        END(2028, 3, 30),
        Date.UTC(2028, 2, 31),
      );
      refillDay31(
        'in February of a common year: Feb 28, then Mar 31',
        Date.UTC(2027, 1, 1),
        END(2027, 2, 27),
        Date.UTC(2027, 1, 28),
        END(2027, 3, 30),
        Date.UTC(2027, 2, 31),
      );
      refillDay31(
        'in a 30-day month: Apr 30, then May 31',
        Date.UTC(2027, 3, 1),
        END(2027, 4, 29),
        Date.UTC(2027, 3, 30),
        END(2027, 5, 30),
        Date.UTC(2027, 4, 31),
      );

      it('a monthly refill without refillDay happens on the 1st', async () => {
        const apiId = await newApi();
        const { keyId } = await newKey(apiId, { credits: { remaining: 7, refill: { interval: 'monthly', amount: 100 } } });
        const refill = (await creditsOf(keyId))?.refill;
        expect(refill).toMatchObject({ interval: 'monthly', amount: 100 });
        expect([undefined, 1]).toContain(refill?.refillDay);
        await c.setClock(END(2027, 1, 31));
        expect(await balance(keyId)).toBe(7);
        await c.setClock(Date.UTC(2027, 1, 1));
        expect(await balance(keyId)).toBe(100);
      });

      it('credits null makes the key unlimited', async () => {
        const apiId = await newApi();
        const { keyId, key } = await newKey(apiId, { credits: { remaining: 1, refill: { interval: 'daily', amount: 1 } } });
        expect((await verify(key)).credits).toBe(0);
        expect(okData(await c.keys.updateKey(c.rootKey, { keyId, credits: null }))).toEqual({});
        expect(await creditsOf(keyId)).toBeUndefined();
        for (let i = 0; i < 3; i++) expect(await verify(key)).toEqual({ valid: true, code: 'VALID', keyId, enabled: true });
        await c.advanceClock(2 * DAY);
        expect(await creditsOf(keyId)).toBeUndefined();
      });

      it('refill null stops the refill and keeps the balance', async () => {
        const apiId = await newApi();
        const { keyId, key } = await newKey(apiId, { credits: { remaining: 50, refill: { interval: 'daily', amount: 1000 } } });
        expect((await verify(key)).credits).toBe(49);
        okData(await c.keys.updateKey(c.rootKey, { keyId, credits: { refill: null } }));
        expect(await creditsOf(keyId)).toEqual({ remaining: 49 });
        await c.advanceClock(3 * DAY);
        expect(await creditsOf(keyId)).toEqual({ remaining: 49 });
      });

      it('updateKey with credits.remaining gives a new allocation at once and keeps the refill; increments add to the balance', async () => {
        const apiId = await newApi();
        const { keyId } = await newKey(apiId, { credits: { remaining: 10, refill: { interval: 'daily', amount: 100 } } });
        okData(await c.keys.updateKey(c.rootKey, { keyId, credits: { remaining: 500 } }));
        expect(await creditsOf(keyId)).toEqual({ remaining: 500, refill: { interval: 'daily', amount: 100 } });
        okData(await c.keys.updateCredits(c.rootKey, { keyId, operation: 'increment', value: 5 }));
        expect(await balance(keyId)).toBe(505);
        await c.setClock(Date.UTC(2027, 0, 16));
        expect(await balance(keyId)).toBe(100);
      });

      it('updateKey credits: remaining null → unlimited without refill; refill alone → refill set, balance kept', async () => {
        const apiId = await newApi();
        const limited = await newKey(apiId, { credits: { remaining: 10 } });
        const refilled = await newKey(apiId, { credits: { remaining: 10, refill: { interval: 'daily', amount: 100 } } });
        const unlimited = await newKey(apiId);
        okData(await c.keys.updateKey(c.rootKey, { keyId: limited.keyId, credits: { refill: { interval: 'daily', amount: 30 } } }));
        expect(await creditsOf(limited.keyId)).toEqual({ remaining: 10, refill: { interval: 'daily', amount: 30 } });
        okData(await c.keys.updateKey(c.rootKey, { keyId: refilled.keyId, credits: { remaining: null } }));
        expect(await creditsOf(refilled.keyId)).toBeUndefined();
        // A refill on an unlimited key makes it limited at the amount from the next boundary.
        okData(await c.keys.updateKey(c.rootKey, { keyId: unlimited.keyId, credits: { refill: { interval: 'daily', amount: 30 } } }));
        expect(await verify(unlimited.key)).not.toHaveProperty('credits');
        await c.setClock(Date.UTC(2027, 0, 16));
        expect(await balance(limited.keyId)).toBe(30);
        expect(await creditsOf(refilled.keyId)).toBeUndefined();
        expect(await verify(unlimited.key)).toMatchObject({ valid: true, credits: 29 });
      });

      it('an exhausted key becomes available again at the refill', async () => {
        const apiId = await newApi();
        const { key } = await newKey(apiId, { credits: { remaining: 1, refill: { interval: 'daily', amount: 2 } } });
        expect((await verify(key)).code).toBe('VALID');
        expect(await verify(key)).toMatchObject({ valid: false, code: 'USAGE_EXCEEDED', credits: 0 });
        await c.setClock(Date.UTC(2027, 0, 16));
        expect(await verify(key)).toMatchObject({ valid: true, code: 'VALID', credits: 1 });
      });
    });

    // ── pagination ───────────────────────────────────────────────────────────────────────

    describe('pagination', () => {
      it('listIdentities: pages in id order until the cursor disappears', async () => {
        const created: string[] = [];
        for (let i = 0; i < 7; i++) created.push(okData(await c.identities.createIdentity(c.rootKey, { externalId: `person-${i}` })).identityId);
        const seen: string[] = [];
        const hasMore: boolean[] = [];
        let cursor: string | undefined;
        for (let guard = 0; guard < 10; guard++) {
          const page = await c.identities.listIdentities(c.rootKey, cursor === undefined ? { limit: 3 } : { limit: 3, cursor });
          const items = okData(page);
          expect(items.length).toBeLessThanOrEqual(3);
          seen.push(...items.map((i) => i.id));
          hasMore.push(page.ok && page.pagination?.hasMore === true);
          cursor = page.ok ? page.pagination?.cursor : undefined;
          if (cursor === undefined) break;
        }
        expect(hasMore).toEqual([true, true, false]);
        expect(seen).toEqual([...created].sort());
        // The default page size (100) holds them all.
        const all = await c.identities.listIdentities(c.rootKey, {});
        expect(okData(all).map((i) => i.id)).toEqual([...created].sort());
        expect(all.ok && all.pagination).toEqual({ hasMore: false });
        // A page that ends exactly at the last item is the last page: no cursor to an empty page.
        const exact = await c.identities.listIdentities(c.rootKey, { limit: 7 });
        expect(okData(exact)).toHaveLength(7);
        expect(exact.ok && exact.pagination).toEqual({ hasMore: false });
        const firstSix = await c.identities.listIdentities(c.rootKey, { limit: 6 });
        const rest = await c.identities.listIdentities(c.rootKey, { limit: 1, cursor: (firstSix.ok && firstSix.pagination?.cursor) || 'missing-cursor' });
        expect(okData(rest).map((i) => i.id)).toEqual([...created].sort().slice(6));
        expect(rest.ok && rest.pagination).toEqual({ hasMore: false });
      });

      it('listOverrides: pages until the cursor disappears', async () => {
        await c.createNamespace('api');
        const created: string[] = [];
        for (let i = 0; i < 5; i++) {
          created.push(
            okData(await c.ratelimit.setOverride(c.rootKey, { namespace: 'api', identifier: `tenant-${i}`, limit: i, duration: MINUTE })).overrideId,
          );
        }
        const seen: string[] = [];
        let pages = 0;
        let cursor: string | undefined;
        do {
          const page = await c.ratelimit.listOverrides(
            c.rootKey,
            cursor === undefined ? { namespaceName: 'api', limit: 2 } : { namespaceName: 'api', limit: 2, cursor },
          );
          seen.push(...okData(page).map((o) => o.overrideId));
          cursor = page.ok ? page.pagination?.cursor : undefined;
          pages++;
        } while (cursor !== undefined && pages < 10);
        expect(pages).toBe(3);
        expect([...seen].sort()).toEqual([...created].sort());
        expect(new Set(seen).size).toBe(5);
      });
    });

    // ── overrides with wildcards, multiLimit ─────────────────────────────────────────────

    describe('overrides', () => {
      it('a wildcard matches the whole identifier; an exact override beats it; no match uses the request', async () => {
        await c.createNamespace('api');
        const wildcard = okData(await c.ratelimit.setOverride(c.rootKey, { namespace: 'api', identifier: 'user_*', limit: 1, duration: MINUTE })).overrideId;
        const exact = okData(await c.ratelimit.setOverride(c.rootKey, { namespace: 'api', identifier: 'user_vip', limit: 5, duration: MINUTE })).overrideId;
        const req = { namespace: 'api', limit: 100, duration: MINUTE };
        expect(okData(await c.ratelimit.limit(c.rootKey, { ...req, identifier: 'user_1' }))).toEqual({
          limit: 1,
          remaining: 0,
          reset: CONTRACT_START_MS + MINUTE,
          success: true,
          overrideId: wildcard,
        });
        expect(okData(await c.ratelimit.limit(c.rootKey, { ...req, identifier: 'user_1' }))).toMatchObject({ success: false, limit: 1, overrideId: wildcard });
        expect(okData(await c.ratelimit.limit(c.rootKey, { ...req, identifier: 'user_' }))).toMatchObject({ limit: 1, overrideId: wildcard });
        expect(okData(await c.ratelimit.limit(c.rootKey, { ...req, identifier: 'user_vip' }))).toMatchObject({
          success: true,
          limit: 5,
          remaining: 4,
          overrideId: exact,
        });
        const none = okData(await c.ratelimit.limit(c.rootKey, { ...req, identifier: 'xuser_1' }));
        expect(none).toEqual({ limit: 100, remaining: 99, reset: CONTRACT_START_MS + MINUTE, success: true });
      });

      it('an override replaces both limit and duration; limit 0 refuses everything', async () => {
        await c.createNamespace('api');
        okData(await c.ratelimit.setOverride(c.rootKey, { namespace: 'api', identifier: 'slow-*', limit: 2, duration: HOUR }));
        okData(await c.ratelimit.setOverride(c.rootKey, { namespace: 'api', identifier: 'banned', limit: 0, duration: MINUTE }));
        expect(okData(await c.ratelimit.limit(c.rootKey, { namespace: 'api', identifier: 'slow-a', limit: 100, duration: MINUTE }))).toMatchObject({
          limit: 2,
          remaining: 1,
          reset: CONTRACT_START_MS + HOUR,
        });
        expect(okData(await c.ratelimit.limit(c.rootKey, { namespace: 'api', identifier: 'banned', limit: 100, duration: MINUTE }))).toMatchObject({
          success: false,
          limit: 0,
          remaining: 0,
        });
      });
    });

    describe('multiLimit', () => {
      it('is all-or-nothing: when one limit is exceeded, none consumes', async () => {
        await c.createNamespace('api');
        const batch = [
          { namespace: 'api', identifier: 'a', limit: 1, duration: MINUTE },
          { namespace: 'api', identifier: 'b', limit: 5, duration: MINUTE },
        ];
        expect(okData(await c.ratelimit.multiLimit(c.rootKey, batch)).passed).toBe(true);
        const refused = okData(await c.ratelimit.multiLimit(c.rootKey, batch));
        expect(refused.passed).toBe(false);
        expect(refused.limits[0]).toMatchObject({ namespace: 'api', identifier: 'a', passed: false, remaining: 0 });
        expect(refused.limits[1]).toMatchObject({ namespace: 'api', identifier: 'b' });
        // b was consumed once (by the passing batch), not twice.
        expect(okData(await c.ratelimit.limit(c.rootKey, { namespace: 'api', identifier: 'b', limit: 5, duration: MINUTE, cost: 0 })).remaining).toBe(4);
      });

      it('a request naming an unknown namespace fails as a whole and consumes nothing', async () => {
        await c.createNamespace('api');
        expectError(
          await c.ratelimit.multiLimit(c.rootKey, [
            { namespace: 'api', identifier: 'u', limit: 5, duration: MINUTE },
            { namespace: 'missing', identifier: 'u', limit: 5, duration: MINUTE },
          ]),
          'err:service:data:ratelimit_namespace_not_found',
        );
        expect(okData(await c.ratelimit.limit(c.rootKey, { namespace: 'api', identifier: 'u', limit: 5, duration: MINUTE })).remaining).toBe(4);
      });
    });

    // ── isolation ────────────────────────────────────────────────────────────────────────

    describe('cross-workspace isolation', () => {
      it('resources of another workspace behave as if they did not exist', async () => {
        const fx = await fixture();
        const other = await c.createWorkspace();
        const them = other.rootKey;
        expectError(await c.keys.getKey(them, { keyId: fx.keyId }), 'err:service:data:key_not_found');
        expectError(await c.keys.updateKey(them, { keyId: fx.keyId, enabled: false }), 'err:service:data:key_not_found');
        expectError(await c.keys.updateCredits(them, { keyId: fx.keyId, operation: 'set', value: 0 }), 'err:service:data:key_not_found');
        expectError(await c.keys.deleteKey(them, { keyId: fx.keyId }), 'err:service:data:key_not_found');
        expectError(await c.keys.createKey(them, { apiId: fx.apiId }), 'err:service:data:api_not_found');
        expect(await verify(fx.key, {}, them)).toEqual({ valid: false, code: 'NOT_FOUND' });
        expectError(await c.identities.getIdentity(them, { identity: fx.identityId }), 'err:service:data:identity_not_found');
        expectError(await c.identities.getIdentity(them, { identity: 'fixture-owner' }), 'err:service:data:identity_not_found');
        expectError(await c.identities.deleteIdentity(them, { identity: fx.identityId }), 'err:service:data:identity_not_found');
        expect(okData(await c.identities.listIdentities(them, {}))).toEqual([]);
        const nsGone: ErrorCode = 'err:service:data:ratelimit_namespace_not_found';
        for (const namespace of [fx.namespace, fx.namespaceId]) {
          expectError(await c.ratelimit.limit(them, { namespace, identifier: 'u', limit: 1, duration: MINUTE }), nsGone);
          expectError(await c.ratelimit.getOverride(them, { namespace, identifier: 'fixture-user' }), nsGone);
          expectError(await c.ratelimit.listOverrides(them, { namespace }), nsGone);
        }
        // Nothing of ours changed.
        expect(okData(await c.keys.getKey(c.rootKey, { keyId: fx.keyId }))).toMatchObject({ enabled: true, credits: { remaining: 100 } });
        okData(await c.identities.getIdentity(c.rootKey, { identity: fx.identityId }));
      });

      it('the same names live separately in each workspace', async () => {
        const other = await c.createWorkspace();
        const mine = okData(await c.identities.createIdentity(c.rootKey, { externalId: 'shared-name' })).identityId;
        const theirs = okData(await c.identities.createIdentity(other.rootKey, { externalId: 'shared-name' })).identityId;
        expect(theirs).not.toBe(mine);
        expect(okData(await c.identities.getIdentity(other.rootKey, { identity: 'shared-name' })).id).toBe(theirs);
        await c.createNamespace('api');
        await c.createNamespace('api', other.rootKey);
        const req = { namespace: 'api', identifier: 'u', limit: 1, duration: MINUTE };
        expect(okData(await c.ratelimit.limit(c.rootKey, req)).success).toBe(true);
        expect(okData(await c.ratelimit.limit(other.rootKey, req)).success).toBe(true);
        expect(okData(await c.ratelimit.limit(c.rootKey, req)).success).toBe(false);
      });
    });
  });
}
