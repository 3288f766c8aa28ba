/** Keys (docs/service-model.md#keys): create, get, update, delete and credit updates. */
import { type EngineContext, newId } from './context.js';
import { type Caller, apiPermission, authenticate, requirePermission } from './auth.js';
import { bookMeta, releaseMeta } from './meta.js';
import { type Result, fail, invalid, ok } from './errors.js';
import { base58Encode } from './base58.js';
import { flatString } from './flat-string.js';
import { NO_NAMES, StoredKey, digestOfKey, setOptionalFields } from './key-record.js';
import {
  type RefillInput,
  type RefillView,
  type UpdateCreditsInput,
  type UpdateCreditsOutput,
  applyCreditsUpdate,
  checkCreditsUpdate,
  isCreditAmount,
  parseRefill,
  setRefill,
  settleKey,
  viewRefill,
} from './credits.js';
import { type RateLimitInput, type RateLimitView, buildRateLimits, checkRateLimits, viewRateLimit } from './attached-ratelimits.js';
import { type IdentityView, checkExternalId, identityByExternalId, insertIdentity, viewIdentity } from './identities.js';
import { findApi } from './workspace.js';
import type { IdentityRecord, JsonObject, KeyRecord, RefillConfig } from './state.js';

const PREFIX = /^[A-Za-z0-9_]{1,16}$/;

export interface CreditsInput {
  /** The balance; null or omitted = unlimited. */
  remaining?: number | null;
  refill?: RefillInput | null;
}

export interface CreateKeyInput {
  apiId: string;
  prefix?: string;
  name?: string;
  /** Random bytes in the key, 16..255; default 16. */
  byteLength?: number;
  /** Links the key to this identity, creating the identity if it does not exist. */
  externalId?: string;
  meta?: JsonObject;
  permissions?: string[];
  roles?: string[];
  /** Unix ms after which the key verifies EXPIRED. */
  expires?: number;
  enabled?: boolean;
  credits?: CreditsInput | null;
  ratelimits?: RateLimitInput[];
  recoverable?: boolean;
}

export interface CreateKeyOutput {
  keyId: string;
  /** The plaintext key: returned here once, never stored (only its SHA-256). */
  key: string;
}

export interface KeyCreditsView {
  remaining: number | null;
  refill?: RefillView;
}

export interface KeyView {
  keyId: string;
  start: string;
  enabled: boolean;
  createdAt: number;
  name?: string;
  meta?: JsonObject;
  expires?: number;
  permissions?: string[];
  roles?: string[];
  credits?: KeyCreditsView;
  identity?: IdentityView;
  ratelimits?: RateLimitView[];
  plaintext?: string;
}

/** The key's live identity, or undefined (none, or deleted since). */
export function identityOfKey(ctx: EngineContext, key: KeyRecord): IdentityRecord | undefined {
  return key.identityId === null ? undefined : ctx.state.identities.get(key.identityId);
}

function checkStringList(values: readonly string[] | undefined, location: string): Result<void> {
  for (const [i, value] of (values ?? NO_NAMES).entries()) {
    if (value.length < 1 || value.length > 512) return invalid(`${location}[${i}]`, 'Each entry must be 1 to 512 characters.');
  }
  return ok(undefined);
}

function checkExpires(expires: number | null | undefined): Result<void> {
  if (expires === undefined || expires === null || (Number.isSafeInteger(expires) && expires >= 0)) return ok(undefined);
  return invalid('body.expires', 'expires is a Unix time in milliseconds (an integer ≥ 0).');
}

/** A checked credits change: what to do to the balance and the refill. */
interface CreditsPlan {
  remaining: number | null | undefined;
  refill: RefillConfig | null | undefined;
}

/**
 * Checks a credits object. On create, omitted means unlimited; on update, omitted fields stay as
 * they are (docs/service-model.md#keys).
 */
