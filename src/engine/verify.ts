/**
 * keys.verifyKey (docs/service-model.md#verification-order). Checks run in a fixed order and the first failure decides
 * the code: NOT_FOUND → DISABLED → EXPIRED → INSUFFICIENT_PERMISSIONS → RATE_LIMITED →
 * USAGE_EXCEEDED. So a rate-limited verification consumes no credits, and one refused for credits
 * has still consumed its rate-limit tokens. A refusal is a normal result, never an error.
 */
import type { EngineContext } from './context.js';
import { type Caller, apiPermission, authenticate, hasPermission } from './auth.js';
import { type Result, fail, invalid, ok } from './errors.js';
import { type PermissionQuery, parsePermissionQuery, satisfiesPermissionQuery } from './permission-query.js';
import { type WindowCheck, decideWindows, windowCounterKey } from './ratelimit-window.js';
import { MAX_LIMIT_DURATION_MS, MIN_LIMIT_DURATION_MS } from './ratelimit.js';
import { settleKey } from './credits.js';
import { strikes } from './faults.js';
import { identityOfKey } from './keys.js';
import { type IdentityView, viewIdentity } from './identities.js';
import type { IdentityRecord, JsonObject, KeyRecord, RateLimitRecord } from './state.js';

export const VERIFICATION_CODES = [
  'VALID',
  'NOT_FOUND',
  'FORBIDDEN',
  'DISABLED',
  'EXPIRED',
  'INSUFFICIENT_PERMISSIONS',
  'RATE_LIMITED',
  'USAGE_EXCEEDED',
] as const;
export type VerificationCode = (typeof VERIFICATION_CODES)[number];

/** The largest cost of one verification. */
export const MAX_VERIFY_COST = 1e12;

export interface VerifyRateLimitInput {
  name: string;
  /** Default 1. */
  cost?: number;
  /** With `duration`: an inline limit, counted per key under this name. */
  limit?: number;
  duration?: number;
}

export interface VerifyKeyInput {
  key: string;
  credits?: { cost?: number };
  ratelimits?: VerifyRateLimitInput[];
  /** A permission query, e.g. "a.read AND (b.write OR c.write)". */
  permissions?: string;
  tags?: string[];
}

export interface VerifyRateLimitView {
  id: string;
  name: string;
  limit: number;
  duration: number;
  /** Unix ms at which the current window ends. */
  reset: number;
  remaining: number;
  exceeded: boolean;
  autoApply: boolean;
}

export interface VerifyKeyOutput {
  valid: boolean;
  code: VerificationCode;
  keyId?: string;
  enabled?: boolean;
  name?: string;
  meta?: JsonObject;
  expires?: number;
  /** The balance after this verification, for keys with a usage limit. */
  credits?: number;
  permissions?: string[];
  roles?: string[];
  identity?: IdentityView;
  ratelimits?: VerifyRateLimitView[];
}

// Queries repeat under load; parsing each once keeps verification cheap. Bounded, derived, and
// outside the state (it holds no data of the service).
const queryCache = new Map<string, Result<PermissionQuery>>();

function parseCached(text: string): Result<PermissionQuery> {
  let parsed = queryCache.get(text);
  if (parsed === undefined) {
    parsed = parsePermissionQuery(text);
    if (queryCache.size >= 1_000) queryCache.clear();
    queryCache.set(text, parsed);
  }
  return parsed;
}

/** The verdict on a request that sends only its key (most do): one shared value, nothing to build. */
const PLAIN_REQUEST: Result<PermissionQuery | undefined> = Object.freeze(ok(undefined));

function checkRequest(input: VerifyKeyInput): Result<PermissionQuery | undefined> {
  if (input.credits === undefined && input.tags === undefined && input.ratelimits === undefined && input.permissions === undefined) return PLAIN_REQUEST;
  const cost = input.credits?.cost;
  if (cost !== undefined && (!Number.isInteger(cost) || cost < 0 || cost > MAX_VERIFY_COST)) {
    return invalid('body.credits.cost', `The cost must be an integer from 0 to ${MAX_VERIFY_COST}.`);
  }
  if (input.tags !== undefined && input.tags.length > 20) return invalid('body.tags', 'At most 20 tags.');
  if (input.ratelimits !== undefined) {
    const checked = checkRateLimitRequests(input.ratelimits);
    if (!checked.ok) return checked;
  }
  if (input.permissions === undefined) return ok(undefined);
  return parseCached(input.permissions);
}

