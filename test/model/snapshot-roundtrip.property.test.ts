/**
 * Whatever the service accepts, a snapshot restores: after any sequence of accepted requests
 * (keys with meta, credits, refills, rate limits, roles, permissions; identities; namespaces and
 * overrides; verifications; time passing), snapshot → JSON → restore gives an equal snapshot, and
 * the restored engine answers the next requests exactly as the original.
 */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { Engine, MAX_META_DEPTH, ManualClock, type Result } from '../../src/engine/index.js';
import { type Schema, validate } from '../../src/http/schema.js';
import { createIdentityRequest, updateIdentityRequest } from '../../src/http/schemas/identities.js';
import { createKeyRequest, updateCreditsRequest, updateKeyRequest, verifyKeyRequest } from '../../src/http/schemas/keys.js';
import { limitRequest, setOverrideRequest } from '../../src/http/schemas/ratelimit.js';
import { unwrap } from '../helpers/engine.js';
import { assertProperty } from '../helpers/property.js';

const START_MS = Date.UTC(2028, 0, 30, 18);
const DAY = 86_400_000;

function nested(depth: number): Record<string, unknown> {
  let value: Record<string, unknown> = { leaf: 1 };
  for (let level = 1; level < depth; level++) value = { n: value };
  return value;
}

const meta = fc.oneof(
  fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 4 }), { maxKeys: 6 }),
  fc.integer({ min: 1, max: MAX_META_DEPTH + 1 }).map(nested),
);
const names = fc.array(fc.constantFrom('a', 'b', 'api.*', 'x.read', '*'), { maxLength: 4 });
const rateLimits = fc.uniqueArray(
  fc.record(
    {
      name: fc.constantFrom('rl', 'burst', 'day'),
      limit: fc.integer({ min: 1, max: 5 }),
      duration: fc.constantFrom(1000, 60_000, DAY),
      autoApply: fc.boolean(),
    },
    { requiredKeys: ['name', 'limit', 'duration'] },
  ),
  { selector: (r) => r.name, maxLength: 3 },
);
const refill = fc.oneof(
  fc.record({ interval: fc.constant('daily'), amount: fc.integer({ min: 1, max: 100 }) }),
  fc.record(
    { interval: fc.constant('monthly'), amount: fc.integer({ min: 1, max: 100 }), refillDay: fc.integer({ min: 1, max: 31 }) },
    { requiredKeys: ['interval', 'amount'] },
  ),
);
const credits = fc.oneof(
  fc.constant(null),
  fc.record({ remaining: fc.integer({ min: 0, max: 50 }), refill: fc.option(refill, { nil: undefined }) }, { requiredKeys: ['remaining'] }),
);
const externalId = fc.constantFrom('acme', 'user_1', 'org.2');
const createKey = fc.record(
  {
    meta,
    credits,
    ratelimits: rateLimits,
    roles: names,
    permissions: names,
    externalId,
    expires: fc.integer({ min: START_MS, max: START_MS + 90 * DAY }),
    enabled: fc.boolean(),
    recoverable: fc.boolean(),
    name: fc.string({ minLength: 1, maxLength: 10 }),
  },
  { requiredKeys: [] },
);

