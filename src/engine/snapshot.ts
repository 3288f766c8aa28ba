/**
 * The whole state as plain JSON, and back. Keys are settled to the snapshot's instant first, so
 * two states that differ only in refills not yet applied (which no operation could tell apart)
 * give equal snapshots.
 */
import type { EpochMs } from './clock.js';
import type { Compat, EngineContext } from './context.js';
import { settleRefill } from './credits.js';
import { type Result, invalid, ok } from './errors.js';
import {
  type ApiRecord,
  type EngineState,
  type IdentityRecord,
  type KeyRecord,
  type NamespaceRecord,
  type OverrideRecord,
  type RootKeyRecord,
  type WindowCounter,
  type WorkspaceRecord,
  emptyState,
  externalIdKey,
  namespaceNameKey,
} from './state.js';

export const SNAPSHOT_FORMAT = 'keysim-engine-snapshot';
export const SNAPSHOT_VERSION = 1;

export interface EngineSnapshot {
  format: typeof SNAPSHOT_FORMAT;
  version: typeof SNAPSHOT_VERSION;
  compat: Compat;
  seed: number;
  /** The random generator's position, so a restored engine draws the same ids as the original. */
  randomState: [number, number, number, number];
  takenAtMs: EpochMs;
  workspaces: WorkspaceRecord[];
  rootKeys: RootKeyRecord[];
  apis: ApiRecord[];
  keys: KeyRecord[];
  identities: IdentityRecord[];
  namespaces: NamespaceRecord[];
  overrides: OverrideRecord[];
  windows: Array<[string, WindowCounter]>;
}

export function takeSnapshot(ctx: EngineContext, seed: number): EngineSnapshot {
  const nowMs = ctx.clock.now();
  const { state } = ctx;
  for (const key of state.keys.values()) settleRefill(key, nowMs, ctx.compat);
  return structuredClone({
    format: SNAPSHOT_FORMAT,
    version: SNAPSHOT_VERSION,
    compat: ctx.compat,
    seed,
    randomState: ctx.random.getState(),
    takenAtMs: nowMs,
    workspaces: [...state.workspaces.values()],
    rootKeys: [...state.rootKeysByHash.values()],
    apis: [...state.apis.values()],
    keys: [...state.keys.values()],
    identities: [...state.identities.values()],
    namespaces: [...state.namespaces.values()],
    overrides: [...state.overrides.values()],
    windows: [...state.windows.entries()],
  });
}

// Field checks of every record, so that a restored snapshot can never make a later request fail:
// a wrong type would surface as a 500 long after the restore answered 200.
type FieldCheck = (value: unknown) => boolean;
const str: FieldCheck = (v) => typeof v === 'string';
const bool: FieldCheck = (v) => typeof v === 'boolean';
const int = (min = 0): FieldCheck => (v) => Number.isSafeInteger(v) && (v as number) >= min;
const orNull = (check: FieldCheck): FieldCheck => (v) => v === null || check(v);
const strings: FieldCheck = (v) => Array.isArray(v) && v.every(str);
const object: FieldCheck = (v) => typeof v === 'object' && v !== null && !Array.isArray(v);
const shape = (fields: Record<string, FieldCheck>): FieldCheck => (v) => object(v) && Object.entries(fields).every(([k, check]) => check((v as Record<string, unknown>)[k]));
const rateLimit = shape({ id: str, name: str, limit: int(1), durationMs: int(1), autoApply: bool });
const rateLimits: FieldCheck = (v) => Array.isArray(v) && v.every(rateLimit);
const refill = shape({
  interval: (v) => v === 'daily' || v === 'monthly',
  amount: int(1),
  refillDay: orNull((v) => Number.isInteger(v) && (v as number) >= 1 && (v as number) <= 31),
});

