/**
 * Rate-limit namespaces, overrides, and the `ratelimit.limit` / `multiLimit` operations
 * (docs/service-model.md#rate-limits). The window algorithm itself is in ratelimit-window.ts.
 */
import type { EngineContext } from './context.js';
import { newId } from './context.js';
import { type Caller, authenticate, requirePermission } from './auth.js';
import { type EngineError, type Result, fail, invalid, ok } from './errors.js';
import { decideWindow, decideWindows, windowCounterKey, type WindowCheck } from './ratelimit-window.js';
import { strikes } from './faults.js';
import { byId, pageById, pageSize } from './pagination.js';
import { type EngineState, type NamespaceRecord, type OverrideIndex, type OverrideRecord, namespaceNameKey } from './state.js';

export const MIN_LIMIT_DURATION_MS = 1_000;
export const MAX_LIMIT_DURATION_MS = 2_592_000_000;

// ── namespaces ─────────────────────────────────────────────────────────────────────────────

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
function namespaceForUse(ctx: EngineContext, caller: Caller, ref: string, action: string): Result<NamespaceRecord> {
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

// ── overrides ──────────────────────────────────────────────────────────────────────────────

/** A wildcard identifier: `*` matches any run of characters, the whole identifier must match. */
function wildcardPattern(identifier: string): RegExp {
  const escaped = identifier.split('*').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${escaped.join('.*')}$`, 's');
}

function overrideIndex(ctx: EngineContext, namespaceId: string): OverrideIndex {
  let index = ctx.state.overrideIndex.get(namespaceId);
  if (index !== undefined) return index;
  index = { exact: new Map(), wildcards: [] };
  for (const record of ctx.state.overrides.values()) {
    if (record.namespaceId !== namespaceId) continue;
    index.exact.set(record.identifier, record);
    if (record.identifier.includes('*')) index.wildcards.push({ record, pattern: wildcardPattern(record.identifier) });
  }
  // The most specific wildcard (most literal characters) wins; then the oldest, then by id.
  const literal = (r: OverrideRecord) => r.identifier.replaceAll('*', '').length;
  index.wildcards.sort((a, b) => literal(b.record) - literal(a.record) || a.record.createdAt - b.record.createdAt || byId(a.record, b.record));
  ctx.state.overrideIndex.set(namespaceId, index);
  return index;
}

/** The override that applies to an identifier: an exact one beats any wildcard. */
export function matchOverride(ctx: EngineContext, namespaceId: string, identifier: string): OverrideRecord | undefined {
  const index = overrideIndex(ctx, namespaceId);
  const exact = index.exact.get(identifier);
  if (exact !== undefined && !exact.identifier.includes('*')) return exact;
  for (const { record, pattern } of index.wildcards) if (pattern.test(identifier)) return record;
  return undefined;
}

export interface OverrideView {
  overrideId: string;
  identifier: string;
  limit: number;
  duration: number;
}

function viewOverride(record: OverrideRecord): OverrideView {
  return { overrideId: record.id, identifier: record.identifier, limit: record.limit, duration: record.durationMs };
}

function checkIdentifier(identifier: string, location = 'body.identifier'): Result<void> {
  if (identifier.length < 1 || identifier.length > 255) return invalid(location, 'An identifier must be 1 to 255 characters.');
  return ok(undefined);
}

function checkDuration(durationMs: number, location: string): Result<void> {
  if (!Number.isInteger(durationMs) || durationMs < MIN_LIMIT_DURATION_MS || durationMs > MAX_LIMIT_DURATION_MS) {
    return invalid(location, `The duration is in milliseconds: an integer from ${MIN_LIMIT_DURATION_MS} to ${MAX_LIMIT_DURATION_MS}.`);
  }
  return ok(undefined);
}

export interface SetOverrideInput {
  namespace: string;
  identifier: string;
  limit: number;
  duration: number;
}

export function setOverride(ctx: EngineContext, rootKey: string | undefined, input: SetOverrideInput): Result<{ overrideId: string }> {
  const caller = authenticate(ctx, rootKey);
  if (!caller.ok) return caller;
  const checks = [
    checkIdentifier(input.identifier),
    Number.isInteger(input.limit) && input.limit >= 0 ? ok(undefined) : invalid('body.limit', 'The limit must be an integer ≥ 0.'),
    checkDuration(input.duration, 'body.duration'),
  ];
  for (const check of checks) if (!check.ok) return check;
  const namespace = namespaceForUse(ctx, caller.value, input.namespace, 'set_override');
  if (!namespace.ok) return namespace;
  const existing = overrideIndex(ctx, namespace.value.id).exact.get(input.identifier);
  if (existing !== undefined) {
    existing.limit = input.limit;
    existing.durationMs = input.duration;
    return ok({ overrideId: existing.id });
  }
  const record: OverrideRecord = {
    id: newId(ctx, 'rlor'),
    namespaceId: namespace.value.id,
    identifier: input.identifier,
    limit: input.limit,
    durationMs: input.duration,
    createdAt: ctx.clock.now(),
  };
  ctx.state.overrides.set(record.id, record);
  ctx.state.overrideIndex.delete(record.namespaceId);
  return ok({ overrideId: record.id });
}

export interface OverrideRefInput {
  namespace: string;
  identifier: string;
}

function findOverride(ctx: EngineContext, rootKey: string | undefined, input: OverrideRefInput, action: string): Result<OverrideRecord> {
  const caller = authenticate(ctx, rootKey);
  if (!caller.ok) return caller;
  const namespace = namespaceForUse(ctx, caller.value, input.namespace, action);
  if (!namespace.ok) return namespace;
  const record = overrideIndex(ctx, namespace.value.id).exact.get(input.identifier);
  if (record === undefined) {
    return fail('err:service:data:ratelimit_override_not_found', `No override for identifier "${input.identifier}" in this namespace.`);
  }
  return ok(record);
}

export function getOverride(ctx: EngineContext, rootKey: string | undefined, input: OverrideRefInput): Result<OverrideView> {
  const found = findOverride(ctx, rootKey, input, 'read_override');
  return found.ok ? ok(viewOverride(found.value)) : found;
}

export function deleteOverride(ctx: EngineContext, rootKey: string | undefined, input: OverrideRefInput): Result<Record<string, never>> {
  const found = findOverride(ctx, rootKey, input, 'delete_override');
  if (!found.ok) return found;
  ctx.state.overrides.delete(found.value.id);
  ctx.state.overrideIndex.delete(found.value.namespaceId);
  return ok({});
}

export interface ListOverridesInput {
  namespace?: string;
  namespaceName?: string;
  limit?: number;
  cursor?: string;
}

export function listOverrides(
  ctx: EngineContext,
  rootKey: string | undefined,
  input: ListOverridesInput,
): Result<{ overrides: OverrideView[]; cursor?: string }> {
  const caller = authenticate(ctx, rootKey);
  if (!caller.ok) return caller;
  const ref = input.namespace ?? input.namespaceName;
  if (ref === undefined) return invalid('body.namespace', 'Name the namespace: send "namespace" (id or name) or "namespaceName".');
  const size = pageSize(input.limit);
  if (!size.ok) return size;
  const namespace = namespaceForUse(ctx, caller.value, ref, 'read_override');
  if (!namespace.ok) return namespace;
  const all = [...overrideIndex(ctx, namespace.value.id).exact.values()].sort(byId);
  const page = pageById(all, size.value, input.cursor);
  const overrides = page.items.map(viewOverride);
  return ok(page.cursor === undefined ? { overrides } : { overrides, cursor: page.cursor });
}

// ── limit / multiLimit ─────────────────────────────────────────────────────────────────────

export interface LimitInput {
  namespace: string;
  identifier: string;
  limit: number;
  /** Window length in ms. */
  duration: number;
  /** Default 1; 0 checks without consuming. */
  cost?: number;
}

export interface LimitOutput {
  /** The effective limit (an override's when one matched). */
  limit: number;
  remaining: number;
  /** Unix ms at which the current window ends. */
  reset: number;
  success: boolean;
  overrideId?: string;
}

const DURATION_RULE = `The duration is in milliseconds: an integer from ${MIN_LIMIT_DURATION_MS} to ${MAX_LIMIT_DURATION_MS}.`;

/**
 * The first problem of one limit request, in order, or undefined. `at` is the request's location
 * (`body`, `body[2]`); a field's location is built only for a failure, never on the hot path.
 */
function limitInputProblem(input: LimitInput, at: string): { ok: false; error: EngineError } | undefined {
  const length = input.identifier.length;
  if (length < 1 || length > 255) return invalid(`${at}.identifier`, 'An identifier must be 1 to 255 characters.');
  if (!(Number.isInteger(input.limit) && input.limit >= 1)) return invalid(`${at}.limit`, 'The limit must be an integer ≥ 1.');
  const duration = input.duration;
  if (!Number.isInteger(duration) || duration < MIN_LIMIT_DURATION_MS || duration > MAX_LIMIT_DURATION_MS) return invalid(`${at}.duration`, DURATION_RULE);
  const cost = input.cost;
  if (!(cost === undefined || (Number.isInteger(cost) && cost >= 0))) return invalid(`${at}.cost`, 'The cost must be an integer ≥ 0.');
  return undefined;
}

interface PlannedLimit {
  check: WindowCheck;
  override: OverrideRecord | undefined;
}

/** Authorises and resolves one checked request: its namespace, the override that applies, its window. */
function planLimit(ctx: EngineContext, caller: Caller, input: LimitInput): Result<PlannedLimit> {
  const namespace = namespaceForUse(ctx, caller, input.namespace, 'limit');
  if (!namespace.ok) return namespace;
  const id = namespace.value.id;
  const override = matchOverride(ctx, id, input.identifier);
  const durationMs = override === undefined ? input.duration : override.durationMs;
  return ok({
    override,
    check: {
      key: windowCounterKey(`ns:${id}`, input.identifier, durationMs),
      limit: override === undefined ? input.limit : override.limit,
      durationMs,
      cost: input.cost ?? 1,
    },
  });
}

/** Checks every request, then authorises and resolves each, before anything is consumed. */
function planLimits(ctx: EngineContext, caller: Caller, inputs: readonly LimitInput[]): Result<PlannedLimit[]> {
  for (let i = 0; i < inputs.length; i++) {
    const problem = limitInputProblem(inputs[i] as LimitInput, `body[${i}]`);
    if (problem !== undefined) return problem;
  }
  const planned: PlannedLimit[] = [];
  for (const input of inputs) {
    const one = planLimit(ctx, caller, input);
    if (!one.ok) return one;
    planned.push(one.value);
  }
  return ok(planned);
}

/**
 * The over-admission fault (faults.ts): a request the window refuses is answered as admitted,
 * with nothing counted — the answer is wrong, the window is not.
 */
function overAdmits(ctx: EngineContext, operation: string): boolean {
  const faults = ctx.faults;
  return faults !== null && strikes(faults, faults.overAdmitRate, operation);
}

export function limit(ctx: EngineContext, rootKey: string | undefined, input: LimitInput): Result<LimitOutput> {
  const caller = authenticate(ctx, rootKey);
  if (!caller.ok) return caller;
  const problem = limitInputProblem(input, 'body');
  if (problem !== undefined) return problem;
  const planned = planLimit(ctx, caller.value, input);
  if (!planned.ok) return planned;
  const { check, override } = planned.value;
  // One window: decided without the arrays and bookkeeping of several (ratelimit-window.ts).
  const decision = decideWindow(ctx.state.windows, check, ctx.clock.now());
  const out: LimitOutput = {
    limit: check.limit,
    remaining: decision.remaining,
    reset: decision.view.resetAtMs,
    success: !decision.exceeded || overAdmits(ctx, 'ratelimit.limit'),
  };
  if (override !== undefined) out.overrideId = override.id;
  return ok(out);
}

export interface MultiLimitEntry {
  namespace: string;
  identifier: string;
  limit: number;
  remaining: number;
  reset: number;
  passed: boolean;
  overrideId?: string;
}

/** Several limits decided together, all or nothing. */
export function multiLimit(
  ctx: EngineContext,
  rootKey: string | undefined,
  inputs: readonly LimitInput[],
): Result<{ passed: boolean; limits: MultiLimitEntry[] }> {
  const caller = authenticate(ctx, rootKey);
  if (!caller.ok) return caller;
  if (inputs.length === 0) return invalid('body', 'Send at least one limit request.');
  const planned = planLimits(ctx, caller.value, inputs);
  if (!planned.ok) return planned;
  const decided = decideWindows(
    ctx.state.windows,
    planned.value.map((p) => p.check),
    ctx.clock.now(),
  );
  const { decisions } = decided;
  const overAdmitted = !decided.passed && overAdmits(ctx, 'ratelimit.multiLimit');
  const passed = decided.passed || overAdmitted;
  const limits = planned.value.map((p, i): MultiLimitEntry => {
    const decision = decisions[i] as (typeof decisions)[number];
    const input = inputs[i] as LimitInput;
    const entry: MultiLimitEntry = {
      namespace: input.namespace,
      identifier: input.identifier,
      limit: p.check.limit,
      remaining: decision.remaining,
      reset: decision.view.resetAtMs,
      passed: overAdmitted || !decision.exceeded,
    };
    if (p.override !== undefined) entry.overrideId = p.override.id;
    return entry;
  });
  return ok({ passed, limits });
}
