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

const RECORD_LISTS = ['workspaces', 'rootKeys', 'apis', 'keys', 'identities', 'namespaces', 'overrides'] as const;

/** Checks the outline of a snapshot (not every field of every record) and rebuilds a state from it. */
export function stateFromSnapshot(value: unknown): Result<{ state: EngineState; snapshot: EngineSnapshot }> {
  if (typeof value !== 'object' || value === null) return invalid('body.snapshot', 'A snapshot is a JSON object taken by /_sim/snapshot.');
  const s = value as Partial<EngineSnapshot>;
  if (s.format !== SNAPSHOT_FORMAT || s.version !== SNAPSHOT_VERSION) {
    return invalid('body.snapshot.format', `Not a keysim snapshot of version ${SNAPSHOT_VERSION} (expected format "${SNAPSHOT_FORMAT}").`);
  }
  for (const list of RECORD_LISTS) {
    const records: unknown = s[list];
    if (!Array.isArray(records)) return invalid(`body.snapshot.${list}`, `The snapshot has no list "${list}".`);
    for (const [i, record] of records.entries()) {
      if (typeof record !== 'object' || record === null || typeof (record as { id?: unknown }).id !== 'string') {
        return invalid(`body.snapshot.${list}[${i}]`, 'Each record must be an object with a string id.');
      }
    }
  }
  if (!Array.isArray(s.windows)) return invalid('body.snapshot.windows', 'The snapshot has no list "windows".');
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
