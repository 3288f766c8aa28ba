import { describe, expect, it } from 'vitest';
import { errorCode, makeEngine, unwrap } from '../helpers/engine.js';

describe('authentication and root keys', () => {
  it('distinguishes a missing root key (400) from an unknown one (401)', () => {
    const fx = makeEngine();
    expect(errorCode(fx.engine.apis.createApi(undefined, { name: 'x' }))).toBe('err:service:authentication:missing');
    expect(errorCode(fx.engine.apis.createApi('', { name: 'x' }))).toBe('err:service:authentication:missing');
    expect(errorCode(fx.engine.apis.createApi('root_not_a_real_key', { name: 'x' }))).toBe('err:service:authentication:key_not_found');
  });

  it('a root key with * may do anything; others only what they hold, and the 403 names the permission', () => {
    const fx = makeEngine();
    const limited = unwrap(fx.engine.admin.createRootKey(fx.workspaceId, ['identity.*.create_identity'])).rootKey;
    const denied = fx.engine.apis.createApi(limited, { name: 'x' });
    expect(errorCode(denied)).toBe('err:service:authorization:insufficient_permissions');
    expect(denied.ok ? '' : denied.error.detail).toContain('api.*.create_api');
    expect(fx.engine.identities.createIdentity(limited, { externalId: 'a' }).ok).toBe(true);
    expect(fx.engine.apis.createApi(fx.rootKey, { name: 'x' }).ok).toBe(true);
  });

  it('accepts a caller-chosen root key once, and never stores its plaintext', () => {
    const fx = makeEngine();
    const chosen = 'root_chosen_by_user_123';
    const ws = unwrap(fx.engine.admin.createWorkspace({ name: 'w2', rootKey: chosen }));
    expect(ws.rootKey).toBe(chosen);
    expect(unwrap(fx.engine.admin.authenticate(chosen)).workspaceId).toBe(ws.workspaceId);
    expect(errorCode(fx.engine.admin.createWorkspace({ rootKey: chosen }))).toBe('err:service:application:invalid_input');
    expect(errorCode(fx.engine.admin.createWorkspace({ rootKey: 'short' }))).toBe('err:service:application:invalid_input');
    expect(JSON.stringify(fx.engine.snapshot())).not.toContain(chosen);
  });

  it('a rejected workspace creation changes nothing, not even the random sequence', () => {
    const fx = makeEngine();
    const before = JSON.stringify(fx.engine.snapshot());
    expect(errorCode(fx.engine.admin.createWorkspace({ rootKey: fx.rootKey }))).toBe('err:service:application:invalid_input');
    expect(errorCode(fx.engine.admin.createWorkspace({ permissions: ['has space'] }))).toBe('err:service:application:invalid_input');
    expect(JSON.stringify(fx.engine.snapshot())).toBe(before);
  });

  it('configuring an API or the vault of another workspace is a 404', () => {
    const fx = makeEngine();
    const other = unwrap(fx.engine.admin.createWorkspace({}));
    expect(errorCode(fx.engine.admin.configureApi(other.workspaceId, { apiId: fx.apiId, encryption: true }))).toBe('err:service:data:api_not_found');
    expect(errorCode(fx.engine.admin.configureVault('ws_missing', true))).toBe('err:service:data:workspace_not_found');
  });
});
