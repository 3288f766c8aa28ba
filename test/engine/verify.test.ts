/**
 * keys.verifyKey (docs/service-model.md#verification-order): the order of the checks, the fields of each outcome, rate
 * limits of keys and identities during verification, authentication, and the permission query.
 */
import { describe, expect, it } from 'vitest';
import { type CreateKeyInput, type PermissionQuery, type VerifyKeyInput, parsePermissionQuery, satisfiesPermissionQuery } from '../../src/engine/index.js';
import { errorCode, makeEngine, unwrap } from '../helpers/engine.js';

const MINUTE = 60_000;

function setup(options: { compat?: 'interface' | 'production' } = {}) {
  const fx = makeEngine(options);
  const create = (input: Omit<CreateKeyInput, 'apiId'> = {}) => unwrap(fx.engine.keys.createKey(fx.rootKey, { apiId: fx.apiId, ...input }));
  const verify = (key: string, input: Omit<VerifyKeyInput, 'key'> = {}, rootKey?: string) => fx.engine.keys.verifyKey(rootKey, { key, ...input });
  const check = (key: string, input: Omit<VerifyKeyInput, 'key'> = {}, rootKey?: string) => unwrap(verify(key, input, rootKey));
  /** Moves the clock to the start of a window two windows on, where nothing of the past counts. */
  const clearWindows = (durationMs = MINUTE) => fx.clock.set((Math.floor(fx.clock.now() / durationMs) + 2) * durationMs);
  return { ...fx, create, verify, check, clearWindows };
}

describe('NOT_FOUND', () => {
  it('an unknown key: the body has only valid and code', () => {
    const fx = setup();
    expect(fx.check('not-a-key')).toEqual({ valid: false, code: 'NOT_FOUND' });
    expect(fx.check('not-a-key', {}, fx.rootKey)).toEqual({ valid: false, code: 'NOT_FOUND' });
  });

  it('a deleted key', () => {
    const fx = setup();
    const { key, keyId } = fx.create({ credits: { remaining: 5 } });
    expect(fx.check(key).code).toBe('VALID');
    expect(unwrap(fx.engine.keys.deleteKey(fx.rootKey, { keyId }))).toEqual({});
    expect(fx.check(key)).toEqual({ valid: false, code: 'NOT_FOUND' });
    expect(fx.check(key, {}, fx.rootKey)).toEqual({ valid: false, code: 'NOT_FOUND' });
  });

  it('a key of another workspace, when that workspace\u2019s root key is not the one sent', () => {
    const fx = setup();
    const { key } = fx.create({ credits: { remaining: 5 } });
    const other = unwrap(fx.engine.admin.createWorkspace({ name: 'other' }));
    expect(fx.check(key, {}, other.rootKey)).toEqual({ valid: false, code: 'NOT_FOUND' });
    // Nothing was consumed by the refused call.
    expect(fx.check(key, {}, fx.rootKey)).toMatchObject({ valid: true, credits: 4 });
  });

  it('a root key without api.*.verify_key gets NOT_FOUND, not 403', () => {
    const fx = setup();
    const { key } = fx.create({ credits: { remaining: 5 } });
    const reader = unwrap(fx.engine.admin.createRootKey(fx.workspaceId, ['api.*.read_key', 'api.*.create_key'])).rootKey;
    const result = fx.verify(key, {}, reader);
    expect(result.ok).toBe(true);
    expect(unwrap(result)).toEqual({ valid: false, code: 'NOT_FOUND' });
    const elsewhere = unwrap(fx.engine.admin.createRootKey(fx.workspaceId, ['api.api_other.verify_key'])).rootKey;
    expect(fx.check(key, {}, elsewhere)).toEqual({ valid: false, code: 'NOT_FOUND' });
    expect(fx.check(key, {}, fx.rootKey).credits).toBe(4);
  });

  it('api.*.verify_key and api.<apiId>.verify_key may verify', () => {
    const fx = setup();
    const { key } = fx.create();
    const any = unwrap(fx.engine.admin.createRootKey(fx.workspaceId, ['api.*.verify_key'])).rootKey;
    const one = unwrap(fx.engine.admin.createRootKey(fx.workspaceId, [`api.${fx.apiId}.verify_key`])).rootKey;
    expect(fx.check(key, {}, any)).toMatchObject({ valid: true, code: 'VALID' });
    expect(fx.check(key, {}, one)).toMatchObject({ valid: true, code: 'VALID' });
  });

  it('NOT_FOUND comes before every other check (a disabled, expired key of another workspace)', () => {
    const fx = setup();
    const { key } = fx.create({ enabled: false, expires: fx.clock.now() - 1 });
    const other = unwrap(fx.engine.admin.createWorkspace({}));
    expect(fx.check(key, { permissions: 'nothing' }, other.rootKey)).toEqual({ valid: false, code: 'NOT_FOUND' });
  });
});

