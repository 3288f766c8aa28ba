/**
 * Root-key authentication and permission checks (docs/service-model.md#authentication-and-permissions). A root key belongs to one
 * workspace; `*` grants everything, otherwise a permission is held by its exact name, e.g.
 * `api.*.create_key` or `api.api_123.create_key`.
 */
import type { EngineContext } from './context.js';
import { type Result, fail, ok } from './errors.js';

/** Who is calling: the workspace of the root key and what it may do. */
export interface Caller {
  workspaceId: string;
  rootKeyId: string;
  /** The root key's hash: how the simulator recognises its operator without keeping the plaintext. */
  rootKeyHash: string;
  permissions: readonly string[];
}

/** Resolves a root key (the bearer token) to its caller; no key → 400, unknown key → 401. */
export function authenticate(ctx: EngineContext, rootKey: string | undefined): Result<Caller> {
  if (rootKey === undefined || rootKey === '') {
    return fail('err:service:authentication:missing', 'Authentication is required: send your root key as "Authorization: Bearer <ROOT_KEY>".');
  }
  const record = ctx.state.rootKeysByHash.get(rootKeyHash(ctx, rootKey));
  if (record === undefined) {
    return fail(
      'err:service:authentication:key_not_found',
      'The root key is not valid: it is unknown or was deleted. Check the key you send in the Authorization header.',
    );
  }
  return ok({ workspaceId: record.workspaceId, rootKeyId: record.id, rootKeyHash: record.hash, permissions: record.permissions });
}

/** The root key's hash, from the memo when it is the last one seen (context.ts). */
function rootKeyHash(ctx: EngineContext, rootKey: string): string {
  const memo = ctx.rootKeyMemo;
  if (memo === undefined) return ctx.sha256(rootKey);
  if (sameText(memo.plaintext, rootKey)) return memo.hash;
  const hash = ctx.sha256(rootKey);
  memo.plaintext = rootKey;
  memo.hash = hash;
  return hash;
}

/**
 * Equality whose time depends on the lengths only, never on where the texts differ: a caller
 * timing its answers learns nothing of the remembered root key.
 */
function sameText(a: string, b: string): boolean {
  if (a.length !== b.length || a.length === 0) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/** True when the caller holds `*` or any of the given permission names. */
export function hasPermission(caller: Caller, anyOf: readonly string[]): boolean {
  for (const held of caller.permissions) {
    if (held === '*' || anyOf.includes(held)) return true;
  }
  return false;
}

/** 403 naming the permission to grant, unless the caller holds one of `anyOf`. */
export function requirePermission(caller: Caller, anyOf: readonly string[]): Result<void> {
  if (hasPermission(caller, anyOf)) return ok(undefined);
  return fail(
    'err:service:authorization:insufficient_permissions',
    `The root key lacks the permission for this operation; it needs ${anyOf.map((p) => `"${p}"`).join(' or ')}.`,
  );
}

/** `api.*.<action>` or `api.<apiId>.<action>`. */
export function apiPermission(apiId: string, action: string): string[] {
  return [`api.*.${action}`, `api.${apiId}.${action}`];
}
