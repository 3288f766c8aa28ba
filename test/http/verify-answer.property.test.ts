/**
 * keys.verifyKey's own data writer (src/http/v2/verify-answer.ts) against JSON.stringify, over
 * answers the engine really makes: generated keys (name, meta with any characters, permissions,
 * roles, expiry, disabled, credits with refills, rate limits, an identity with its own meta and
 * limits), verified with generated requests (costs, named and inline limits, permission queries)
 * while the clock moves — every outcome: VALID, NOT_FOUND, DISABLED, EXPIRED,
 * INSUFFICIENT_PERMISSIONS, RATE_LIMITED, USAGE_EXCEEDED. Seeds are printed on failure
 * (test/helpers/property.ts).
 */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import type { CreateKeyInput, JsonObject, VerifyKeyInput, VerifyKeyOutput } from '../../src/engine/index.js';
import { replyBody, replyText } from '../../src/http/envelope.js';
import { ROUTES } from '../../src/http/routes.js';
import { verifyKeyOutputText } from '../../src/http/v2/verify-answer.js';
import { makeEngine, unwrap } from '../helpers/engine.js';
import { assertProperty } from '../helpers/property.js';

const route = ROUTES.find((r) => r.path === '/v2/keys.verifyKey');

/** The writer's text is JSON.stringify's, byte for byte, and reads back as the answer. */
function expectSameText(out: VerifyKeyOutput): void {
  const expected = JSON.stringify(out);
  const text = verifyKeyOutputText(out);
  expect(text).toBe(expected);
  expect(JSON.parse(text)).toEqual(JSON.parse(expected));
}

// Text of every kind: letters, quotes, backslashes, control characters, emoji, lone surrogates.
const oddText = fc.oneof(
  fc.string({ minLength: 1, maxLength: 12 }),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 12 }),
  fc.constantFrom('a"b', 'back\\slash', 'line\nbreak\u0000', '\u2028\u2029', '😀 émoji', '\ud800', '</script>'),
);
const meta: fc.Arbitrary<JsonObject> = fc.dictionary(oddText, fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 }) as fc.Arbitrary<JsonObject>;
const permissionName = fc.constantFrom('a.read', 'b.write', 'c.write', 'api.*.verify_key', 'x');
const limitName = fc.constantFrom('l1', 'l2', 'l3');
const attachedLimits = fc.uniqueArray(
  fc.record({ name: limitName, limit: fc.integer({ min: 1, max: 4 }), duration: fc.constantFrom(1_000, 60_000), autoApply: fc.boolean() }),
  { maxLength: 3, selector: (r) => r.name },
);

const keyInput = fc.record(
  {
    name: oddText,
    meta,
    permissions: fc.array(permissionName, { maxLength: 3 }),
    roles: fc.array(oddText, { maxLength: 2 }),
    expiresInMs: fc.integer({ min: -60_000, max: 120_000 }),
    enabled: fc.boolean(),
    credits: fc.record(
      {
        remaining: fc.oneof(fc.integer({ min: 0, max: 3 }), fc.constant(1e12)),
        refill: fc.record({ interval: fc.constantFrom('daily' as const, 'monthly' as const), amount: fc.integer({ min: 1, max: 5 }) }),
      },
      { requiredKeys: ['remaining'] },
    ),
    ratelimits: attachedLimits,
    identity: fc.record({ externalId: fc.stringMatching(/^[A-Za-z0-9_.-]{1,12}$/), meta: fc.option(meta, { nil: undefined }), ratelimits: attachedLimits }),
  },
  { requiredKeys: [] },
);

const verification = fc.record(
  {
    cost: fc.integer({ min: 0, max: 3 }),
    ratelimits: fc.uniqueArray(
      fc.oneof(
        fc.record({ name: limitName }, { requiredKeys: ['name'] }),
        fc.record({ name: limitName, cost: fc.integer({ min: 0, max: 3 }) }),
        fc.record({ name: fc.constantFrom('inline-a', 'l1'), limit: fc.integer({ min: 1, max: 3 }), duration: fc.constantFrom(1_000, 60_000) }),
      ),
      { maxLength: 2, selector: (r) => r.name },
    ),
    permissions: fc.constantFrom('a.read', 'a.read AND b.write', 'b.write OR c.write', 'x'),
    advanceMs: fc.constantFrom(0, 500, 30_000, 86_400_000),
    unknownKey: fc.boolean(),
  },
  { requiredKeys: ['advanceMs'] },
);