function planCredits(ctx: EngineContext, credits: CreditsInput, location: string, creating: boolean): Result<CreditsPlan> {
  const { remaining, refill } = credits;
  if (remaining !== undefined && remaining !== null && !isCreditAmount(remaining)) {
    return invalid(`${location}.remaining`, 'remaining must be an integer ≥ 0.');
  }
  if (refill !== undefined && refill !== null) {
    const missingBalance = creating ? remaining === undefined || remaining === null : remaining === null;
    if (missingBalance) {
      return invalid(
        `${location}.remaining`,
        creating
          ? 'A refill needs a starting balance: set credits.remaining too.'
          : 'remaining null makes the key unlimited, which cannot be combined with a refill.',
      );
    }
    const parsed = parseRefill(refill, `${location}.refill`, ctx.compat);
    if (!parsed.ok) return parsed;
    return ok({ remaining, refill: parsed.value });
  }
  return ok({ remaining, refill });
}

function applyCredits(key: KeyRecord, plan: CreditsPlan, nowMs: number): void {
  if (plan.remaining === null) {
    key.remaining = null;
    setRefill(key, null, nowMs);
    return;
  }
  if (plan.remaining !== undefined) key.remaining = plan.remaining;
  if (plan.refill !== undefined) setRefill(key, plan.refill, nowMs);
}

export function createKey(ctx: EngineContext, rootKey: string | undefined, input: CreateKeyInput): Result<CreateKeyOutput> {
  const caller = authenticate(ctx, rootKey);
  if (!caller.ok) return caller;
  const nowMs = ctx.clock.now();
  const byteLength = input.byteLength ?? 16;
  const checks: Array<Result<unknown>> = [
    input.prefix === undefined || PREFIX.test(input.prefix) ? ok(undefined) : invalid('body.prefix', 'The prefix must be 1 to 16 letters, digits or "_".'),
    Number.isInteger(byteLength) && byteLength >= 16 && byteLength <= 255
      ? ok(undefined)
      : invalid('body.byteLength', 'byteLength must be an integer from 16 to 255.'),
    input.name === undefined || (input.name.length >= 1 && input.name.length <= 255)
      ? ok(undefined)
      : invalid('body.name', 'The name must be 1 to 255 characters.'),
    input.externalId === undefined ? ok(undefined) : checkExternalId(input.externalId, 'body.externalId'),
    checkStringList(input.permissions, 'body.permissions'),
    checkStringList(input.roles, 'body.roles'),
    checkExpires(input.expires),
    checkRateLimits(input.ratelimits ?? [], 'body.ratelimits'),
  ];
  for (const check of checks) if (!check.ok) return check;
  const credits =
    input.credits === undefined || input.credits === null
      ? ok<CreditsPlan>({ remaining: null, refill: null })
      : planCredits(ctx, input.credits, 'body.credits', true);
  if (!credits.ok) return credits;

  const api = findApi(ctx, caller.value, input.apiId);
  if (!api.ok) return api;
  const allowed = requirePermission(caller.value, apiPermission(api.value.id, 'create_key'));
  if (!allowed.ok) return allowed;
  if (!api.value.keyAuth) return fail('err:service:application:precondition_failed', 'The requested API is not set up to handle keys.');
  if (input.recoverable === true) {
    const workspace = ctx.state.workspaces.get(caller.value.workspaceId);
    if (workspace?.vaultEnabled !== true) return fail('err:service:application:precondition_failed', "Vault hasn't been set up.");
    if (!api.value.encryption) return fail('err:service:application:precondition_failed', 'This API does not support key encryption.');
  }

  const booked = bookMeta(ctx.state, null, input.meta ?? null, 'body.meta');
  if (!booked.ok) return booked;

  // Everything is checked: from here on the request succeeds, so ids and key material may be drawn.
  const plaintext = base58Encode(ctx.random.bytes(byteLength), input.prefix === undefined ? '' : `${input.prefix}_`);
  let identityId: string | null = null;
  if (input.externalId !== undefined) {
    identityId = (
      identityByExternalId(ctx, caller.value.workspaceId, input.externalId) ?? insertIdentity(ctx, caller.value.workspaceId, input.externalId, null, [])
    ).id;
  }
  const key = new StoredKey(
    newId(ctx, 'key'),
    ctx.state.keyOwners.of(api.value.id, caller.value.workspaceId),
    ctx.keyDigest(plaintext),
    // Flat, so that a stored prefix does not keep the plaintext alive (see flat-string.ts); without
    // a prefix it is packed into a number anyway (key-record.ts).
    input.prefix === undefined ? plaintext.slice(0, 4) : flatString(plaintext.slice(0, input.prefix.length + 5)),
    nowMs,
  );
  // Only what differs from the defaults becomes a field of the key (key-record.ts).
  setOptionalFields(key, {
    name: input.name ?? null,
    meta: input.meta ?? null,
    permissions: input.permissions === undefined ? NO_NAMES : [...new Set(input.permissions)],
    roles: input.roles === undefined ? NO_NAMES : [...new Set(input.roles)],
    expiresAtMs: input.expires ?? null,
    enabled: input.enabled ?? true,
    identityId,
    ratelimits: buildRateLimits(ctx, input.ratelimits ?? [], []),
    recoverablePlaintext: input.recoverable === true ? plaintext : null,
  });
  applyCredits(key, credits.value, nowMs);
  ctx.state.keys.set(key.id, key);
  ctx.state.keysByDigest.set(key.digest, key);
  return ok({ keyId: key.id, key: plaintext });
}

