/**
 * Rate-limit overrides (docs/service-model.md#rate-limits): set, read, deleted, listed, and the
 * one that applies to an identifier (an exact identifier, or the most specific wildcard).
 */
import type { EngineContext } from './context.js';
import { newId } from './context.js';
import { authenticate } from './auth.js';
import { type Result, fail, invalid, ok } from './errors.js';
import { byId, pageById, pageSize } from './pagination.js';
import type { OverrideIndex, OverrideRecord } from './state.js';
import { MAX_LIMIT_DURATION_MS, MIN_LIMIT_DURATION_MS } from './ratelimit-window.js';
import { namespaceForUse } from './ratelimit-namespaces.js';

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
