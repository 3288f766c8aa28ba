/**
 * Workspaces, root keys and APIs: the fixtures everything else lives in. Creating workspaces and
 * root keys and switching the vault and encryption settings have no public API in the service,
 * so these are reached through the simulator's admin surface.
 */
import type { EpochMs } from './clock.js';
import { type EngineContext, newId } from './context.js';
import { type Caller, authenticate, requirePermission } from './auth.js';
import { type Result, fail, invalid, ok } from './errors.js';
import { base58Encode } from './base58.js';
import type { ApiRecord, WorkspaceRecord } from './state.js';

export interface CreateWorkspaceInput {
  name?: string;
  /** Use this plaintext as the workspace's first root key (e.g. from `--root-key`); else one is made. */
  rootKey?: string;
  /** Permissions of that root key; default `['*']`. */
  permissions?: string[];
}

export interface CreateWorkspaceOutput {
  workspaceId: string;
  rootKey: string;
  rootKeyId: string;
}

function checkPermissionList(permissions: readonly string[]): Result<void> {
  for (const [i, p] of permissions.entries()) {
    if (typeof p !== 'string' || p.length === 0 || p.length > 512 || /\s/.test(p)) {
      return invalid(`body.permissions[${i}]`, 'A permission is a non-empty name without spaces, at most 512 characters.');
    }
  }
  return ok(undefined);
}

/** A caller-chosen root key must be long enough and not already in use. */
function checkRootKeyPlaintext(ctx: EngineContext, plaintext: string | undefined): Result<void> {
  if (plaintext === undefined) return ok(undefined);
  if (plaintext.length < 8 || plaintext.length > 256 || /\s/.test(plaintext)) {
    return invalid('body.rootKey', 'A root key must be 8 to 256 characters without spaces.');
  }
  if (ctx.state.rootKeysByHash.has(ctx.sha256(plaintext))) return invalid('body.rootKey', 'This root key is already in use.');
  return ok(undefined);
}

/** Adds a root key to a workspace. The plaintext is returned once and only its hash is kept. */
export function createRootKey(
  ctx: EngineContext,
  workspaceId: string,
  permissions: readonly string[],
  plaintext?: string,
): Result<{ rootKey: string; rootKeyId: string }> {
  if (!ctx.state.workspaces.has(workspaceId)) return fail('err:service:data:workspace_not_found', `Workspace ${workspaceId} does not exist.`);
  const checked = checkPermissionList(permissions);
  if (!checked.ok) return checked;
  const plain = checkRootKeyPlaintext(ctx, plaintext);
  if (!plain.ok) return plain;
  const rootKey = plaintext ?? base58Encode(ctx.random.bytes(24), 'root_');
  const hash = ctx.sha256(rootKey);
  const id = newId(ctx, 'rk');
  ctx.state.rootKeysByHash.set(hash, { id, hash, workspaceId, permissions: [...permissions], createdAt: ctx.clock.now() });
  return ok({ rootKey, rootKeyId: id });
}

export function createWorkspace(ctx: EngineContext, input: CreateWorkspaceInput = {}): Result<CreateWorkspaceOutput> {
  const permissions = input.permissions ?? ['*'];
  const checked = checkPermissionList(permissions);
  if (!checked.ok) return checked;
  const plain = checkRootKeyPlaintext(ctx, input.rootKey);
  if (!plain.ok) return plain;
  const id = newId(ctx, 'ws');
  const workspace: WorkspaceRecord = { id, name: input.name ?? 'workspace', vaultEnabled: false, createdAt: ctx.clock.now() };
  ctx.state.workspaces.set(id, workspace);
  const rootKey = createRootKey(ctx, id, permissions, input.rootKey);
  if (!rootKey.ok) throw new Error(`bug: root key checks passed but creation failed: ${rootKey.error.detail}`);
  return ok({ workspaceId: id, rootKey: rootKey.value.rootKey, rootKeyId: rootKey.value.rootKeyId });
}

/** Switches the workspace vault (needed for recoverable keys). */
export function configureVault(ctx: EngineContext, workspaceId: string, enabled: boolean): Result<{ enabled: boolean }> {
  const workspace = ctx.state.workspaces.get(workspaceId);
  if (workspace === undefined) return fail('err:service:data:workspace_not_found', `Workspace ${workspaceId} does not exist.`);
  workspace.vaultEnabled = enabled;
  return ok({ enabled });
}

export interface CreateApiInput {
  name: string;
}

export function createApi(ctx: EngineContext, rootKey: string | undefined, input: CreateApiInput): Result<{ apiId: string }> {
  const caller = authenticate(ctx, rootKey);
  if (!caller.ok) return caller;
  const allowed = requirePermission(caller.value, ['api.*.create_api']);
  if (!allowed.ok) return allowed;
  if (input.name.length < 1 || input.name.length > 255) return invalid('body.name', 'The API name must be 1 to 255 characters.');
  return ok({ apiId: insertApi(ctx, caller.value.workspaceId, input.name, ctx.clock.now()).id });
}

function insertApi(ctx: EngineContext, workspaceId: string, name: string, nowMs: EpochMs): ApiRecord {
  const api: ApiRecord = { id: newId(ctx, 'api'), workspaceId, name, keyAuth: true, encryption: false, createdAt: nowMs };
  ctx.state.apis.set(api.id, api);
  return api;
}

/** The caller's API, or 404 when it does not exist in the caller's workspace. */
export function findApi(ctx: EngineContext, caller: Caller, apiId: string): Result<ApiRecord> {
  const api = ctx.state.apis.get(apiId);
  if (api === undefined || api.workspaceId !== caller.workspaceId) {
    return fail('err:service:data:api_not_found', `The API ${apiId} does not exist in this workspace.`);
  }
  return ok(api);
}

export interface ConfigureApiInput {
  apiId: string;
  /** Whether the API is set up to handle keys. */
  keyAuth?: boolean;
  /** Whether the API supports key encryption. */
  encryption?: boolean;
}

/** Switches an API's key-authentication and encryption settings (the 412 conditions). */
export function configureApi(
  ctx: EngineContext,
  workspaceId: string,
  input: ConfigureApiInput,
): Result<{ apiId: string; keyAuth: boolean; encryption: boolean }> {
  const api = ctx.state.apis.get(input.apiId);
  if (api === undefined || api.workspaceId !== workspaceId) {
    return fail('err:service:data:api_not_found', `The API ${input.apiId} does not exist in this workspace.`);
  }
  if (input.keyAuth !== undefined) api.keyAuth = input.keyAuth;
  if (input.encryption !== undefined) api.encryption = input.encryption;
  return ok({ apiId: api.id, keyAuth: api.keyAuth, encryption: api.encryption });
}
