import { describe, expect, it } from 'vitest';
import { errorCode, makeEngine, unwrap } from '../helpers/engine.js';

describe('identities', () => {
  it('create, get by id or externalId, update (replace) and delete', () => {
    const fx = makeEngine();
    const { identityId } = unwrap(
      fx.engine.identities.createIdentity(fx.rootKey, {
        externalId: 'user_1',
        meta: { tier: 'gold' },
        ratelimits: [{ name: 'req', limit: 10, duration: 60_000 }],
      }),
    );
    expect(identityId).toMatch(/^id_/);
    const byId = unwrap(fx.engine.identities.getIdentity(fx.rootKey, { identity: identityId }));
    expect(byId).toEqual(unwrap(fx.engine.identities.getIdentity(fx.rootKey, { identity: 'user_1' })));
    expect(byId).toMatchObject({
      id: identityId,
      externalId: 'user_1',
      meta: { tier: 'gold' },
      ratelimits: [{ name: 'req', limit: 10, duration: 60_000, autoApply: false }],
    });
    const rlId = byId.ratelimits?.[0]?.id;
    expect(rlId).toMatch(/^rl_/);

    const updated = unwrap(
      fx.engine.identities.updateIdentity(fx.rootKey, {
        identity: 'user_1',
        meta: { tier: 'silver' },
        ratelimits: [{ name: 'req', limit: 20, duration: 60_000 }],
      }),
    );
    expect(updated).toEqual({
      id: identityId,
      externalId: 'user_1',
      meta: { tier: 'silver' },
      ratelimits: [{ id: rlId, name: 'req', limit: 20, duration: 60_000, autoApply: false }],
    });
    const cleared = unwrap(fx.engine.identities.updateIdentity(fx.rootKey, { identity: identityId, ratelimits: [] }));
    expect(cleared).not.toHaveProperty('ratelimits');
    expect(cleared.meta).toEqual({ tier: 'silver' });

    expect(unwrap(fx.engine.identities.deleteIdentity(fx.rootKey, { identity: identityId }))).toEqual({});
    expect(errorCode(fx.engine.identities.getIdentity(fx.rootKey, { identity: identityId }))).toBe('err:service:data:identity_not_found');
    expect(errorCode(fx.engine.identities.deleteIdentity(fx.rootKey, { identity: 'user_1' }))).toBe('err:service:data:identity_not_found');
  });

  it('409 on a live duplicate externalId (case-sensitive); a deleted one may be reused', () => {
    const fx = makeEngine();
    const first = unwrap(fx.engine.identities.createIdentity(fx.rootKey, { externalId: 'dup' }));
    expect(errorCode(fx.engine.identities.createIdentity(fx.rootKey, { externalId: 'dup' }))).toBe('err:service:data:identity_already_exists');
    expect(fx.engine.identities.createIdentity(fx.rootKey, { externalId: 'DUP' }).ok).toBe(true);
    unwrap(fx.engine.identities.deleteIdentity(fx.rootKey, { identity: first.identityId }));
    const second = unwrap(fx.engine.identities.createIdentity(fx.rootKey, { externalId: 'dup' }));
    expect(second.identityId).not.toBe(first.identityId);
    const other = unwrap(fx.engine.admin.createWorkspace({}));
    expect(fx.engine.identities.createIdentity(other.rootKey, { externalId: 'dup' }).ok).toBe(true);
  });

  it('v1 references: identityId looks up ids only, externalId externalIds only', () => {
    const fx = makeEngine();
    const { identityId } = unwrap(fx.engine.identities.createIdentity(fx.rootKey, { externalId: 'ext' }));
    expect(unwrap(fx.engine.identities.getIdentity(fx.rootKey, { identityId })).externalId).toBe('ext');
    expect(unwrap(fx.engine.identities.getIdentity(fx.rootKey, { externalId: 'ext' })).id).toBe(identityId);
    expect(errorCode(fx.engine.identities.getIdentity(fx.rootKey, { identityId: 'ext' }))).toBe('err:service:data:identity_not_found');
    expect(errorCode(fx.engine.identities.getIdentity(fx.rootKey, { externalId: identityId }))).toBe('err:service:data:identity_not_found');
    expect(errorCode(fx.engine.identities.getIdentity(fx.rootKey, {}))).toBe('err:service:application:invalid_input');
  });

  it('rejects bad externalIds and duplicate rate-limit names', () => {
    const fx = makeEngine();
    for (const externalId of ['', 'has space', 'x'.repeat(256), 'emoji✓']) {
      expect(errorCode(fx.engine.identities.createIdentity(fx.rootKey, { externalId }))).toBe('err:service:application:invalid_input');
    }
    const dupes = [
      { name: 'a', limit: 1, duration: 1000 },
      { name: 'a', limit: 2, duration: 1000 },
    ];
    expect(errorCode(fx.engine.identities.createIdentity(fx.rootKey, { externalId: 'ok', ratelimits: dupes }))).toBe('err:service:application:invalid_input');
    unwrap(fx.engine.identities.createIdentity(fx.rootKey, { externalId: 'ok' }));
    expect(errorCode(fx.engine.identities.updateIdentity(fx.rootKey, { identity: 'ok', ratelimits: dupes }))).toBe('err:service:application:invalid_input');
    expect(fx.engine.stats().identities).toBe(1);
  });

  it('lists in id order, page by page, with a cursor only while more pages exist, and a total', () => {
    const fx = makeEngine();
    const ids = Array.from({ length: 23 }, (_, i) => unwrap(fx.engine.identities.createIdentity(fx.rootKey, { externalId: `u${i}` })).identityId).sort();
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = unwrap(fx.engine.identities.listIdentities(fx.rootKey, cursor === undefined ? { limit: 5 } : { limit: 5, cursor }));
      expect(page.total).toBe(23);
      seen.push(...page.identities.map((i) => i.id));
      cursor = page.cursor;
      pages++;
    } while (cursor !== undefined && pages < 100);
    expect(pages).toBe(5);
    expect(seen).toEqual(ids);
    const exact = unwrap(fx.engine.identities.listIdentities(fx.rootKey, { limit: 23 }));
    expect(exact.cursor).toBeUndefined();
    expect(exact.identities).toHaveLength(23);
    expect(unwrap(fx.engine.identities.listIdentities(fx.rootKey, {})).identities).toHaveLength(23);
    for (const limit of [0, 101, 2.5]) {
      expect(errorCode(fx.engine.identities.listIdentities(fx.rootKey, { limit }))).toBe('err:service:application:invalid_input');
    }
  });

  it('is scoped to the workspace and to the identity permissions', () => {
    const fx = makeEngine();
    unwrap(fx.engine.identities.createIdentity(fx.rootKey, { externalId: 'mine' }));
    const other = unwrap(fx.engine.admin.createWorkspace({}));
    expect(errorCode(fx.engine.identities.getIdentity(other.rootKey, { identity: 'mine' }))).toBe('err:service:data:identity_not_found');
    expect(unwrap(fx.engine.identities.listIdentities(other.rootKey, {})).total).toBe(0);
    const reader = unwrap(fx.engine.admin.createRootKey(fx.workspaceId, ['identity.*.read_identity'])).rootKey;
    expect(fx.engine.identities.getIdentity(reader, { identity: 'mine' }).ok).toBe(true);
    const denied = 'err:service:authorization:insufficient_permissions';
    expect(errorCode(fx.engine.identities.createIdentity(reader, { externalId: 'new' }))).toBe(denied);
    expect(errorCode(fx.engine.identities.updateIdentity(reader, { identity: 'mine', meta: {} }))).toBe(denied);
    expect(errorCode(fx.engine.identities.deleteIdentity(reader, { identity: 'mine' }))).toBe(denied);
  });
});