function checkRateLimitRequests(ratelimits: readonly VerifyRateLimitInput[]): Result<void> {
  const names = new Set<string>();
  for (const [i, r] of ratelimits.entries()) {
    const at = `body.ratelimits[${i}]`;
    if (names.has(r.name)) return invalid(`${at}.name`, `The rate limit "${r.name}" is named twice.`);
    names.add(r.name);
    if (r.cost !== undefined && (!Number.isSafeInteger(r.cost) || r.cost < 0)) return invalid(`${at}.cost`, 'The cost must be an integer ≥ 0.');
    if (r.limit !== undefined && (!Number.isSafeInteger(r.limit) || r.limit < 1)) return invalid(`${at}.limit`, 'The limit must be an integer ≥ 1.');
    if (r.duration !== undefined && (!Number.isInteger(r.duration) || r.duration < MIN_LIMIT_DURATION_MS || r.duration > MAX_LIMIT_DURATION_MS)) {
      return invalid(`${at}.duration`, `The duration is in milliseconds: an integer from ${MIN_LIMIT_DURATION_MS} to ${MAX_LIMIT_DURATION_MS}.`);
    }
  }
  return ok(undefined);
}

interface PlannedCheck extends WindowCheck {
  id: string;
  name: string;
  autoApply: boolean;
}

function plannedFor(record: RateLimitRecord, scope: string, cost: number): PlannedCheck {
  return {
    id: record.id,
    name: record.name,
    autoApply: record.autoApply,
    key: windowCounterKey(scope, record.name, record.durationMs),
    limit: record.limit,
    durationMs: record.durationMs,
    cost,
  };
}

/**
 * The limits this verification checks: the named ones with the request's cost, then every
 * auto-applied one (cost 1). A name on both key and identity is the key's. An unknown name
 * without an inline limit is a 412.
 */
function planRateLimits(key: KeyRecord, identity: IdentityRecord | undefined, requested: readonly VerifyRateLimitInput[]): Result<PlannedCheck[]> {
  const keyScope = `key:${key.id}`;
  const identityScope = identity === undefined ? '' : `identity:${identity.id}`;
  const findKey = (name: string) => key.ratelimits.find((r) => r.name === name);
  const findIdentity = (name: string) => identity?.ratelimits.find((r) => r.name === name);
  const planned: PlannedCheck[] = [];
  const named = new Set<string>();
  for (const r of requested) {
    named.add(r.name);
    const cost = r.cost ?? 1;
    const onKey = findKey(r.name);
    const onIdentity = onKey === undefined ? findIdentity(r.name) : undefined;
    if (r.limit !== undefined && r.duration !== undefined) {
      const id = onKey?.id ?? onIdentity?.id ?? `inline_${r.name}`;
      planned.push(plannedFor({ id, name: r.name, limit: r.limit, durationMs: r.duration, autoApply: false }, keyScope, cost));
    } else if (onKey !== undefined) {
      planned.push(plannedFor(onKey, keyScope, cost));
    } else if (onIdentity !== undefined) {
      planned.push(plannedFor(onIdentity, identityScope, cost));
    } else {
      return fail(
        'err:service:application:precondition_failed',
        `The rate limit "${r.name}" is checked but exists neither on the key nor on its identity; attach it or send limit and duration inline.`,
      );
    }
  }
  for (const r of key.ratelimits) if (r.autoApply && !named.has(r.name)) planned.push(plannedFor(r, keyScope, 1));
  for (const r of identity?.ratelimits ?? []) {
    if (r.autoApply && !named.has(r.name) && findKey(r.name) === undefined) planned.push(plannedFor(r, identityScope, 1));
  }
  return ok(planned);
}

function refused(key: KeyRecord, code: VerificationCode, identity: IdentityRecord | undefined): VerifyKeyOutput {
  return describe({ valid: code === 'VALID', code }, key, identity);
}

/** Adds the key's fields to a result once the key was found. */
function describe(out: VerifyKeyOutput, key: KeyRecord, identity: IdentityRecord | undefined): VerifyKeyOutput {
  out.keyId = key.id;
  out.enabled = key.enabled;
  if (key.name !== null) out.name = key.name;
  if (key.meta !== null) out.meta = key.meta;
  if (key.expiresAtMs !== null) out.expires = key.expiresAtMs;
  if (key.remaining !== null) out.credits = key.remaining;
  if (key.permissions.length > 0) out.permissions = [...key.permissions];
  if (key.roles.length > 0) out.roles = [...key.roles];
  if (identity !== undefined) out.identity = viewIdentity(identity);
  return out;
}

