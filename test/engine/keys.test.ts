import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { BASE58_ALPHABET } from '../../src/engine/index.js';
import { errorCode, makeEngine, unwrap } from '../helpers/engine.js';

describe('keys.createKey', () => {
  it('returns prefix_base58 material once and keeps only its SHA-256 hash', () => {
    const fx = makeEngine();
    const created = unwrap(fx.engine.keys.createKey(fx.rootKey, { apiId: fx.apiId, prefix: 'sk_live' }));
    expect(created.keyId).toMatch(/^key_[1-9A-HJ-NP-Za-km-z]+$/);
    const [, material] = /^sk_live_(.+)$/.exec(created.key) ?? [];
    expect(material).toBeDefined();
    for (const ch of material ?? '') expect(BASE58_ALPHABET).toContain(ch);
    const snapshot = JSON.stringify(fx.engine.snapshot());
    expect(snapshot).not.toContain(created.key);
    expect(snapshot).toContain(createHash('sha256').update(created.key).digest('base64url'));
    const view = unwrap(fx.engine.keys.getKey(fx.rootKey, { keyId: created.keyId }));
    expect(view.start).toBe(created.key.slice(0, 'sk_live_'.length + 4));
    expect(created.key.startsWith(view.start)).toBe(true);
  });

  it('without a prefix the key is only the base58 material; byteLength sets its size', () => {
    const fx = makeEngine();
    const short = unwrap(fx.engine.keys.createKey(fx.rootKey, { apiId: fx.apiId }));
    const long = unwrap(fx.engine.keys.createKey(fx.rootKey, { apiId: fx.apiId, byteLength: 64 }));
    expect(short.key).toMatch(/^[1-9A-HJ-NP-Za-km-z]{20,23}$/);
    expect(long.key.length).toBeGreaterThan(80);
    expect(errorCode(fx.engine.keys.createKey(fx.rootKey, { apiId: fx.apiId, byteLength: 15 }))).toBe('err:service:application:invalid_input');
    expect(errorCode(fx.engine.keys.createKey(fx.rootKey, { apiId: fx.apiId, prefix: 'has space' }))).toBe('err:service:application:invalid_input');
    expect(errorCode(fx.engine.keys.createKey(fx.rootKey, { apiId: fx.apiId, prefix: 'x'.repeat(17) }))).toBe('err:service:application:invalid_input');
  });

  it('the same seed reproduces every id and key; another seed does not', () => {
    const run = (seed: number) => {
      const fx = makeEngine({ seed });
      const key = unwrap(fx.engine.keys.createKey(fx.rootKey, { apiId: fx.apiId, prefix: 'p' }));
      const identity = unwrap(fx.engine.identities.createIdentity(fx.rootKey, { externalId: 'u1' }));
      return [fx.rootKey, fx.workspaceId, fx.apiId, key.keyId, key.key, identity.identityId];
    };
    expect(run(5)).toEqual(run(5));
    expect(run(6)).not.toEqual(run(5));
  });

  it('answers 404 for an unknown API or one of another workspace, and 403 without create_key', () => {
    const fx = makeEngine();
    expect(errorCode(fx.engine.keys.createKey(fx.rootKey, { apiId: 'api_missing' }))).toBe('err:service:data:api_not_found');
    const other = unwrap(fx.engine.admin.createWorkspace({ name: 'other' }));
    expect(errorCode(fx.engine.keys.createKey(other.rootKey, { apiId: fx.apiId }))).toBe('err:service:data:api_not_found');
    const readOnly = unwrap(fx.engine.admin.createRootKey(fx.workspaceId, ['api.*.read_key'])).rootKey;
    expect(errorCode(fx.engine.keys.createKey(readOnly, { apiId: fx.apiId }))).toBe('err:service:authorization:insufficient_permissions');
    const scoped = unwrap(fx.engine.admin.createRootKey(fx.workspaceId, [`api.${fx.apiId}.create_key`])).rootKey;
    expect(fx.engine.keys.createKey(scoped, { apiId: fx.apiId }).ok).toBe(true);
  });

  it('answers each 412 condition with the detail that names it', () => {
    const fx = makeEngine();
    const detail = (result: ReturnType<typeof fx.engine.keys.createKey>) => {
      expect(errorCode(result)).toBe('err:service:application:precondition_failed');
      return result.ok ? '' : result.error.detail;
    };
    expect(detail(fx.engine.keys.createKey(fx.rootKey, { apiId: fx.apiId, recoverable: true }))).toBe("Vault hasn't been set up.");
    unwrap(fx.engine.admin.configureVault(fx.workspaceId, true));
    expect(detail(fx.engine.keys.createKey(fx.rootKey, { apiId: fx.apiId, recoverable: true }))).toBe('This API does not support key encryption.');
    unwrap(fx.engine.admin.configureApi(fx.workspaceId, { apiId: fx.apiId, encryption: true }));
    const recoverable = unwrap(fx.engine.keys.createKey(fx.rootKey, { apiId: fx.apiId, recoverable: true }));
    expect(unwrap(fx.engine.keys.getKey(fx.rootKey, { keyId: recoverable.keyId, decrypt: true })).plaintext).toBe(recoverable.key);
    unwrap(fx.engine.admin.configureApi(fx.workspaceId, { apiId: fx.apiId, keyAuth: false }));
    expect(detail(fx.engine.keys.createKey(fx.rootKey, { apiId: fx.apiId }))).toBe('The requested API is not set up to handle keys.');
  });

  it('getKey with decrypt answers 412 when the vault or encryption is missing', () => {
    const fx = makeEngine();
    const key = unwrap(fx.engine.keys.createKey(fx.rootKey, { apiId: fx.apiId }));
    expect(errorCode(fx.engine.keys.getKey(fx.rootKey, { keyId: key.keyId, decrypt: true }))).toBe('err:service:application:precondition_failed');
    expect(unwrap(fx.engine.keys.getKey(fx.rootKey, { keyId: key.keyId }))).not.toHaveProperty('plaintext');
  });

  it('externalId links the key to that identity, creating it when missing', () => {
    const fx = makeEngine();
    const key = unwrap(fx.engine.keys.createKey(fx.rootKey, { apiId: fx.apiId, externalId: 'acme' }));
    const identity = unwrap(fx.engine.identities.getIdentity(fx.rootKey, { identity: 'acme' }));
    expect(unwrap(fx.engine.keys.getKey(fx.rootKey, { keyId: key.keyId })).identity).toEqual(identity);
    const second = unwrap(fx.engine.keys.createKey(fx.rootKey, { apiId: fx.apiId, externalId: 'acme' }));
    expect(unwrap(fx.engine.keys.getKey(fx.rootKey, { keyId: second.keyId })).identity?.id).toBe(identity.id);
    expect(fx.engine.stats().identities).toBe(1);
  });
});

