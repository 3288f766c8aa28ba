/**
 * What a snapshot must satisfy before it replaces the state: every field of every record of the
 * right type and within the bounds a request could have set, and the invariants the engine keeps
 * (unique ids and hashes, references that resolve, refills the engine could have scheduled).
 * A state that breaks one would misbehave long after the restore answered: a duplicated key id
 * leaves a deleted key verifiable, a duplicated root-key hash moves keys to another workspace,
 * a refill never due never happens. The first problem is reported with its path.
 *
 * The checked snapshot is rebuilt from the known fields only (never a clone of the input), so
 * unknown fields are dropped and nothing unbounded reaches the state.
 */
import { nextRefillBoundary } from './calendar.js';
import { type Result, invalid, ok } from './errors.js';
import { MAX_TOTAL_META_BYTES, metaBytes } from './meta.js';
import type { EngineSnapshot } from './snapshot-format.js';
import type { KeyRecord, RefillConfig } from './state.js';
import { SnapshotBuilder } from './snapshot-builder.js';
import { digestOfKey } from './key-record.js';
import { SNAPSHOT_LOCATION, isObject } from './snapshot-fields.js';

export { SNAPSHOT_LOCATION };

/**
 * A checked snapshot with the two indexes of its keys that the checks for unique ids and hashes
 * build: the restored state takes them as its own (state.ts), so a restore builds each map of a
 * million entries once, not once to check and again for the state.
 */
export interface CheckedRecords {
  snapshot: EngineSnapshot;
  keysById: Map<string, KeyRecord>;
  keysByDigest: Map<string, KeyRecord>;
}

/**
 * Checks a snapshot given whole (types, bounds, invariants) and answers a clean copy of it.
 * `sha256` checks that a recoverable key's plaintext is the one its hash stands for.
 */
export function checkSnapshot(value: unknown, sha256: (text: string) => string): Result<EngineSnapshot> {
  const checked = checkSnapshotRecords(value, sha256);
  return checked.ok ? ok(checked.value.snapshot) : checked;
}

/** checkSnapshot, with the indexes of the keys (CheckedRecords). */
export function checkSnapshotRecords(value: unknown, sha256: (text: string) => string): Result<CheckedRecords> {
  if (!isObject(value)) return invalid(SNAPSHOT_LOCATION, 'A snapshot is a JSON object taken by /_sim/snapshot.');
  const builder = new SnapshotBuilder();
  for (const [name, field] of Object.entries(value)) builder.field(name, field);
  return checkBuilt(builder.finish(), sha256);
}

/** The invariants across the records of a built snapshot (SnapshotBuilder), once every record is checked. */
export function checkBuilt(built: Result<EngineSnapshot>, sha256: (text: string) => string): Result<CheckedRecords> {
  if (!built.ok) return built;
  const indexes = { keysById: new Map<string, KeyRecord>(), keysByDigest: new Map<string, KeyRecord>() };
  const broken = invariantProblem(built.value, sha256, indexes);
  return broken === undefined ? ok({ snapshot: built.value, ...indexes }) : invalid(broken.location, broken.message);
}

interface Problem {
  location: string;
  message: string;
}

/** Indexes a list by a derived key; the first duplicate is a problem. */
function uniqueBy<T>(list: readonly T[], keyOf: (record: T) => string, where: string, what: string, field?: string): Map<string, T> | Problem {
  const seen = new Map<string, number>();
  const out = new Map<string, T>();
  for (const [i, record] of list.entries()) {
    const key = keyOf(record);
    const first = seen.get(key);
    if (first !== undefined)
      return {
        location: `${SNAPSHOT_LOCATION}.${where}[${i}]${field === undefined ? '' : `.${field}`}`,
        message: `${where}[${i}] has the same ${what} as ${where}[${first}]; each must be unique.`,
      };
    seen.set(key, i);
    out.set(key, record);
  }
  return out;
}

/**
 * Fills `index` (empty) with the records by a derived key, or answers the first duplicate. The
 * index holds records, not positions, as the state's maps do (one map per list, kept for the
 * state): the position of the first of a duplicate is looked up again, on a refusal only.
 */