/**
 * The caller's key, settled to now, after the permission check: 404 when it does not exist in
 * the caller's workspace.
 */
function keyFor(ctx: EngineContext, caller: Caller, keyId: string, action: string, operation: string): Result<KeyRecord> {
  const key = ctx.state.keys.get(keyId);
  if (key === undefined || key.workspaceId !== caller.workspaceId) {
    return fail('err:service:data:key_not_found', `The key ${keyId} does not exist in this workspace.`);
  }
  const allowed = requirePermission(caller, apiPermission(key.apiId, action));
  if (!allowed.ok) return allowed;
  settleKey(ctx, key, ctx.clock.now(), operation);
  return ok(key);
}

export function viewKeyCredits(key: KeyRecord): KeyCreditsView | undefined {
  if (key.remaining === null && key.refill === null) return undefined;
  const view: KeyCreditsView = { remaining: key.remaining };
  if (key.refill !== null) view.refill = viewRefill(key.refill);
  return view;
}

export function viewKey(ctx: EngineContext, key: KeyRecord): KeyView {
  const view: KeyView = { keyId: key.id, start: key.start, enabled: key.enabled, createdAt: key.createdAt };
  if (key.name !== null) view.name = key.name;
  if (key.meta !== null) view.meta = key.meta;
  if (key.expiresAtMs !== null) view.expires = key.expiresAtMs;
  if (key.permissions.length > 0) view.permissions = [...key.permissions];
  if (key.roles.length > 0) view.roles = [...key.roles];
  const credits = viewKeyCredits(key);
  if (credits !== undefined) view.credits = credits;
  const identity = identityOfKey(ctx, key);
  if (identity !== undefined) view.identity = viewIdentity(identity);
  if (key.ratelimits.length > 0) view.ratelimits = key.ratelimits.map(viewRateLimit);
  return view;
}

export interface GetKeyInput {
  keyId: string;
  /** Return the plaintext of a recoverable key (needs the vault and API encryption). */
  decrypt?: boolean;
}

export function getKey(ctx: EngineContext, rootKey: string | undefined, input: GetKeyInput): Result<KeyView> {
  const caller = authenticate(ctx, rootKey);
  if (!caller.ok) return caller;
  const key = keyFor(ctx, caller.value, input.keyId, 'read_key', 'keys.getKey');
  if (!key.ok) return key;
  const view = viewKey(ctx, key.value);
  if (input.decrypt === true) {
    if (ctx.state.workspaces.get(key.value.workspaceId)?.vaultEnabled !== true) {
      return fail('err:service:application:precondition_failed', "Vault hasn't been set up.");
    }
    if (ctx.state.apis.get(key.value.apiId)?.encryption !== true) {
      return fail('err:service:application:precondition_failed', 'This API does not support key encryption.');
    }
    if (key.value.recoverablePlaintext !== null) view.plaintext = key.value.recoverablePlaintext;
  }
  return ok(view);
}