/** Whether a root key may verify keys of this key's API. */
function mayVerify(caller: Caller | undefined, key: KeyRecord): boolean {
  if (caller === undefined) return true;
  if (caller.workspaceId !== key.workspaceId) return false;
  // A root key holding `*` may verify any key of its workspace: no permission names to build.
  return caller.permissions.includes('*') || hasPermission(caller, apiPermission(key.apiId, 'verify_key'));
}

/** The operation's name, for the fault filter. */
const OPERATION = 'keys.verifyKey';

export function verifyKey(ctx: EngineContext, rootKey: string | undefined, input: VerifyKeyInput): Result<VerifyKeyOutput> {
  let caller: Caller | undefined;
  if (rootKey !== undefined || ctx.compat === 'production') {
    const authenticated = authenticate(ctx, rootKey);
    if (!authenticated.ok) return authenticated;
    caller = authenticated.value;
  }
  const query = checkRequest(input);
  if (!query.ok) return query;

  // 1. NOT_FOUND: unknown, deleted, of another workspace, or not verifiable by this root key.
  // A region of the production profile (regional.ts) answers from its key cache; its copy was
  // settled when it was cached, and refills belong to the database.
  const regional = ctx.regional ?? null;
  const digest = ctx.keyDigest(input.key);
  const key = regional === null ? ctx.state.keysByDigest.get(digest) : regional.readKey(digest);
  if (key === undefined || !mayVerify(caller, key)) return ok({ valid: false, code: 'NOT_FOUND' });
  const nowMs = ctx.clock.now();
  if (regional === null) settleKey(ctx, key, nowMs, OPERATION);
  const identity = identityOfKey(ctx, key);

  // 2.–4. DISABLED, EXPIRED, INSUFFICIENT_PERMISSIONS.
  if (!key.enabled) return ok(refused(key, 'DISABLED', identity));
  if (key.expiresAtMs !== null && nowMs > key.expiresAtMs) return ok(refused(key, 'EXPIRED', identity));
  if (query.value !== undefined && !satisfiesPermissionQuery(query.value, key.permissions)) {
    return ok(refused(key, 'INSUFFICIENT_PERMISSIONS', identity));
  }

  // 5. RATE_LIMITED: all limits together, all or nothing.
  let ratelimits: VerifyRateLimitView[] | undefined;
  if (key.ratelimits.length > 0 || (input.ratelimits?.length ?? 0) > 0 || (identity?.ratelimits.length ?? 0) > 0) {
    const planned = planRateLimits(key, identity, input.ratelimits ?? []);
    if (!planned.ok) return planned;
    if (planned.value.length > 0) {
      const { passed, decisions } = regional === null ? decideWindows(ctx.state.windows, planned.value, nowMs) : regional.decideWindows(planned.value, nowMs);
      ratelimits = planned.value.map((p, i) => {
        const decision = decisions[i] as (typeof decisions)[number];
        return {
          id: p.id,
          name: p.name,
          limit: p.limit,
          duration: p.durationMs,
          reset: decision.view.resetAtMs,
          remaining: decision.remaining,
          exceeded: decision.exceeded,
          autoApply: p.autoApply,
        };
      });
      if (!passed) {
        const out = refused(key, 'RATE_LIMITED', identity);
        out.ratelimits = ratelimits;
        return ok(out);
      }
    }
  }

  // 6. USAGE_EXCEEDED: cost ≤ balance passes and is deducted; cost 0 passes and changes nothing.
  // (Injected faults, faults.ts: an over-admission answers VALID and keeps the balance; a lost
  // decrement reports the deduction without storing it.)
  const cost = input.credits?.cost ?? 1;
  let code: VerificationCode = 'VALID';
  let lostDecrement = false;
  if (key.remaining !== null) {
    const faults = ctx.faults;
    if (regional !== null) {
      // The region's counter decides (and sets the copy's balance to its own).
      if (!regional.spendCredits(key, cost)) code = 'USAGE_EXCEEDED';
    } else if (cost > key.remaining) {
      if (faults === null || !strikes(faults, faults.overAdmitRate, OPERATION)) code = 'USAGE_EXCEEDED';
    } else if (faults !== null && cost > 0 && strikes(faults, faults.lostDecrementRate, OPERATION)) {
      lostDecrement = true;
    } else {
      key.remaining -= cost;
    }
  }
  const out = describe({ valid: code === 'VALID', code }, key, identity);
  if (lostDecrement && out.credits !== undefined) out.credits -= cost;
  if (ratelimits !== undefined) out.ratelimits = ratelimits;
  return ok(out);
}