// The fields of a VALID answer are the contract's case 'keys.verifyKey: a VALID result carries the
// key and its identity' (test/contract/contract.ts), which runs on the engine as well as over HTTP.
describe('VALID', () => {
  it('an unlimited key reports no credits', () => {
    const fx = setup();
    const { key } = fx.create();
    const result = fx.check(key, { credits: { cost: 5 } });
    expect(result).toMatchObject({ valid: true, code: 'VALID' });
    expect(result).not.toHaveProperty('credits');
  });
});

describe('DISABLED', () => {
  it('enabled: false → DISABLED, valid false, no credits consumed', () => {
    const fx = setup();
    const { key, keyId } = fx.create({ enabled: false, credits: { remaining: 3 } });
    expect(fx.check(key)).toMatchObject({ valid: false, code: 'DISABLED', keyId, enabled: false, credits: 3 });
    unwrap(fx.engine.keys.updateKey(fx.rootKey, { keyId, enabled: true }));
    expect(fx.check(key)).toMatchObject({ valid: true, code: 'VALID', credits: 2 });
  });
});

describe('EXPIRED', () => {
  it('valid up to and including the instant of expiry, EXPIRED 1 ms after', () => {
    const fx = setup();
    const expires = fx.clock.now() + 1_000;
    const { key } = fx.create({ expires, credits: { remaining: 5 } });
    expect(fx.check(key)).toMatchObject({ valid: true, code: 'VALID', expires });
    fx.clock.set(expires);
    expect(fx.check(key)).toMatchObject({ valid: true, code: 'VALID', credits: 3 });
    fx.clock.set(expires + 1);
    expect(fx.check(key)).toMatchObject({ valid: false, code: 'EXPIRED', expires, credits: 3 });
  });
});

