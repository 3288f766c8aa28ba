/**
 * Rate-limit namespaces (docs/service-model.md#rate-limits): created, found by id or name (with
 * the last one found by name kept), deleted, and the namespace a limit request uses.
 */
import type { EngineContext } from './context.js';
import { newId } from './context.js';
import { type Caller, requirePermission } from './auth.js';
import { type Result, fail, invalid, ok } from './errors.js';
import { type EngineState, type NamespaceRecord, namespaceNameKey } from './state.js';

function checkNamespaceName(name: string, location: string): Result<void> {
  if (name.length < 1 || name.length > 255) return invalid(location, 'A namespace name must be 1 to 255 characters.');
  return ok(undefined);
}

function insertNamespace(ctx: EngineContext, workspaceId: string, name: string): NamespaceRecord {
  const record: NamespaceRecord = { id: newId(ctx, 'rlns'), workspaceId, name, createdAt: ctx.clock.now(), deletedAt: null };
  ctx.state.namespaces.set(record.id, record);
  ctx.state.namespacesByName.set(namespaceNameKey(workspaceId, name), record);
  return record;
}

/** Creates a namespace; creating a name that already exists returns the existing one. */
export function createNamespace(ctx: EngineContext, workspaceId: string, name: string): Result<{ namespaceId: string; created: boolean }> {
  if (!ctx.state.workspaces.has(workspaceId)) return fail('err:service:data:workspace_not_found', `Workspace ${workspaceId} does not exist.`);
  const checked = checkNamespaceName(name, 'body.name');
  if (!checked.ok) return checked;
  const existing = ctx.state.namespacesByName.get(namespaceNameKey(workspaceId, name));
  if (existing !== undefined) return ok({ namespaceId: existing.id, created: false });
  return ok({ namespaceId: insertNamespace(ctx, workspaceId, name).id, created: true });
}

/**
 * The namespace last found by name, per state: clients name the same namespace call after call,
 * and this spares building and hashing its lookup key each time. A cache of the state, outside it
 * (never in a snapshot; a new state after a reset or restore starts without one, and engines in
 * one process never share one: keyed by the state object, not by ids a seed can repeat). It stays right
 * as the state changes: a namespace found by name is in `namespacesByName` under that name until
 * it is deleted (its `deletedAt` set), and a name is given to a new namespace only once the
 * earlier one is deleted.
 */
const lastFoundByName = new WeakMap<EngineState, NamespaceRecord>();

/**
 * A namespace of the workspace by id (`rlns_…`) or name: 404 when unknown (or of another
 * workspace), 410 when deleted.
 */
export function findNamespace(ctx: EngineContext, workspaceId: string, ref: string): Result<NamespaceRecord> {
  const last = lastFoundByName.get(ctx.state);
  if (last !== undefined && last.deletedAt === null && last.name === ref && last.workspaceId === workspaceId) return ok(last);
  const byName = ctx.state.namespacesByName.get(namespaceNameKey(workspaceId, ref));
  if (byName !== undefined) {
    lastFoundByName.set(ctx.state, byName);
    return ok(byName);
  }
  const byIdRecord = ctx.state.namespaces.get(ref);
  if (byIdRecord !== undefined && byIdRecord.workspaceId === workspaceId) {
    if (byIdRecord.deletedAt === null) return ok(byIdRecord);
    return fail('err:service:data:ratelimit_namespace_gone', `The rate limit namespace ${ref} was deleted.`);
  }
  for (const record of ctx.state.namespaces.values()) {
    if (record.workspaceId === workspaceId && record.name === ref && record.deletedAt !== null) {
      return fail('err:service:data:ratelimit_namespace_gone', `The rate limit namespace "${ref}" was deleted.`);
    }
  }
  return fail('err:service:data:ratelimit_namespace_not_found', `The requested rate limit namespace "${ref}" could not be found in this workspace.`);
}

export function deleteNamespace(ctx: EngineContext, workspaceId: string, ref: string): Result<{ namespaceId: string }> {
  const found = findNamespace(ctx, workspaceId, ref);
  if (!found.ok) return found;
  found.value.deletedAt = ctx.clock.now();
  ctx.state.namespacesByName.delete(namespaceNameKey(workspaceId, found.value.name));
  return ok({ namespaceId: found.value.id });
}

/**
 * The namespace a limit request names. Under `compat: 'production'` an unknown name is created
 * on first use — after the permission check, so a refused request creates nothing.
 */
export function namespaceForUse(ctx: EngineContext, caller: Caller, ref: string, action: string): Result<NamespaceRecord> {
  const found = findNamespace(ctx, caller.workspaceId, ref);
  if (found.ok) {
    // A root key holding `*` may do everything: no permission names to build.
    if (caller.permissions.includes('*')) return found;
    const allowed = requirePermission(caller, [`ratelimit.*.${action}`, `ratelimit.${found.value.id}.${action}`]);
    return allowed.ok ? found : allowed;
  }
  if (ctx.compat !== 'production' || found.error.code !== 'err:service:data:ratelimit_namespace_not_found' || ref.startsWith('rlns_')) {
    return found;
  }
  const allowed = requirePermission(caller, [`ratelimit.*.${action}`]);
  if (!allowed.ok) return allowed;
  const checked = checkNamespaceName(ref, 'body.namespace');
  if (!checked.ok) return checked;
  return ok(insertNamespace(ctx, caller.workspaceId, ref));
}
