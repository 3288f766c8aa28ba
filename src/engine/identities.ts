/** Identities (docs/service-model.md#identities): an owner record with metadata and shared rate limits. */
import { type EngineContext, newId } from './context.js';
import { type Caller, authenticate, requirePermission } from './auth.js';
import { type Result, fail, invalid, ok } from './errors.js';
import { MAX_PAGE_META_BYTES, bookMeta, metaBytes, releaseMeta } from './meta.js';
import { type RateLimitInput, type RateLimitView, buildRateLimits, checkRateLimits, viewRateLimit } from './attached-ratelimits.js';
import { type Page, byId, pageById, pageSize } from './pagination.js';
import { type IdentityRecord, type JsonObject, externalIdKey } from './state.js';

const EXTERNAL_ID = /^[A-Za-z0-9_.-]{1,255}$/;

export interface IdentityView {
  id: string;
  externalId: string;
  meta?: JsonObject;
  ratelimits?: RateLimitView[];
}

export function viewIdentity(record: IdentityRecord): IdentityView {
  const view: IdentityView = { id: record.id, externalId: record.externalId };
  if (record.meta !== null) view.meta = record.meta;
  if (record.ratelimits.length > 0) view.ratelimits = record.ratelimits.map(viewRateLimit);
  return view;
}

export function checkExternalId(externalId: string, location: string): Result<void> {
  if (!EXTERNAL_ID.test(externalId)) {
    return invalid(location, 'An externalId is 1 to 255 characters of letters, digits, "_", "." and "-".');
  }
  return ok(undefined);
}

/** The live identity with this externalId in the workspace. */
export function identityByExternalId(ctx: EngineContext, workspaceId: string, externalId: string): IdentityRecord | undefined {
  return ctx.state.identitiesByExternalId.get(externalIdKey(workspaceId, externalId));
}

/** Inserts a checked identity. */
export function insertIdentity(
  ctx: EngineContext,
  workspaceId: string,
  externalId: string,
  meta: JsonObject | null,
  ratelimits: readonly RateLimitInput[],
): IdentityRecord {
  const record: IdentityRecord = {
    id: newId(ctx, 'id'),
    workspaceId,
    externalId,
    meta,
    ratelimits: [],
    createdAt: ctx.clock.now(),
  };
  record.ratelimits = buildRateLimits(ctx, ratelimits, []);
  ctx.state.identities.set(record.id, record);
  ctx.state.identitiesByExternalId.set(externalIdKey(workspaceId, externalId), record);
  return record;
}

export interface CreateIdentityInput {
  externalId: string;
  meta?: JsonObject;
  ratelimits?: RateLimitInput[];
}

export function createIdentity(ctx: EngineContext, rootKey: string | undefined, input: CreateIdentityInput): Result<{ identityId: string }> {
  const caller = authenticate(ctx, rootKey);
  if (!caller.ok) return caller;
  const checks = [checkExternalId(input.externalId, 'body.externalId'), checkRateLimits(input.ratelimits ?? [], 'body.ratelimits')];
  for (const check of checks) if (!check.ok) return check;
  const allowed = requirePermission(caller.value, ['identity.*.create_identity']);
  if (!allowed.ok) return allowed;
  if (identityByExternalId(ctx, caller.value.workspaceId, input.externalId) !== undefined) {
    return fail('err:service:data:identity_already_exists', `An identity with externalId "${input.externalId}" already exists in this workspace.`);
  }
  const booked = bookMeta(ctx.state, null, input.meta ?? null, 'body.meta');
  if (!booked.ok) return booked;
  const record = insertIdentity(ctx, caller.value.workspaceId, input.externalId, input.meta ?? null, input.ratelimits ?? []);
  return ok({ identityId: record.id });
}

/**
 * How an identity is referenced: v2 sends `identity` (an `id_…` first, then an externalId);
 * v1 sends `identityId` or `externalId` separately.
 */
export interface IdentityRef {
  identity?: string;
  identityId?: string;
  externalId?: string;
}

function resolveIdentity(ctx: EngineContext, caller: Caller, ref: IdentityRef): Result<IdentityRecord> {
  let record: IdentityRecord | undefined;
  let shown: string;
  if (ref.identity !== undefined) {
    shown = ref.identity;
    const byIdRecord = ctx.state.identities.get(ref.identity);
    record = byIdRecord?.workspaceId === caller.workspaceId ? byIdRecord : identityByExternalId(ctx, caller.workspaceId, ref.identity);
  } else if (ref.identityId !== undefined) {
    shown = ref.identityId;
    const byIdRecord = ctx.state.identities.get(ref.identityId);
    record = byIdRecord?.workspaceId === caller.workspaceId ? byIdRecord : undefined;
  } else if (ref.externalId !== undefined) {
    shown = ref.externalId;
    record = identityByExternalId(ctx, caller.workspaceId, ref.externalId);
  } else {
    return invalid('body.identity', 'Name the identity: send its id or its externalId.');
  }
  if (record === undefined) return fail('err:service:data:identity_not_found', `The identity "${shown}" does not exist in this workspace.`);
  return ok(record);
}