describe('INSUFFICIENT_PERMISSIONS', () => {
  it('the query must be satisfied by the key\u2019s permissions', () => {
    const fx = setup();
    const { key } = fx.create({ permissions: ['a', 'b'], credits: { remaining: 100 } });
    const code = (permissions: string) => fx.check(key, { permissions }).code;
    expect(code('a')).toBe('VALID');
    expect(code('c')).toBe('INSUFFICIENT_PERMISSIONS');
    expect(code('a AND b')).toBe('VALID');
    expect(code('a AND c')).toBe('INSUFFICIENT_PERMISSIONS');
    expect(code('a OR c')).toBe('VALID');
    expect(code('c OR d')).toBe('INSUFFICIENT_PERMISSIONS');
    expect(code('(c OR a) AND b')).toBe('VALID');
    expect(code('(c OR a) AND d')).toBe('INSUFFICIENT_PERMISSIONS');
    expect(code('c AND (a OR b)')).toBe('INSUFFICIENT_PERMISSIONS');
    expect(code('((a))')).toBe('VALID');
  });

  it('AND binds tighter than OR', () => {
    const fx = setup();
    const { key } = fx.create({ permissions: ['x'] });
    const code = (permissions: string) => fx.check(key, { permissions }).code;
    // (y AND z) OR x — true; y AND (z OR x) would be false.
    expect(code('y AND z OR x')).toBe('VALID');
    // x OR (y AND z) — true; (x OR y) AND z would be false.
    expect(code('x OR y AND z')).toBe('VALID');
    // Parentheses override it.
    expect(code('(x OR y) AND z')).toBe('INSUFFICIENT_PERMISSIONS');
    expect(code('y AND (z OR x)')).toBe('INSUFFICIENT_PERMISSIONS');
  });

  it('`*` is a literal character, not a wildcard', () => {
    const fx = setup();
    const star = fx.create({ permissions: ['api.*'] }).key;
    expect(fx.check(star, { permissions: 'api.*' }).code).toBe('VALID');
    expect(fx.check(star, { permissions: 'api.read' }).code).toBe('INSUFFICIENT_PERMISSIONS');
    const all = fx.create({ permissions: ['*'] }).key;
    expect(fx.check(all, { permissions: 'anything' }).code).toBe('INSUFFICIENT_PERMISSIONS');
    expect(fx.check(all, { permissions: '*' }).code).toBe('VALID');
    const plain = fx.create({ permissions: ['api.read'] }).key;
    expect(fx.check(plain, { permissions: 'api.*' }).code).toBe('INSUFFICIENT_PERMISSIONS');
  });

  it('a key without permissions fails any query', () => {
    const fx = setup();
    const { key } = fx.create();
    expect(fx.check(key, { permissions: 'a' })).toMatchObject({ valid: false, code: 'INSUFFICIENT_PERMISSIONS' });
  });

  it('consumes neither credits nor rate-limit tokens', () => {
    const fx = setup();
    const { key } = fx.create({ permissions: ['a'], credits: { remaining: 2 }, ratelimits: [{ name: 'rl', limit: 1, duration: MINUTE, autoApply: true }] });
    expect(fx.check(key, { permissions: 'b' })).toMatchObject({ code: 'INSUFFICIENT_PERMISSIONS', credits: 2 });
    expect(fx.check(key, { permissions: 'a' })).toMatchObject({ code: 'VALID', credits: 1 });
  });

  it.each(['a AND', '(a', 'a)', 'a b', 'AND a', 'a OR OR b', '()', '', '   '])('a syntax error (%j) → 400 invalid_input', (query) => {
    const fx = setup();
    const { key } = fx.create({ permissions: ['a', 'b'], credits: { remaining: 5 } });
    const result = fx.verify(key, { permissions: query });
    expect(errorCode(result)).toBe('err:service:application:invalid_input');
    if (!result.ok) expect(result.error.errors?.[0]?.location).toBe('body.permissions');
    expect(fx.check(key).credits).toBe(4);
  });
});