const RECORD_FIELDS = {
  workspaces: { id: str, name: str, vaultEnabled: bool, createdAt: int() },
  rootKeys: { id: str, hash: str, workspaceId: str, permissions: strings, createdAt: int() },
  apis: { id: str, workspaceId: str, name: str, keyAuth: bool, encryption: bool, createdAt: int() },
  keys: {
    id: str,
    apiId: str,
    workspaceId: str,
    hash: str,
    start: str,
    name: orNull(str),
    meta: orNull(object),
    permissions: strings,
    roles: strings,
    expiresAtMs: orNull(int()),
    enabled: bool,
    createdAt: int(),
    identityId: orNull(str),
    remaining: orNull(int()),
    refill: orNull(refill),
    nextRefillAtMs: orNull(int()),
    ratelimits: rateLimits,
    recoverablePlaintext: orNull(str),
  },
  identities: { id: str, workspaceId: str, externalId: str, meta: orNull(object), ratelimits: rateLimits, createdAt: int() },
  namespaces: { id: str, workspaceId: str, name: str, createdAt: int(), deletedAt: orNull(int()) },
  overrides: { id: str, namespaceId: str, identifier: str, limit: int(0), durationMs: int(1), createdAt: int() },
} satisfies Record<string, Record<string, FieldCheck>>;
const RECORD_LISTS = Object.keys(RECORD_FIELDS) as Array<keyof typeof RECORD_FIELDS>;
const windowCounter = shape({ window: int(), current: int(), previous: int() });

/** Checks every field of every record and rebuilds a state from the snapshot. */
export function stateFromSnapshot(value: unknown): Result<{ state: EngineState; snapshot: EngineSnapshot }> {
  if (typeof value !== 'object' || value === null) return invalid('body.snapshot', 'A snapshot is a JSON object taken by /_sim/snapshot.');
  const s = value as Partial<EngineSnapshot>;
  if (s.format !== SNAPSHOT_FORMAT || s.version !== SNAPSHOT_VERSION) {
    return invalid('body.snapshot.format', `Not a keysim snapshot of version ${SNAPSHOT_VERSION} (expected format "${SNAPSHOT_FORMAT}").`);
  }
  for (const list of RECORD_LISTS) {
    const records: unknown = s[list];
    if (!Array.isArray(records)) return invalid(`body.snapshot.${list}`, `The snapshot has no list "${list}".`);
    const fields: Record<string, FieldCheck> = RECORD_FIELDS[list];
    for (const [i, record] of records.entries()) {
      if (!object(record)) return invalid(`body.snapshot.${list}[${i}]`, 'Each record must be an object.');
      for (const [field, check] of Object.entries(fields)) {
        if (!check((record as Record<string, unknown>)[field])) {
          return invalid(`body.snapshot.${list}[${i}].${field}`, `The field "${field}" of a record in "${list}" is missing or of the wrong type.`);
        }
      }
    }
  }
  if ((s.rootKeys ?? []).length === 0) {
    return invalid('body.snapshot.rootKeys', 'The snapshot has no root key: restoring it would lock every client out.');
  }
  if (!Array.isArray(s.windows)) return invalid('body.snapshot.windows', 'The snapshot has no list "windows".');
  for (const [i, entry] of s.windows.entries()) {
    if (!Array.isArray(entry) || entry.length !== 2 || !str(entry[0]) || !windowCounter(entry[1])) {
      return invalid(`body.snapshot.windows[${i}]`, 'Each window is [key, { window, current, previous }].');
    }
  }
  const rs = s.randomState;
  if (!Array.isArray(rs) || rs.length !== 4 || !rs.every((n) => Number.isInteger(n))) {
    return invalid('body.snapshot.randomState', 'The snapshot has no valid randomState.');
  }
  const snapshot = structuredClone(s) as EngineSnapshot;
  const state = emptyState();
  for (const r of snapshot.workspaces) state.workspaces.set(r.id, r);
  for (const r of snapshot.rootKeys) state.rootKeysByHash.set(r.hash, r);
  for (const r of snapshot.apis) state.apis.set(r.id, r);
  for (const r of snapshot.keys) {
    state.keys.set(r.id, r);
    state.keysByHash.set(r.hash, r);
  }
  for (const r of snapshot.identities) {
    state.identities.set(r.id, r);
    state.identitiesByExternalId.set(externalIdKey(r.workspaceId, r.externalId), r);
  }
  for (const r of snapshot.namespaces) {
    state.namespaces.set(r.id, r);
    if (r.deletedAt === null) state.namespacesByName.set(namespaceNameKey(r.workspaceId, r.name), r);
  }
  for (const r of snapshot.overrides) state.overrides.set(r.id, r);
  for (const [key, counter] of snapshot.windows) state.windows.set(key, counter);
  return ok({ state, snapshot });
}