function callerFor(ctx: EngineContext, rootKey: string | undefined, permission: string): Result<Caller> {
  const caller = authenticate(ctx, rootKey);
  if (!caller.ok) return caller;
  const allowed = requirePermission(caller.value, [`identity.*.${permission}`]);
  return allowed.ok ? caller : allowed;
}

export function getIdentity(ctx: EngineContext, rootKey: string | undefined, ref: IdentityRef): Result<IdentityView> {
  const caller = callerFor(ctx, rootKey, 'read_identity');
  if (!caller.ok) return caller;
  const record = resolveIdentity(ctx, caller.value, ref);
  return record.ok ? ok(viewIdentity(record.value)) : record;
}

export interface UpdateIdentityInput extends IdentityRef {
  /** Replaces the whole metadata object; null clears it. */
  meta?: JsonObject | null;
  /** Replaces the whole set; names kept keep their id; [] removes all. */
  ratelimits?: RateLimitInput[];
}

export function updateIdentity(ctx: EngineContext, rootKey: string | undefined, input: UpdateIdentityInput): Result<IdentityView> {
  const caller = callerFor(ctx, rootKey, 'update_identity');
  if (!caller.ok) return caller;
  if (input.ratelimits !== undefined) {
    const checked = checkRateLimits(input.ratelimits, 'body.ratelimits');
    if (!checked.ok) return checked;
  }
  const found = resolveIdentity(ctx, caller.value, input);
  if (!found.ok) return found;
  const record = found.value;
  if (input.meta !== undefined) {
    const booked = bookMeta(ctx.state, record.meta, input.meta, 'body.meta');
    if (!booked.ok) return booked;
    record.meta = input.meta;
  }
  if (input.ratelimits !== undefined) record.ratelimits = buildRateLimits(ctx, input.ratelimits, record.ratelimits);
  return ok(viewIdentity(record));
}

export function deleteIdentity(ctx: EngineContext, rootKey: string | undefined, ref: IdentityRef): Result<Record<string, never>> {
  const caller = callerFor(ctx, rootKey, 'delete_identity');
  if (!caller.ok) return caller;
  const found = resolveIdentity(ctx, caller.value, ref);
  if (!found.ok) return found;
  // Keys keep their identityId; a dangling id reads as "no identity" (see keys.ts), and the
  // externalId is free again for a new identity.
  ctx.state.identities.delete(found.value.id);
  ctx.state.identitiesByExternalId.delete(externalIdKey(found.value.workspaceId, found.value.externalId));
  releaseMeta(ctx.state, found.value.meta);
  return ok({});
}

/**
 * Ends a page early once its metadata passes MAX_PAGE_META_BYTES (at least one record per page),
 * so a list answer stays small and quick whatever the records hold; the cursor goes on from there.
 */
function boundedPage(page: Page<IdentityRecord>): Page<IdentityRecord> {
  let bytes = 0;
  for (const [i, record] of page.items.entries()) {
    bytes += metaBytes(record.meta);
    if (bytes > MAX_PAGE_META_BYTES && i > 0) {
      const items = page.items.slice(0, i);
      return { items, cursor: (items[i - 1] as IdentityRecord).id };
    }
  }
  return page;
}

export interface ListIdentitiesInput {
  limit?: number;
  cursor?: string;
}

export interface ListIdentitiesOutput {
  identities: IdentityView[];
  /** Present only while more pages exist. */
  cursor?: string;
  /** All identities of the workspace (v1 shows it). */
  total: number;
}

export function listIdentities(ctx: EngineContext, rootKey: string | undefined, input: ListIdentitiesInput): Result<ListIdentitiesOutput> {
  const caller = callerFor(ctx, rootKey, 'read_identity');
  if (!caller.ok) return caller;
  const size = pageSize(input.limit);
  if (!size.ok) return size;
  const all: IdentityRecord[] = [];
  for (const record of ctx.state.identities.values()) if (record.workspaceId === caller.value.workspaceId) all.push(record);
  all.sort(byId);
  const page = boundedPage(pageById(all, size.value, input.cursor));
  const identities = page.items.map(viewIdentity);
  return ok(page.cursor === undefined ? { identities, total: all.length } : { identities, cursor: page.cursor, total: all.length });
}