type Op =
  | { kind: 'createKey'; input: Record<string, unknown> }
  | { kind: 'updateKey'; key: number; input: Record<string, unknown> }
  | { kind: 'deleteKey'; key: number }
  | { kind: 'verify'; key: number; cost: number; permissions: string | undefined }
  | { kind: 'credits'; key: number; operation: 'set' | 'increment' | 'decrement'; value: number | null }
  | { kind: 'createIdentity'; input: Record<string, unknown> }
  | { kind: 'updateIdentity'; identity: string; input: Record<string, unknown> }
  | { kind: 'deleteIdentity'; identity: string }
  | { kind: 'namespace'; name: string; remove: boolean }
  | { kind: 'override'; identifier: string; limit: number }
  | { kind: 'limit'; identifier: string; limit: number }
  | { kind: 'advance'; byMs: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  { arbitrary: createKey.map((input) => ({ kind: 'createKey' as const, input })), weight: 4 },
  fc.record({
    kind: fc.constant('updateKey' as const),
    key: fc.nat(5),
    input: fc.record(
      { meta: fc.option(meta, { nil: null }), credits, ratelimits: rateLimits, roles: names, externalId: fc.option(externalId, { nil: null }) },
      { requiredKeys: [] },
    ),
  }),
  fc.record({ kind: fc.constant('deleteKey' as const), key: fc.nat(5) }),
  {
    arbitrary: fc.record({
      kind: fc.constant('verify' as const),
      key: fc.nat(5),
      cost: fc.integer({ min: 0, max: 3 }),
      permissions: fc.option(fc.constantFrom('a', 'a and b', 'a OR x.read', '(a Or b) AND api.*'), { nil: undefined }),
    }),
    weight: 3,
  },
  fc.record({
    kind: fc.constant('credits' as const),
    key: fc.nat(5),
    operation: fc.constantFrom('set' as const, 'increment' as const, 'decrement' as const),
    value: fc.option(fc.integer({ min: 0, max: 20 }), { nil: null }),
  }),
  fc.record({ kind: fc.constant('createIdentity' as const), input: fc.record({ externalId, meta, ratelimits: rateLimits }, { requiredKeys: ['externalId'] }) }),
  fc.record({
    kind: fc.constant('updateIdentity' as const),
    identity: externalId,
    input: fc.record({ meta: fc.option(meta, { nil: null }), ratelimits: rateLimits }, { requiredKeys: [] }),
  }),
  fc.record({ kind: fc.constant('deleteIdentity' as const), identity: externalId }),
  fc.record({ kind: fc.constant('namespace' as const), name: fc.constantFrom('api', 'jobs'), remove: fc.boolean() }),
  fc.record({ kind: fc.constant('override' as const), identifier: fc.constantFrom('u1', 'vip_*', 'u2'), limit: fc.integer({ min: 0, max: 5 }) }),
  fc.record({ kind: fc.constant('limit' as const), identifier: fc.constantFrom('u1', 'vip_9', 'u2'), limit: fc.integer({ min: 1, max: 3 }) }),
  {
    arbitrary: fc.record({ kind: fc.constant('advance' as const), byMs: fc.oneof(fc.integer({ min: 0, max: 5000 }), fc.integer({ min: 0, max: 40 * DAY })) }),
    weight: 2,
  },
);

interface World {
  engine: Engine;
  clock: ManualClock;
  rootKey: string;
  workspaceId: string;
  apiId: string;
  keys: Array<{ keyId: string; key: string }>;
}

function makeWorld(seed: number): World {
  const clock = new ManualClock(START_MS);
  const engine = new Engine({ clock, seed });
  const ws = unwrap(engine.admin.createWorkspace({ name: 'w' }));
  const api = unwrap(engine.apis.createApi(ws.rootKey, { name: 'api' }));
  unwrap(engine.admin.configureVault(ws.workspaceId, true));
  unwrap(engine.admin.configureApi(ws.workspaceId, { apiId: api.apiId, encryption: true }));
  return { engine, clock, rootKey: ws.rootKey, workspaceId: ws.workspaceId, apiId: api.apiId, keys: [] };
}

/** Runs a request the way the service does: the schema first (refused → skipped), then the engine. */
function accepted<T>(schema: Schema<T>, input: unknown, run: (value: T) => Result<unknown>): Result<unknown> | undefined {
  const checked = validate(schema, JSON.parse(JSON.stringify(input)) as unknown);
  return checked.ok ? run(checked.value) : undefined;
}