describe('RATE_LIMITED', () => {
  it('consumes no credits and reports the limits', () => {
    const fx = setup();
    const { key } = fx.create({ credits: { remaining: 10 }, ratelimits: [{ name: 'rl', limit: 1, duration: MINUTE, autoApply: true }] });
    const first = fx.check(key);
    expect(first).toMatchObject({ valid: true, code: 'VALID', credits: 9 });
    expect(first.ratelimits).toEqual([
      {
        id: expect.stringMatching(/^rl_/),
        name: 'rl',
        limit: 1,
        duration: MINUTE,
        reset: (Math.floor(fx.clock.now() / MINUTE) + 1) * MINUTE,
        remaining: 0,
        exceeded: false,
        autoApply: true,
      },
    ]);
    const limited = fx.check(key);
    expect(limited).toMatchObject({ valid: false, code: 'RATE_LIMITED', credits: 9 });
    expect(limited.ratelimits).toMatchObject([{ name: 'rl', remaining: 0, exceeded: true }]);
    expect(fx.check(key, { credits: { cost: 5 } })).toMatchObject({ code: 'RATE_LIMITED', credits: 9 });
    fx.clearWindows();
    expect(fx.check(key)).toMatchObject({ valid: true, code: 'VALID', credits: 8 });
  });

  it('a named limit is checked with the request\u2019s cost', () => {
    const fx = setup();
    const { key } = fx.create({ ratelimits: [{ name: 'heavy', limit: 10, duration: MINUTE }] });
    expect(fx.check(key, { ratelimits: [{ name: 'heavy', cost: 7 }] }).ratelimits).toMatchObject([{ name: 'heavy', remaining: 3, autoApply: false }]);
    expect(fx.check(key, { ratelimits: [{ name: 'heavy', cost: 4 }] }).code).toBe('RATE_LIMITED');
    expect(fx.check(key, { ratelimits: [{ name: 'heavy', cost: 3 }] }).code).toBe('VALID');
    expect(fx.check(key, { ratelimits: [{ name: 'heavy', cost: 0 }] }).code).toBe('VALID');
    // Not auto-applied: without naming it the limit is not checked.
    const unnamed = fx.check(key);
    expect(unnamed.code).toBe('VALID');
    expect(unnamed).not.toHaveProperty('ratelimits');
  });

  it('an auto-applied limit that is also named is checked once, with the request’s cost', () => {
    const fx = setup();
    const { key } = fx.create({ ratelimits: [{ name: 'auto', limit: 5, duration: MINUTE, autoApply: true }] });
    const named = fx.check(key, { ratelimits: [{ name: 'auto', cost: 3 }] });
    expect(named.ratelimits).toMatchObject([{ name: 'auto', remaining: 2, autoApply: true }]);
    expect(named.ratelimits).toHaveLength(1);
    expect(fx.check(key).ratelimits).toMatchObject([{ name: 'auto', remaining: 1 }]);
    expect(fx.check(key, { ratelimits: [{ name: 'auto', cost: 2 }] }).code).toBe('RATE_LIMITED');
  });

  it('several limits are all or nothing', () => {
    const fx = setup();
    const { key } = fx.create({
      ratelimits: [
        { name: 'small', limit: 1, duration: MINUTE },
        { name: 'big', limit: 5, duration: MINUTE },
      ],
    });
    fx.check(key, { ratelimits: [{ name: 'small' }] });
    const refused = fx.check(key, { ratelimits: [{ name: 'big' }, { name: 'small' }] });
    expect(refused.code).toBe('RATE_LIMITED');
    expect(refused.ratelimits?.map((r) => [r.name, r.exceeded])).toEqual([
      ['big', false],
      ['small', true],
    ]);
    // 'big' consumed nothing.
    expect(fx.check(key, { ratelimits: [{ name: 'big', cost: 5 }] }).code).toBe('VALID');
  });

  it('an inline limit (limit + duration) counts per key for that name', () => {
    const fx = setup();
    const a = fx.create().key;
    const b = fx.create().key;
    const inline = { ratelimits: [{ name: 'burst', limit: 2, duration: MINUTE }] };
    expect(fx.check(a, inline).code).toBe('VALID');
    expect(fx.check(a, inline).code).toBe('VALID');
    expect(fx.check(a, inline).code).toBe('RATE_LIMITED');
    expect(fx.check(b, inline).code).toBe('VALID');
  });

  it('an unknown named limit without inline limit + duration → 412 precondition_failed, consuming nothing', () => {
    const fx = setup();
    const { key } = fx.create({ credits: { remaining: 5 }, ratelimits: [{ name: 'auto', limit: 1, duration: MINUTE, autoApply: true }] });
    expect(errorCode(fx.verify(key, { ratelimits: [{ name: 'nope' }] }))).toBe('err:service:application:precondition_failed');
    expect(errorCode(fx.verify(key, { ratelimits: [{ name: 'nope', limit: 5 }] }))).toBe('err:service:application:precondition_failed');
    expect(errorCode(fx.verify(key, { ratelimits: [{ name: 'nope', duration: MINUTE }] }))).toBe('err:service:application:precondition_failed');
    expect(fx.check(key)).toMatchObject({ code: 'VALID', credits: 4 });
    // Also for a key without any limits of its own.
    const bare = fx.create().key;
    expect(errorCode(fx.verify(bare, { ratelimits: [{ name: 'nope', cost: 0 }] }))).toBe('err:service:application:precondition_failed');
  });
});

describe('USAGE_EXCEEDED', () => {
  it('5 remaining rejects cost 10 and reports 5; cost 5 then passes', () => {
    const fx = setup();
    const { key } = fx.create({ credits: { remaining: 5 } });
    expect(fx.check(key, { credits: { cost: 10 } })).toMatchObject({ valid: false, code: 'USAGE_EXCEEDED', credits: 5 });
    expect(fx.check(key, { credits: { cost: 0 } })).toMatchObject({ valid: true, code: 'VALID', credits: 5 });
    expect(fx.check(key, { credits: { cost: 5 } })).toMatchObject({ valid: true, code: 'VALID', credits: 0 });
    expect(fx.check(key)).toMatchObject({ valid: false, code: 'USAGE_EXCEEDED', credits: 0 });
  });

  it('still consumed its rate-limit tokens', () => {
    const fx = setup();
    const { key } = fx.create({ credits: { remaining: 1 }, ratelimits: [{ name: 'rl', limit: 2, duration: MINUTE, autoApply: true }] });
    expect(fx.check(key)).toMatchObject({ code: 'VALID', credits: 0 });
    const exceeded = fx.check(key);
    expect(exceeded).toMatchObject({ code: 'USAGE_EXCEEDED', credits: 0 });
    expect(exceeded.ratelimits).toMatchObject([{ name: 'rl', remaining: 0, exceeded: false }]);
    // Both tokens are used: the next one is rate limited.
    expect(fx.check(key)).toMatchObject({ code: 'RATE_LIMITED', credits: 0 });
  });
});