describe('keys.verifyKey answer text', () => {
  test('the route answers through the data writer', () => {
    const data: VerifyKeyOutput = { valid: true, code: 'VALID', keyId: 'key_1', enabled: true };
    expect(route?.dataText?.(data)).toBe(verifyKeyOutputText(data));
  });

  test('the data writer gives the bytes JSON.stringify gives, for generated keys and verifications', () => {
    const codes = new Set<string>();
    assertProperty(
      fc.property(keyInput, fc.array(verification, { minLength: 1, maxLength: 6 }), (spec, verifications) => {
        const fx = makeEngine();
        const input: CreateKeyInput = { apiId: fx.apiId };
        if (spec.name !== undefined) input.name = spec.name;
        if (spec.meta !== undefined) input.meta = spec.meta;
        if (spec.permissions !== undefined) input.permissions = spec.permissions;
        if (spec.roles !== undefined) input.roles = spec.roles;
        if (spec.expiresInMs !== undefined) input.expires = fx.clock.now() + spec.expiresInMs;
        if (spec.enabled !== undefined) input.enabled = spec.enabled;
        if (spec.credits !== undefined) input.credits = spec.credits;
        if (spec.ratelimits !== undefined) input.ratelimits = spec.ratelimits;
        if (spec.identity !== undefined) input.externalId = spec.identity.externalId;
        const created = fx.engine.keys.createKey(fx.rootKey, input);
        // Inputs the engine refuses (e.g. an expiry in the past) verify as an unknown key.
        const key = created.ok ? created.value.key : 'sk_never_created';
        if (created.ok && spec.identity !== undefined) {
          const { externalId, meta: identityMeta, ratelimits } = spec.identity;
          unwrap(fx.engine.identities.updateIdentity(fx.rootKey, { externalId, ...(identityMeta === undefined ? {} : { meta: identityMeta }), ratelimits }));
        }
        for (const v of verifications) {
          if (v.advanceMs > 0) fx.clock.advance(v.advanceMs);
          const request: VerifyKeyInput = { key: v.unknownKey === true ? `${key}x` : key };
          if (v.cost !== undefined) request.credits = { cost: v.cost };
          if (v.ratelimits !== undefined) request.ratelimits = v.ratelimits;
          if (v.permissions !== undefined) request.permissions = v.permissions;
          const result = fx.engine.keys.verifyKey(fx.rootKey, request);
          // A named limit that exists nowhere is a 412, not an answer: nothing to write.
          if (!result.ok) continue;
          codes.add(result.value.code);
          expectSameText(result.value);
          if (route !== undefined) {
            const reply = { data: result.value };
            expect(replyText(route, 'req_0123456789abcdef000001', reply)).toBe(JSON.stringify(replyBody(route, 'req_0123456789abcdef000001', reply)));
          }
        }
      }),
      { numRuns: 300 },
    );
    // The generators reach most outcomes in 300 cases (the next test makes each one for certain).
    expect(codes.size).toBeGreaterThanOrEqual(4);
  });

  test('every outcome of a verification, made by the engine, is written as JSON.stringify writes it', () => {
    const fx = makeEngine();
    const create = (input: Omit<CreateKeyInput, 'apiId'>) => unwrap(fx.engine.keys.createKey(fx.rootKey, { apiId: fx.apiId, ...input })).key;
    const verify = (key: string, input: Omit<VerifyKeyInput, 'key'> = {}) => unwrap(fx.engine.keys.verifyKey(fx.rootKey, { key, ...input }));
    const full = create({
      name: 'n"\\',
      meta: { 'é"': ['\u2028', { x: null }] },
      permissions: ['a.read'],
      roles: ['r'],
      expires: fx.clock.now() + 60_000,
      credits: { remaining: 1, refill: { interval: 'daily', amount: 1 } },
      ratelimits: [{ name: 'l1', limit: 1, duration: 60_000, autoApply: true }],
      externalId: 'ext-1',
    });
    unwrap(
      fx.engine.identities.updateIdentity(fx.rootKey, { externalId: 'ext-1', meta: { tier: 'gold' }, ratelimits: [{ name: 'l2', limit: 5, duration: 1_000 }] }),
    );
    const outcomes = [
      verify(full, { ratelimits: [{ name: 'l2' }] }),
      verify(full, { credits: { cost: 0 }, ratelimits: [{ name: 'inline', limit: 1, duration: 1_000 }] }),
      verify(`${full}x`),
      verify(create({ enabled: false })),
      verify(full, { permissions: 'b.write' }),
      verify(create({ credits: { remaining: 0 } })),
    ];
    fx.clock.advance(61_000);
    outcomes.push(
      verify(full),
      verify(create({ credits: { remaining: 5 }, ratelimits: [{ name: 'l1', limit: 1, duration: 60_000 }] }), { ratelimits: [{ name: 'l1', cost: 2 }] }),
    );
    for (const out of outcomes) expectSameText(out);
    expect(new Set(outcomes.map((o) => o.code))).toEqual(
      new Set(['VALID', 'NOT_FOUND', 'DISABLED', 'EXPIRED', 'INSUFFICIENT_PERMISSIONS', 'RATE_LIMITED', 'USAGE_EXCEEDED']),
    );
  });

  test('numbers that are not finite (never in an answer) are left to JSON.stringify', () => {
    const out: VerifyKeyOutput = { valid: true, code: 'VALID', keyId: 'key_1', enabled: true, credits: Number.POSITIVE_INFINITY };
    expectSameText(out);
    expect(verifyKeyOutputText(out)).toContain('"credits":null');
    const limited: VerifyKeyOutput = {
      valid: false,
      code: 'RATE_LIMITED',
      ratelimits: [{ id: 'rl_1', name: 'n', limit: Number.NaN, duration: 1000, reset: 1, remaining: 0, exceeded: true, autoApply: false }],
    };
    expectSameText(limited);
  });

  test('hand-written answers: the smallest, every field, and an identity with limits', () => {
    expectSameText({ valid: false, code: 'NOT_FOUND' });
    expectSameText({
      valid: true,
      code: 'VALID',
      keyId: 'key_4WDWQmGsaTTrAHcvn',
      enabled: true,
      name: 'na"me\\\u0001',
      meta: { 'k"': ['\ud83d', { deep: null }], n: -0 },
      expires: 1795629660000,
      credits: 999999999999,
      permissions: ['a.read', 'ü'],
      roles: ['r\n'],
      identity: { id: 'id_1', externalId: 'ext', meta: { a: 1 }, ratelimits: [{ id: 'rl_1', name: 'x', limit: 1, duration: 1000, autoApply: true }] },
      ratelimits: [
        { id: 'rl_1', name: 'x', limit: 1, duration: 1000, reset: 1795629661000, remaining: 0, exceeded: false, autoApply: true },
        { id: 'inline_y"', name: 'y"', limit: 2, duration: 60000, reset: 1795629720000, remaining: 1, exceeded: true, autoApply: false },
      ],
    });
  });
});