function indexUnique<T>(
  list: readonly T[],
  keyOf: (record: T) => string,
  index: Map<string, T>,
  where: string,
  what: string,
  field: string,
): Problem | undefined {
  for (let i = 0; i < list.length; i++) {
    const record = list[i] as T;
    const key = keyOf(record);
    if (index.has(key)) {
      const first = list.findIndex((r) => keyOf(r) === key);
      return {
        location: `${SNAPSHOT_LOCATION}.${where}[${i}].${field}`,
        message: `${where}[${i}] has the same ${what} as ${where}[${first}]; each must be unique.`,
      };
    }
    index.set(key, record);
  }
  return undefined;
}

const isProblem = (v: unknown): v is Problem => isObject(v) && typeof v.location === 'string' && typeof v.message === 'string';

function invariantProblem(s: EngineSnapshot, sha256: (text: string) => string, indexes: Omit<CheckedRecords, 'snapshot'>): Problem | undefined {
  const at = (list: string, i: number, field: string) => `${SNAPSHOT_LOCATION}.${list}[${i}].${field}`;
  const workspaces = uniqueBy(s.workspaces, (r) => r.id, 'workspaces', 'id', 'id');
  if (isProblem(workspaces)) return workspaces;
  const inWorkspace = (list: string, i: number, workspaceId: string): Problem | undefined =>
    workspaces.has(workspaceId)
      ? undefined
      : { location: at(list, i, 'workspaceId'), message: `${list}[${i}] belongs to a workspace the snapshot does not hold.` };

  if (s.rootKeys.length === 0)
    return { location: `${SNAPSHOT_LOCATION}.rootKeys`, message: 'The snapshot has no root key: restoring it would lock every client out.' };
  for (const check of [uniqueBy(s.rootKeys, (r) => r.id, 'rootKeys', 'id', 'id'), uniqueBy(s.rootKeys, (r) => r.hash, 'rootKeys', 'hash', 'hash')])
    if (isProblem(check)) return check;
  for (const [i, r] of s.rootKeys.entries()) {
    const problem = inWorkspace('rootKeys', i, r.workspaceId);
    if (problem !== undefined) return problem;
  }

  const apis = uniqueBy(s.apis, (r) => r.id, 'apis', 'id', 'id');
  if (isProblem(apis)) return apis;
  for (const [i, r] of s.apis.entries()) {
    const problem = inWorkspace('apis', i, r.workspaceId);
    if (problem !== undefined) return problem;
  }

  const identities = uniqueBy(s.identities, (r) => r.id, 'identities', 'id', 'id');
  if (isProblem(identities)) return identities;
  const externalIds = uniqueBy(s.identities, (r) => `${r.workspaceId}\0${r.externalId}`, 'identities', 'workspace and externalId');
  if (isProblem(externalIds)) return externalIds;
  for (const [i, r] of s.identities.entries()) {
    const problem = inWorkspace('identities', i, r.workspaceId);
    if (problem !== undefined) return problem;
  }

  // Ids over all keys first, then hashes: the problem reported does not depend on the pass. The
  // two indexes become the state's (CheckedRecords).
  const keyIds = indexUnique(s.keys, (r) => r.id, indexes.keysById, 'keys', 'id', 'id');
  if (keyIds !== undefined) return keyIds;
  // By digest, the form the state looks keys up by: one to one with the hashes (key-digest.ts).
  const keyHashes = indexUnique(s.keys, digestOfKey, indexes.keysByDigest, 'keys', 'hash', 'hash');
  if (keyHashes !== undefined) return keyHashes;
  for (const [i, key] of s.keys.entries()) {
    const api = apis.get(key.apiId);
    if (api === undefined) return { location: at('keys', i, 'apiId'), message: `keys[${i}] belongs to an API the snapshot does not hold.` };
    if (api.workspaceId !== key.workspaceId) return { location: at('keys', i, 'workspaceId'), message: `keys[${i}] is in another workspace than its API.` };
    // A deleted identity leaves its keys' identityId dangling (they verify without identity), but
    // an identity that exists must be in the key's workspace.
    const identity = key.identityId === null ? undefined : identities.get(key.identityId);
    if (identity !== undefined && identity.workspaceId !== key.workspaceId) {
      return { location: at('keys', i, 'identityId'), message: `keys[${i}] is linked to an identity of another workspace.` };
    }
    if (key.recoverablePlaintext !== null && sha256(key.recoverablePlaintext) !== key.hash) {
      return { location: at('keys', i, 'recoverablePlaintext'), message: `keys[${i}]'s recoverable plaintext is not the key its hash stands for.` };
    }
    const refillProblem = scheduleProblem(key.refill, key.nextRefillAtMs, s.takenAtMs);
    if (refillProblem !== undefined) return { location: at('keys', i, 'nextRefillAtMs'), message: `keys[${i}]: ${refillProblem}` };
  }

  const namespaces = uniqueBy(s.namespaces, (r) => r.id, 'namespaces', 'id', 'id');
  if (isProblem(namespaces)) return namespaces;
  const liveNames = uniqueBy(
    s.namespaces.filter((r) => r.deletedAt === null),
    (r) => `${r.workspaceId}\0${r.name}`,
    'namespaces (live)',
    'workspace and name',
  );
  if (isProblem(liveNames))
    return { location: `${SNAPSHOT_LOCATION}.namespaces`, message: 'Two live namespaces of one workspace have the same name; each name must be unique.' };
  for (const [i, r] of s.namespaces.entries()) {
    const problem = inWorkspace('namespaces', i, r.workspaceId);
    if (problem !== undefined) return problem;
  }

  const overrides = uniqueBy(s.overrides, (r) => r.id, 'overrides', 'id', 'id');
  if (isProblem(overrides)) return overrides;
  const identifiers = uniqueBy(s.overrides, (r) => `${r.namespaceId}\0${r.identifier}`, 'overrides', 'namespace and identifier');
  if (isProblem(identifiers)) return identifiers;
  for (const [i, r] of s.overrides.entries()) {
    if (!namespaces.has(r.namespaceId))
      return { location: at('overrides', i, 'namespaceId'), message: `overrides[${i}] belongs to a namespace the snapshot does not hold.` };
  }

  const windows = uniqueBy(s.windows, ([key]) => key, 'windows', 'key');
  if (isProblem(windows)) return windows;

  let metaTotal = 0;
  // Two loops, not one over a joined list: that list would be a million entries long, for nothing.
  for (const record of s.keys) metaTotal += metaBytes(record.meta);
  for (const record of s.identities) metaTotal += metaBytes(record.meta);
  if (metaTotal > MAX_TOTAL_META_BYTES) {
    return {
      location: SNAPSHOT_LOCATION,
      message: `The snapshot holds more than ${MAX_TOTAL_META_BYTES} bytes of metadata in all, more than the simulator keeps.`,
    };
  }
  return undefined;
}

/**
 * A refill is scheduled as the engine schedules it: at a boundary of its own calendar, never
 * later than the first boundary after the snapshot's instant (a snapshot settles every key to
 * its instant), and never missing.
 */
function scheduleProblem(refill: RefillConfig | null, nextMs: number | null, takenAtMs: number): string | undefined {
  if (refill === null) return nextMs === null ? undefined : 'it has no refill but a next refill instant (nextRefillAtMs must be null).';
  if (nextMs === null) return 'it has a refill that is never scheduled (nextRefillAtMs is null), so it would never happen.';
  const day = refill.refillDay ?? 1;
  if (nextMs === 0 || nextRefillBoundary(nextMs - 1, refill.interval, day) !== nextMs) {
    return `its next refill (nextRefillAtMs ${nextMs}) is not a ${refill.interval} refill instant (00:00 UTC${refill.interval === 'monthly' ? ` on day ${day}` : ''}).`;
  }
  const due = nextRefillBoundary(takenAtMs, refill.interval, day);
  if (nextMs > due)
    return `its next refill (nextRefillAtMs ${nextMs}) comes after the first refill due after the snapshot's instant (${due}): the refills between would never happen.`;
  return undefined;
}