describe('order of the checks when several apply', () => {
  it('DISABLED before EXPIRED before INSUFFICIENT_PERMISSIONS before RATE_LIMITED before USAGE_EXCEEDED', () => {
    const fx = setup();
    const past = fx.clock.now() - 1;
    const rl = [{ name: 'rl', limit: 1, duration: MINUTE, autoApply: true }];
    const everything = fx.create({ enabled: false, expires: past, permissions: ['a'], credits: { remaining: 0 }, ratelimits: rl });
    expect(fx.check(everything.key, { permissions: 'b' }).code).toBe('DISABLED');

    const expired = fx.create({ expires: past, permissions: ['a'], credits: { remaining: 0 }, ratelimits: rl });
    expect(fx.check(expired.key, { permissions: 'b' }).code).toBe('EXPIRED');

    const forbidden = fx.create({ permissions: ['a'], credits: { remaining: 0 }, ratelimits: rl });
    expect(fx.check(forbidden.key)).toMatchObject({ code: 'USAGE_EXCEEDED' }); // uses the only token
    expect(fx.check(forbidden.key, { permissions: 'b' }).code).toBe('INSUFFICIENT_PERMISSIONS');
    expect(fx.check(forbidden.key, { permissions: 'a' }).code).toBe('RATE_LIMITED');
  });

  it('disabled and expired → DISABLED; the disabled check does not consume credits', () => {
    const fx = setup();
    const { key } = fx.create({ enabled: false, expires: fx.clock.now() - 1, credits: { remaining: 3 } });
    expect(fx.check(key)).toMatchObject({ valid: false, code: 'DISABLED', credits: 3 });
  });
});