function apply(w: World, o: Op): void {
  const e = w.engine;
  const key = (i: number) => w.keys[i % Math.max(1, w.keys.length)];
  switch (o.kind) {
    case 'createKey': {
      const result = accepted(createKeyRequest, { apiId: w.apiId, ...o.input }, (v) => e.keys.createKey(w.rootKey, v));
      if (result?.ok === true) w.keys.push(result.value as { keyId: string; key: string });
      return;
    }
    case 'updateKey': {
      const k = key(o.key);
      if (k !== undefined) accepted(updateKeyRequest, { keyId: k.keyId, ...o.input }, (v) => e.keys.updateKey(w.rootKey, v));
      return;
    }
    case 'deleteKey': {
      const k = key(o.key);
      if (k !== undefined) e.keys.deleteKey(w.rootKey, { keyId: k.keyId });
      return;
    }
    case 'verify': {
      const k = key(o.key);
      const input =
        o.permissions === undefined
          ? { key: k?.key ?? 'nope', credits: { cost: o.cost } }
          : { key: k?.key ?? 'nope', credits: { cost: o.cost }, permissions: o.permissions };
      accepted(verifyKeyRequest, input, (v) => e.keys.verifyKey(w.rootKey, v));
      return;
    }
    case 'credits': {
      const k = key(o.key);
      if (k !== undefined)
        accepted(updateCreditsRequest, { keyId: k.keyId, operation: o.operation, value: o.value }, (v) => e.keys.updateCredits(w.rootKey, v));
      return;
    }
    case 'createIdentity':
      accepted(createIdentityRequest, o.input, (v) => e.identities.createIdentity(w.rootKey, v));
      return;
    case 'updateIdentity':
      accepted(updateIdentityRequest, { identity: o.identity, ...o.input }, (v) => e.identities.updateIdentity(w.rootKey, v));
      return;
    case 'deleteIdentity':
      e.identities.deleteIdentity(w.rootKey, { identity: o.identity });
      return;
    case 'namespace':
      if (o.remove) e.admin.deleteNamespace(w.workspaceId, o.name);
      else e.admin.createNamespace(w.workspaceId, o.name);
      return;
    case 'override':
      accepted(setOverrideRequest, { namespace: 'api', identifier: o.identifier, limit: o.limit, duration: 60_000 }, (v) =>
        e.ratelimit.setOverride(w.rootKey, v),
      );
      return;
    case 'limit':
      accepted(limitRequest, { namespace: 'api', identifier: o.identifier, limit: o.limit, duration: 60_000 }, (v) => e.ratelimit.limit(w.rootKey, v));
      return;
    case 'advance':
      w.clock.advance(o.byMs);
      return;
  }
}

/** The answers a client could observe next, in order (they change the state as they go). */
function probe(w: World, engine: Engine, clock: ManualClock): string {
  const out: unknown[] = [];
  for (const step of [0, 3 * DAY + 1]) {
    clock.advance(step);
    for (const k of w.keys) {
      out.push(engine.keys.getKey(w.rootKey, { keyId: k.keyId, decrypt: true }));
      out.push(engine.keys.verifyKey(w.rootKey, { key: k.key, credits: { cost: 1 }, permissions: 'a and b' }));
      out.push(engine.keys.verifyKey(w.rootKey, { key: k.key }));
    }
    out.push(engine.identities.listIdentities(w.rootKey, {}));
    out.push(engine.ratelimit.limit(w.rootKey, { namespace: 'api', identifier: 'vip_1', limit: 2, duration: 60_000 }));
    out.push(engine.keys.createKey(w.rootKey, { apiId: w.apiId, externalId: 'fresh' }));
    out.push(engine.identities.createIdentity(w.rootKey, { externalId: 'acme' }));
  }
  return JSON.stringify(out);
}

describe('snapshot / restore round-trips whatever the service accepts', () => {
  test('equal snapshots and equal answers after restore (property, seed printed on failure)', async () => {
    assertProperty(
      fc.property(fc.integer({ min: 1, max: 1000 }), fc.array(op, { minLength: 1, maxLength: 40 }), (seed, ops) => {
        const w = makeWorld(seed);
        for (const o of ops) apply(w, o);
        const text = JSON.stringify(w.engine.snapshot());
        const clock = new ManualClock(w.clock.now());
        const restored = new Engine({ clock, seed });
        const result = restored.restore(JSON.parse(text) as unknown);
        if (!result.ok) throw new Error(`restore refused an accepted state: ${JSON.stringify(result.error)}`);
        expect(JSON.stringify(restored.snapshot())).toBe(text);
        expect(probe(w, restored, clock)).toBe(probe(w, w.engine, w.clock));
      }),
      { numRuns: 150 },
    );
  });
});
