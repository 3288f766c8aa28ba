/**
 * The whole state as plain JSON, and back. Keys are settled to the snapshot's instant first, so
 * two states that differ only in refills not yet applied (which no operation could tell apart)
 * give equal snapshots.
 */
import type { EngineContext } from './context.js';
import { settleRefill } from './credits.js';
import { type Result, ok } from './errors.js';
import { MAX_META_DEPTH, metaBytes } from './meta.js';
import { type CheckedRecords, checkBuilt, checkSnapshotRecords } from './snapshot-check.js';
import { StoredKey, keyToJson } from './key-record.js';
import { type EngineSnapshot, SNAPSHOT_FORMAT, SNAPSHOT_VERSION } from './snapshot-format.js';
import { type EngineState, emptyState, externalIdKey, namespaceNameKey } from './state.js';

export { type CheckedRecords, type EngineSnapshot, SNAPSHOT_FORMAT, SNAPSHOT_VERSION };

/**
 * `settle` false copies the state exactly as it stands, refills due but not yet applied included:
 * for a copy that must not change what it copies (a store checkpoint, where a settled refill could
 * differ from one a skip-refill fault would have skipped later).
 */
export function takeSnapshot(ctx: EngineContext, seed: number, settle = true): EngineSnapshot {
  const nowMs = ctx.clock.now();
  const { state } = ctx;
  if (settle) for (const key of state.keys.values()) settleRefill(key, nowMs, ctx.compat);
  // Keys are copied field by field (keyToJson): a stored key keeps its defaults on its prototype,
  // which a structured clone would leave out. Copying them outside the clone also keeps one copy.
  const keys = Array.from(state.keys.values(), keyToJson);
  const snapshot: EngineSnapshot = structuredClone({
    format: SNAPSHOT_FORMAT,
    version: SNAPSHOT_VERSION,
    compat: ctx.compat,
    seed,
    randomState: ctx.random.getState(),
    takenAtMs: nowMs,
    workspaces: [...state.workspaces.values()],
    rootKeys: [...state.rootKeysByHash.values()],
    apis: [...state.apis.values()],
    keys: [],
    identities: [...state.identities.values()],
    namespaces: [...state.namespaces.values()],
    overrides: [...state.overrides.values()],
    windows: [...state.windows.entries()],
  });
  snapshot.keys = keys;
  return snapshot;
}

/**
 * The deepest nesting a snapshot can have: metadata (at most MAX_META_DEPTH levels) sits three
 * levels down (snapshot → list → record → meta). A restore request is bounded by it, so every
 * state the service accepts can be restored.
 */
export const SNAPSHOT_MAX_DEPTH = MAX_META_DEPTH + 3;

/**
 * A snapshot that passed every check (snapshot-check.ts), its records in their stored form: what
 * a restore swaps in. Only the checks make one, so a state is never built from unchecked records.
 */
export class CheckedSnapshot {
  #records: CheckedRecords | null;
  /** The instant the snapshot was taken at. */
  readonly takenAtMs: number;
  /** The seed of the engine it was taken from. */
  readonly seed: number;
  readonly #rootKeyHashes: ReadonlySet<string>;
  private constructor(records: CheckedRecords) {
    const { snapshot } = records;
    this.#records = records;
    this.takenAtMs = snapshot.takenAtMs;
    this.seed = snapshot.seed;
    this.#rootKeyHashes = new Set(snapshot.rootKeys.map((r) => r.hash));
  }

  /** Whether it holds a root key of this hash (the operator's, for a simulator's restore). */
  hasRootKeyHash(hash: string): boolean {
    return this.#rootKeyHashes.has(hash);
  }

  /** A plain copy of the snapshot (what takeSnapshot would give, refills not settled), e.g. for a journal. */
  plain(): EngineSnapshot {
    const snapshot = this.#records?.snapshot;
    if (snapshot === undefined) throw new Error('a checked snapshot restores once: its records now belong to a state');
    const keys = snapshot.keys.map(keyToJson);
    const copy: EngineSnapshot = structuredClone({ ...snapshot, keys: [] });
    copy.keys = keys;
    return copy;
  }

  /** Hands the records out once: they become a state's, which changes them. */
  consume(): CheckedRecords {
    const records = this.#records;
    if (records === null) throw new Error('a checked snapshot restores once: its records now belong to a state');
    this.#records = null;
    return records;
  }

  /** The checked snapshot, or the first problem. */
  static from(built: Result<EngineSnapshot>, sha256: (text: string) => string): Result<CheckedSnapshot> {
    const checked = checkBuilt(built, sha256);
    return checked.ok ? ok(new CheckedSnapshot(checked.value)) : checked;
  }
}

/** Checks a snapshot given whole (snapshot-check.ts) and rebuilds a state from it. */
export function stateFromSnapshot(value: unknown, sha256: (text: string) => string): Result<{ state: EngineState; snapshot: EngineSnapshot }> {
  const checked = checkSnapshotRecords(value, sha256);
  return checked.ok ? ok({ state: stateFromChecked(checked.value), snapshot: checked.value.snapshot }) : checked;
}

/**
 * The state holding the records of a checked snapshot, with its lookup indexes: the keys' two are
 * the ones the checks built (CheckedRecords), taken over as they are.
 */
export function stateFromChecked({ snapshot, keysById, keysByDigest }: CheckedRecords): EngineState {
  const state = emptyState();
  state.keys = keysById;
  state.keysByDigest = keysByDigest;
  for (const r of snapshot.workspaces) state.workspaces.set(r.id, r);
  for (const r of snapshot.rootKeys) state.rootKeysByHash.set(r.hash, r);
  for (const r of snapshot.apis) state.apis.set(r.id, r);
  let owner: unknown;
  for (const r of snapshot.keys) {
    // The keys' owners become the state's (keys of one API usually follow one another).
    if (r instanceof StoredKey && r.owner !== owner) {
      owner = r.owner;
      state.keyOwners.adopt(r.owner);
    }
    state.metaBytes += metaBytes(r.meta);
  }
  for (const r of snapshot.identities) {
    state.identities.set(r.id, r);
    state.identitiesByExternalId.set(externalIdKey(r.workspaceId, r.externalId), r);
    state.metaBytes += metaBytes(r.meta);
  }
  for (const r of snapshot.namespaces) {
    state.namespaces.set(r.id, r);
    if (r.deletedAt === null) state.namespacesByName.set(namespaceNameKey(r.workspaceId, r.name), r);
  }
  for (const r of snapshot.overrides) state.overrides.set(r.id, r);
  for (const [key, counter] of snapshot.windows) state.windows.set(key, counter);
  // The records are the checked copies, shared with the snapshot (used for randomState).
  return state;
}