describe('identities', () => {
  it('identity limits are shared by every key of the identity; key limits count per key', () => {
    const fx = setup();
    unwrap(
      fx.engine.identities.createIdentity(fx.rootKey, {
        externalId: 'acme',
        ratelimits: [{ name: 'org', limit: 3, duration: MINUTE, autoApply: true }],
      }),
    );
    const perKey = [{ name: 'own', limit: 2, duration: MINUTE }];
    const k1 = fx.create({ externalId: 'acme', ratelimits: perKey }).key;
    const k2 = fx.create({ externalId: 'acme', ratelimits: perKey }).key;
    expect(fx.check(k1, { ratelimits: [{ name: 'own' }] }).code).toBe('VALID');
    expect(fx.check(k1, { ratelimits: [{ name: 'own' }] }).code).toBe('VALID');
    // k1's own limit is used up; k2's is not, but the identity has one token left.
    expect(fx.check(k1, { ratelimits: [{ name: 'own' }] }).code).toBe('RATE_LIMITED');
    expect(fx.check(k2, { ratelimits: [{ name: 'own' }] }).code).toBe('VALID');
    expect(fx.check(k2).code).toBe('RATE_LIMITED');
    expect(fx.check(k1).code).toBe('RATE_LIMITED');
  });

  it('a named identity limit is checked with the request\u2019s cost, shared across keys', () => {
    const fx = setup();
    unwrap(fx.engine.identities.createIdentity(fx.rootKey, { externalId: 'acme', ratelimits: [{ name: 'tokens', limit: 10, duration: MINUTE }] }));
    const k1 = fx.create({ externalId: 'acme' }).key;
    const k2 = fx.create({ externalId: 'acme' }).key;
    expect(fx.check(k1, { ratelimits: [{ name: 'tokens', cost: 6 }] }).code).toBe('VALID');
    expect(fx.check(k2, { ratelimits: [{ name: 'tokens', cost: 5 }] }).code).toBe('RATE_LIMITED');
    expect(fx.check(k2, { ratelimits: [{ name: 'tokens', cost: 4 }] })).toMatchObject({ code: 'VALID', ratelimits: [{ name: 'tokens', remaining: 0 }] });
  });

  it('a key limit wins over an identity limit of the same name', () => {
    const fx = setup();
    unwrap(fx.engine.identities.createIdentity(fx.rootKey, { externalId: 'acme', ratelimits: [{ name: 'x', limit: 5, duration: MINUTE, autoApply: true }] }));
    const created = fx.create({ externalId: 'acme', ratelimits: [{ name: 'x', limit: 1, duration: MINUTE }] });
    const keyLimitId = unwrap(fx.engine.keys.getKey(fx.rootKey, { keyId: created.keyId })).ratelimits?.[0]?.id;
    expect(keyLimitId).toMatch(/^rl_/);
    const named = fx.check(created.key, { ratelimits: [{ name: 'x' }] });
    expect(named.code).toBe('VALID');
    expect(named.ratelimits).toEqual([expect.objectContaining({ id: keyLimitId, name: 'x', limit: 1, remaining: 0 })]);
    expect(fx.check(created.key, { ratelimits: [{ name: 'x' }] }).code).toBe('RATE_LIMITED');
  });

  it('a deleted identity: the key verifies without identity fields and without its limits', () => {
    const fx = setup();
    const { identityId } = unwrap(
      fx.engine.identities.createIdentity(fx.rootKey, {
        externalId: 'acme',
        ratelimits: [
          { name: 'org', limit: 1, duration: MINUTE, autoApply: true },
          { name: 'named', limit: 5, duration: MINUTE },
        ],
      }),
    );
    const { key } = fx.create({ externalId: 'acme' });
    const before = fx.check(key);
    expect(before).toMatchObject({ code: 'VALID', identity: { id: identityId, externalId: 'acme' } });
    expect(fx.check(key).code).toBe('RATE_LIMITED');
    unwrap(fx.engine.identities.deleteIdentity(fx.rootKey, { identity: identityId }));
    const after = fx.check(key);
    expect(after).toMatchObject({ valid: true, code: 'VALID' });
    expect(after).not.toHaveProperty('identity');
    expect(after).not.toHaveProperty('ratelimits');
    expect(errorCode(fx.verify(key, { ratelimits: [{ name: 'named' }] }))).toBe('err:service:application:precondition_failed');
  });

  it('a new identity reusing the deleted one’s externalId does not adopt its keys', () => {
    const fx = setup();
    const { identityId } = unwrap(fx.engine.identities.createIdentity(fx.rootKey, { externalId: 'acme' }));
    const { key } = fx.create({ externalId: 'acme' });
    unwrap(fx.engine.identities.deleteIdentity(fx.rootKey, { identity: 'acme' }));
    const fresh = unwrap(
      fx.engine.identities.createIdentity(fx.rootKey, { externalId: 'acme', ratelimits: [{ name: 'org', limit: 1, duration: MINUTE, autoApply: true }] }),
    );
    expect(fresh.identityId).not.toBe(identityId);
    for (let i = 0; i < 3; i++) {
      const result = fx.check(key);
      expect(result.code).toBe('VALID');
      expect(result).not.toHaveProperty('identity');
    }
  });
});

describe('authentication', () => {
  it('works without a root key', () => {
    const fx = setup();
    const { key } = fx.create();
    expect(fx.check(key, {}, undefined)).toMatchObject({ valid: true, code: 'VALID' });
  });

  it('an unknown root key → 401 authentication:key_not_found, also for an unknown key', () => {
    const fx = setup();
    const { key } = fx.create({ credits: { remaining: 2 } });
    expect(errorCode(fx.verify(key, {}, 'root_unknown'))).toBe('err:service:authentication:key_not_found');
    expect(errorCode(fx.verify('nope', {}, 'root_unknown'))).toBe('err:service:authentication:key_not_found');
    expect(fx.check(key).credits).toBe(1);
  });

  it("compat 'production' requires a root key: none → 400 authentication:missing", () => {
    const fx = setup({ compat: 'production' });
    const { key } = fx.create();
    expect(errorCode(fx.verify(key))).toBe('err:service:authentication:missing');
    expect(fx.check(key, {}, fx.rootKey)).toMatchObject({ valid: true, code: 'VALID' });
  });
});