/** updateKey fields: omitted = unchanged, null = cleared, value = set (docs/service-model.md#updating-a-key). */
export interface UpdateKeyInput {
  keyId: string;
  name?: string | null;
  externalId?: string | null;
  meta?: JsonObject | null;
  expires?: number | null;
  enabled?: boolean;
  ratelimits?: RateLimitInput[] | null;
  permissions?: string[] | null;
  roles?: string[] | null;
  credits?: CreditsInput | null;
}

export function updateKey(ctx: EngineContext, rootKey: string | undefined, input: UpdateKeyInput): Result<Record<string, never>> {
  const caller = authenticate(ctx, rootKey);
  if (!caller.ok) return caller;
  const checks: Array<Result<unknown>> = [
    input.name === undefined || input.name === null || (input.name.length >= 1 && input.name.length <= 255)
      ? ok(undefined)
      : invalid('body.name', 'The name must be 1 to 255 characters.'),
    input.externalId === undefined || input.externalId === null ? ok(undefined) : checkExternalId(input.externalId, 'body.externalId'),
    checkStringList(input.permissions ?? undefined, 'body.permissions'),
    checkStringList(input.roles ?? undefined, 'body.roles'),
    checkExpires(input.expires),
    checkRateLimits(input.ratelimits ?? [], 'body.ratelimits'),
  ];
  for (const check of checks) if (!check.ok) return check;
  const credits =
    input.credits === undefined
      ? ok(undefined)
      : input.credits === null
        ? ok<CreditsPlan>({ remaining: null, refill: null })
        : planCredits(ctx, input.credits, 'body.credits', false);
  if (!credits.ok) return credits;
  const found = keyFor(ctx, caller.value, input.keyId, 'update_key', 'keys.updateKey');
  if (!found.ok) return found;
  if (input.meta !== undefined) {
    const booked = bookMeta(ctx.state, found.value.meta, input.meta, 'body.meta');
    if (!booked.ok) return booked;
  }

  const key = found.value;
  const nowMs = ctx.clock.now();
  if (input.name !== undefined) key.name = input.name;
  if (input.meta !== undefined) key.meta = input.meta;
  if (input.expires !== undefined) key.expiresAtMs = input.expires;
  if (input.enabled !== undefined) key.enabled = input.enabled;
  if (input.permissions !== undefined) key.permissions = input.permissions === null ? NO_NAMES : [...new Set(input.permissions)];
  if (input.roles !== undefined) key.roles = input.roles === null ? NO_NAMES : [...new Set(input.roles)];
  if (input.ratelimits !== undefined) key.ratelimits = buildRateLimits(ctx, input.ratelimits ?? [], key.ratelimits);
  if (input.externalId !== undefined) {
    key.identityId =
      input.externalId === null
        ? null
        : (identityByExternalId(ctx, key.workspaceId, input.externalId) ?? insertIdentity(ctx, key.workspaceId, input.externalId, null, [])).id;
  }
  if (credits.value !== undefined) applyCredits(key, credits.value, nowMs);
  return ok({});
}

export interface DeleteKeyInput {
  keyId: string;
  /** Accepted for compatibility; a deleted key is gone either way. */
  permanent?: boolean;
}

export function deleteKey(ctx: EngineContext, rootKey: string | undefined, input: DeleteKeyInput): Result<Record<string, never>> {
  const caller = authenticate(ctx, rootKey);
  if (!caller.ok) return caller;
  const key = keyFor(ctx, caller.value, input.keyId, 'delete_key', 'keys.deleteKey');
  if (!key.ok) return key;
  ctx.state.keys.delete(key.value.id);
  ctx.state.keysByDigest.delete(digestOfKey(key.value));
  releaseMeta(ctx.state, key.value.meta);
  return ok({});
}

export function updateCredits(ctx: EngineContext, rootKey: string | undefined, input: UpdateCreditsInput): Result<UpdateCreditsOutput> {
  const caller = authenticate(ctx, rootKey);
  if (!caller.ok) return caller;
  // An unknown key is a 404 before any check of the value (docs/service-model.md#updating-credits).
  const key = keyFor(ctx, caller.value, input.keyId, 'update_key', 'keys.updateCredits');
  if (!key.ok) return key;
  const checked = checkCreditsUpdate(key.value, input);
  if (!checked.ok) return checked;
  return ok(applyCreditsUpdate(key.value, input));
}