describe('keys.getKey', () => {
  it('shows the documented fields, omitting the unset ones', () => {
    const fx = makeEngine();
    const created = unwrap(
      fx.engine.keys.createKey(fx.rootKey, {
        apiId: fx.apiId,
        name: 'n',
        meta: { plan: 'pro' },
        permissions: ['a', 'a', 'b'],
        roles: ['admin'],
        expires: Date.UTC(2030, 0, 1),
        credits: { remaining: 5, refill: { interval: 'daily', amount: 5 } },
        ratelimits: [{ name: 'burst', limit: 5, duration: 1000, autoApply: true }],
      }),
    );
    const view = unwrap(fx.engine.keys.getKey(fx.rootKey, { keyId: created.keyId }));
    expect(view).toMatchObject({
      keyId: created.keyId,
      enabled: true,
      createdAt: fx.clock.now(),
      name: 'n',
      meta: { plan: 'pro' },
      permissions: ['a', 'b'],
      roles: ['admin'],
      expires: Date.UTC(2030, 0, 1),
      credits: { remaining: 5, refill: { interval: 'daily', amount: 5 } },
      ratelimits: [{ name: 'burst', limit: 5, duration: 1000, autoApply: true }],
    });
    expect(view.ratelimits?.[0]?.id).toMatch(/^rl_/);
    const bare = unwrap(fx.engine.keys.getKey(fx.rootKey, { keyId: unwrap(fx.engine.keys.createKey(fx.rootKey, { apiId: fx.apiId })).keyId }));
    expect(Object.keys(bare).sort()).toEqual(['createdAt', 'enabled', 'keyId', 'start']);
  });

  it('a key of another workspace does not exist for the caller', () => {
    const fx = makeEngine();
    const key = unwrap(fx.engine.keys.createKey(fx.rootKey, { apiId: fx.apiId }));
    const other = unwrap(fx.engine.admin.createWorkspace({}));
    expect(errorCode(fx.engine.keys.getKey(other.rootKey, { keyId: key.keyId }))).toBe('err:service:data:key_not_found');
  });
});