describe('request validation', () => {
  it.each<[string, Omit<VerifyKeyInput, 'key'>, string]>([
    ['credits.cost −1', { credits: { cost: -1 } }, 'body.credits.cost'],
    ['credits.cost 1.5', { credits: { cost: 1.5 } }, 'body.credits.cost'],
    ['credits.cost above 1e12', { credits: { cost: 1e12 + 1 } }, 'body.credits.cost'],
    ['ratelimits[0].cost −1', { ratelimits: [{ name: 'r', cost: -1 }] }, 'body.ratelimits[0].cost'],
    ['ratelimits[0].limit 0', { ratelimits: [{ name: 'r', limit: 0, duration: MINUTE }] }, 'body.ratelimits[0].limit'],
    ['ratelimits[0].duration 999', { ratelimits: [{ name: 'r', limit: 1, duration: 999 }] }, 'body.ratelimits[0].duration'],
  ])('%s → 400 invalid_input', (_, input, location) => {
    const fx = setup();
    const { key } = fx.create();
    const result = fx.verify(key, input);
    expect(errorCode(result)).toBe('err:service:application:invalid_input');
    if (!result.ok) expect(result.error.errors?.[0]?.location).toBe(location);
  });
});

describe('parsePermissionQuery / satisfiesPermissionQuery', () => {
  const parse = (text: string): PermissionQuery => unwrap(parsePermissionQuery(text));
  const name = (n: string): PermissionQuery => ({ kind: 'name', name: n });

  it('parses a name, AND, OR and parentheses', () => {
    expect(parse('a.read')).toEqual(name('a.read'));
    expect(parse('  a.read  ')).toEqual(name('a.read'));
    expect(parse('a AND b AND c')).toEqual({ kind: 'and', parts: [name('a'), name('b'), name('c')] });
    expect(parse('a OR b')).toEqual({ kind: 'or', parts: [name('a'), name('b')] });
    expect(parse('(a)')).toEqual(name('a'));
    expect(parse('a AND(b OR c)')).toEqual({ kind: 'and', parts: [name('a'), { kind: 'or', parts: [name('b'), name('c')] }] });
  });

  it('AND binds tighter than OR', () => {
    expect(parse('a OR b AND c')).toEqual({ kind: 'or', parts: [name('a'), { kind: 'and', parts: [name('b'), name('c')] }] });
    expect(parse('a AND b OR c')).toEqual({ kind: 'or', parts: [{ kind: 'and', parts: [name('a'), name('b')] }, name('c')] });
    expect(parse('(a OR b) AND c')).toEqual({ kind: 'and', parts: [{ kind: 'or', parts: [name('a'), name('b')] }, name('c')] });
  });

  it('keeps `*` as part of a name', () => {
    expect(parse('api.*.read OR *')).toEqual({ kind: 'or', parts: [name('api.*.read'), name('*')] });
  });

  it.each(['', ' ', 'a AND', 'OR a', '(a', 'a)', 'a b', '(a OR) b', 'a AND AND b', ')('])('rejects %j with a 400 on body.permissions', (text) => {
    const result = parsePermissionQuery(text);
    expect(errorCode(result)).toBe('err:service:application:invalid_input');
    if (!result.ok) expect(result.error.errors?.[0]?.location).toBe('body.permissions');
  });

  it('evaluates against an array or a set of held permissions', () => {
    const q = parse('(a OR b) AND c OR d');
    for (const held of [['a', 'c'], new Set(['b', 'c']), ['d'], new Set(['d'])]) expect(satisfiesPermissionQuery(q, held)).toBe(true);
    for (const held of [['a', 'b'], new Set(['c']), [], new Set<string>(), ['*']]) expect(satisfiesPermissionQuery(q, held)).toBe(false);
  });

  it('a name matches only exactly', () => {
    expect(satisfiesPermissionQuery(parse('api.*'), ['api.read'])).toBe(false);
    expect(satisfiesPermissionQuery(parse('api.read'), ['api.*'])).toBe(false);
    expect(satisfiesPermissionQuery(parse('api.read'), ['API.read'])).toBe(false);
    expect(satisfiesPermissionQuery(parse('api.read'), ['api.read'])).toBe(true);
  });
});