describe('keys.updateKey', () => {
  it('omitted = unchanged, null = cleared, value = set', () => {
    const fx = makeEngine();
    const { keyId } = unwrap(
      fx.engine.keys.createKey(fx.rootKey, { apiId: fx.apiId, name: 'a', meta: { x: 1 }, expires: Date.UTC(2031, 0, 1), permissions: ['p'] }),
    );
    unwrap(fx.engine.keys.updateKey(fx.rootKey, { keyId, meta: { y: 2 } }));
    expect(unwrap(fx.engine.keys.getKey(fx.rootKey, { keyId }))).toMatchObject({ name: 'a', meta: { y: 2 }, permissions: ['p'] });
    unwrap(fx.engine.keys.updateKey(fx.rootKey, { keyId, name: null, expires: null, permissions: null, enabled: false }));
    const view = unwrap(fx.engine.keys.getKey(fx.rootKey, { keyId }));
    expect(view).not.toHaveProperty('name');
    expect(view).not.toHaveProperty('expires');
    expect(view).not.toHaveProperty('permissions');
    expect(view).toMatchObject({ enabled: false, meta: { y: 2 } });
  });

  it('replacing rate limits keeps the id of a name that stays', () => {
    const fx = makeEngine();
    const { keyId } = unwrap(
      fx.engine.keys.createKey(fx.rootKey, {
        apiId: fx.apiId,
        ratelimits: [
          { name: 'a', limit: 1, duration: 1000 },
          { name: 'b', limit: 1, duration: 1000 },
        ],
      }),
    );
    const before = unwrap(fx.engine.keys.getKey(fx.rootKey, { keyId })).ratelimits ?? [];
    unwrap(
      fx.engine.keys.updateKey(fx.rootKey, {
        keyId,
        ratelimits: [
          { name: 'a', limit: 9, duration: 2000 },
          { name: 'c', limit: 1, duration: 1000 },
        ],
      }),
    );
    const after = unwrap(fx.engine.keys.getKey(fx.rootKey, { keyId })).ratelimits ?? [];
    expect(after.find((r) => r.name === 'a')).toEqual({ ...before.find((r) => r.name === 'a'), limit: 9, duration: 2000 });
    expect(after.map((r) => r.name)).toEqual(['a', 'c']);
    expect(
      errorCode(
        fx.engine.keys.updateKey(fx.rootKey, {
          keyId,
          ratelimits: [
            { name: 'a', limit: 1, duration: 1000 },
            { name: 'a', limit: 2, duration: 1000 },
          ],
        }),
      ),
    ).toBe('err:service:application:invalid_input');
  });

  it('a rejected update changes nothing', () => {
    const fx = makeEngine();
    const { keyId } = unwrap(fx.engine.keys.createKey(fx.rootKey, { apiId: fx.apiId, name: 'keep', credits: { remaining: 3 } }));
    const before = JSON.stringify(fx.engine.snapshot());
    expect(errorCode(fx.engine.keys.updateKey(fx.rootKey, { keyId, name: 'new', credits: { remaining: -4 } }))).toBe('err:service:application:invalid_input');
    expect(errorCode(fx.engine.keys.updateKey(fx.rootKey, { keyId: 'key_unknown', name: 'x' }))).toBe('err:service:data:key_not_found');
    expect(JSON.stringify(fx.engine.snapshot())).toBe(before);
  });

  it('externalId null unlinks the identity; a value links (and creates) it', () => {
    const fx = makeEngine();
    const { keyId } = unwrap(fx.engine.keys.createKey(fx.rootKey, { apiId: fx.apiId }));
    unwrap(fx.engine.keys.updateKey(fx.rootKey, { keyId, externalId: 'org-1' }));
    expect(unwrap(fx.engine.keys.getKey(fx.rootKey, { keyId })).identity?.externalId).toBe('org-1');
    unwrap(fx.engine.keys.updateKey(fx.rootKey, { keyId, externalId: null }));
    expect(unwrap(fx.engine.keys.getKey(fx.rootKey, { keyId }))).not.toHaveProperty('identity');
  });
});

describe('keys.deleteKey', () => {
  it('afterwards the key verifies NOT_FOUND and every key operation on it is 404', () => {
    const fx = makeEngine();
    const created = unwrap(fx.engine.keys.createKey(fx.rootKey, { apiId: fx.apiId, credits: { remaining: 5 } }));
    expect(unwrap(fx.engine.keys.deleteKey(fx.rootKey, { keyId: created.keyId }))).toEqual({});
    expect(unwrap(fx.engine.keys.verifyKey(undefined, { key: created.key }))).toEqual({ valid: false, code: 'NOT_FOUND' });
    const notFound = 'err:service:data:key_not_found';
    expect(errorCode(fx.engine.keys.getKey(fx.rootKey, { keyId: created.keyId }))).toBe(notFound);
    expect(errorCode(fx.engine.keys.updateKey(fx.rootKey, { keyId: created.keyId, name: 'x' }))).toBe(notFound);
    expect(errorCode(fx.engine.keys.updateCredits(fx.rootKey, { keyId: created.keyId, operation: 'set', value: 1 }))).toBe(notFound);
    expect(errorCode(fx.engine.keys.deleteKey(fx.rootKey, { keyId: created.keyId }))).toBe(notFound);
  });

  it('needs delete_key', () => {
    const fx = makeEngine();
    const { keyId } = unwrap(fx.engine.keys.createKey(fx.rootKey, { apiId: fx.apiId }));
    const reader = unwrap(fx.engine.admin.createRootKey(fx.workspaceId, ['api.*.read_key'])).rootKey;
    expect(errorCode(fx.engine.keys.deleteKey(reader, { keyId }))).toBe('err:service:authorization:insufficient_permissions');
    expect(fx.engine.keys.getKey(reader, { keyId }).ok).toBe(true);
  });
});
