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
import { MAX_INSTANT_MS } from './clock.js';
import { MAX_CREDITS } from './credits.js';
import { type Result, invalid, ok } from './errors.js';
import { MAX_TOTAL_META_BYTES, metaBytes, metaProblem } from './meta.js';
import { MAX_LIMIT_DURATION_MS, MIN_LIMIT_DURATION_MS } from './ratelimit.js';
import type { EngineSnapshot } from './snapshot-format.js';
import type { JsonObject, KeyRecord, RateLimitRecord, RefillConfig } from './state.js';
import { restoredKey } from './key-record.js';
import { NO_RATE_LIMITS } from './attached-ratelimits.js';

/** Where a snapshot sits in a restore request; problems are reported under it. */
export const SNAPSHOT_LOCATION = 'body.snapshot';

type Fields = Record<string, unknown>;
/** A field's problem as a sentence fragment ("must be …"), or undefined when it is fine. */
type FieldCheck = (value: unknown) => string | undefined;

const isObject = (v: unknown): v is Fields => typeof v === 'object' && v !== null && !Array.isArray(v);
const str =
  (min = 0, max = Number.MAX_SAFE_INTEGER): FieldCheck =>
  (v) =>
    typeof v !== 'string' ? 'must be a string' : v.length < min || v.length > max ? `must be ${min} to ${max} characters long` : undefined;
const bool: FieldCheck = (v) => (typeof v === 'boolean' ? undefined : 'must be a boolean');
const int =
  (min = 0, max = Number.MAX_SAFE_INTEGER): FieldCheck =>
  (v) =>
    Number.isSafeInteger(v) && (v as number) >= min && (v as number) <= max ? undefined : `must be an integer from ${min} to ${max}`;
const instant = int(0, MAX_INSTANT_MS);
const orNull =
  (check: FieldCheck): FieldCheck =>
  (v) =>
    v === null ? undefined : check(v);
const names =
  (unique: boolean): FieldCheck =>
  (v) => {
    if (!Array.isArray(v)) return 'must be an array of names';
    const bad = v.findIndex((name) => typeof name !== 'string' || name.length < 1 || name.length > 512);
    if (bad !== -1) return `has an entry (index ${bad}) that is not a name of 1 to 512 characters`;
    // Keys store their permissions and roles as sets; root keys keep the list as given.
    return !unique || new Set(v).size === v.length ? undefined : 'has an entry twice';
  };
const meta: FieldCheck = (v) => {
  if (v === null) return undefined;
  const found = metaProblem(v);
  return 'bytes' in found ? undefined : found.problem;
};
const externalId: FieldCheck = (v) => (typeof v === 'string' && /^[A-Za-z0-9_.-]{1,255}$/.test(v) ? undefined : 'must be 1 to 255 letters, digits, "_", "." or "-"');
const rateLimit: Record<string, FieldCheck> = {
  id: str(1, 255),
  name: str(1, 128),
  limit: int(1),
  durationMs: int(MIN_LIMIT_DURATION_MS, MAX_LIMIT_DURATION_MS),
  autoApply: bool,
};
const rateLimits: FieldCheck = (v) => {
  if (!Array.isArray(v)) return 'must be an array';
  const seen = new Set<unknown>();
  for (const [i, limit] of v.entries()) {
    const problem = fieldsProblem(limit, rateLimit);
    if (problem !== undefined) return `has an entry (index ${i}) whose ${problem}`;
    const name = (limit as Fields).name;
    if (seen.has(name)) return `has two limits of the same name (index ${i})`;
    seen.add(name);
  }
  return undefined;
};
const refill: FieldCheck = (v) => {
  if (!isObject(v)) return 'must be an object or null';
  if (v.interval !== 'daily' && v.interval !== 'monthly') return 'has an interval other than "daily" or "monthly"';
  if (int(1, MAX_CREDITS)(v.amount) !== undefined) return `has an amount that is not an integer from 1 to ${MAX_CREDITS}`;
  if (v.interval === 'daily' && v.refillDay !== null) return 'is daily but has a refillDay (daily refills have refillDay null)';
  if (v.interval === 'monthly' && int(1, 31)(v.refillDay) !== undefined) return 'is monthly but its refillDay is not an integer from 1 to 31';
  return undefined;
};

const RECORD_FIELDS = {
  workspaces: { id: str(1, 255), name: str(0, 255), vaultEnabled: bool, createdAt: instant },
  rootKeys: { id: str(1, 255), hash: str(1, 255), workspaceId: str(1, 255), permissions: names(false), createdAt: instant },
  apis: { id: str(1, 255), workspaceId: str(1, 255), name: str(0, 255), keyAuth: bool, encryption: bool, createdAt: instant },
  keys: {
    id: str(1, 255),
    apiId: str(1, 255),
    workspaceId: str(1, 255),
    hash: str(1, 255),
    start: str(0, 255),
    name: orNull(str(1, 255)),
    meta,
    permissions: names(true),
    roles: names(true),
    expiresAtMs: orNull(int()),
    enabled: bool,
    createdAt: instant,
    identityId: orNull(str(1, 255)),
    remaining: orNull(int(0, MAX_CREDITS)),
    refill: orNull(refill),
    nextRefillAtMs: orNull(instant),
    ratelimits: rateLimits,
    recoverablePlaintext: orNull(str(1, 1024)),
  },
  identities: { id: str(1, 255), workspaceId: str(1, 255), externalId, meta, ratelimits: rateLimits, createdAt: instant },
  namespaces: { id: str(1, 255), workspaceId: str(1, 255), name: str(1, 255), createdAt: instant, deletedAt: orNull(instant) },
  overrides: {
    id: str(1, 255),
    namespaceId: str(1, 255),
    identifier: str(1, 255),
    limit: int(0),
    durationMs: int(MIN_LIMIT_DURATION_MS, MAX_LIMIT_DURATION_MS),
    createdAt: instant,
  },
} satisfies Record<string, Record<string, FieldCheck>>;
type RecordList = keyof typeof RECORD_FIELDS;
const RECORD_LISTS = Object.keys(RECORD_FIELDS) as RecordList[];
const windowCounter: Record<string, FieldCheck> = { window: int(), current: int(), previous: int() };

/** The first bad field (`field` undefined when the value is no object) and its problem, or undefined. */
function badField(value: unknown, fields: Record<string, FieldCheck>): { field?: string; problem: string } | undefined {
  if (!isObject(value)) return { problem: 'value is not an object' };
  for (const [field, check] of Object.entries(fields)) {
    if (!Object.hasOwn(value, field)) return { field, problem: `field "${field}" is missing` };
    const problem = check(value[field]);
    if (problem !== undefined) return { field, problem: `field "${field}" ${problem}` };
  }
  return undefined;
}

/** `field "x" must be …` for the first bad field, or undefined. */
function fieldsProblem(value: unknown, fields: Record<string, FieldCheck>): string | undefined {
  return badField(value, fields)?.problem;
}

/** A copy of the known fields only (values are checked, so their nesting is bounded). */
function known<T>(record: Fields, fields: Record<string, FieldCheck>): T {
  const copy: Fields = {};
  for (const field of Object.keys(fields)) copy[field] = record[field];
  return copy as T;
}

const copyRateLimits = (list: RateLimitRecord[]): RateLimitRecord[] => list.map((r) => known<RateLimitRecord>(r as unknown as Fields, rateLimit));
const copyMeta = (m: JsonObject | null): JsonObject | null => (m === null ? null : structuredClone(m));

/**
 * The checked key records as stored keys. A key refers to its API and workspace by the very
 * strings the API records hold, as created keys do, instead of a copy per key that parsing the
 * JSON made (two strings of 40 bytes per key: 80 MB at a million keys).
 */
function restoredKeys(records: Fields[], apis: Fields[]): KeyRecord[] {
  const shared = new Map<string, string>();
  for (const api of apis) {
    shared.set(api.id as string, api.id as string);
    if (!shared.has(api.workspaceId as string)) shared.set(api.workspaceId as string, api.workspaceId as string);
  }
  return records.map((r) => {
    const key = r as unknown as KeyRecord;
    const stored = restoredKey(key, copyMeta(key.meta), key.ratelimits.length === 0 ? NO_RATE_LIMITS : copyRateLimits(key.ratelimits));
    stored.apiId = shared.get(stored.apiId) ?? stored.apiId;
    stored.workspaceId = shared.get(stored.workspaceId) ?? stored.workspaceId;
    return stored;
  });
}

/**
 * Checks a snapshot (types, bounds, invariants) and answers a clean copy of it. `sha256` checks
 * that a recoverable key's plaintext is the one its hash stands for.
 */
export function checkSnapshot(value: unknown, format: string, version: number, sha256: (text: string) => string): Result<EngineSnapshot> {
  const at = SNAPSHOT_LOCATION;
  if (!isObject(value)) return invalid(at, 'A snapshot is a JSON object taken by /_sim/snapshot.');
  if (value.format !== format || value.version !== version) {
    return invalid(`${at}.format`, `Not a keysim snapshot of version ${version} (expected format "${format}").`);
  }
  if (value.compat !== 'interface' && value.compat !== 'production') return invalid(`${at}.compat`, 'compat must be "interface" or "production".');
  if (!Number.isSafeInteger(value.seed)) return invalid(`${at}.seed`, 'seed must be an integer.');
  if (instant(value.takenAtMs) !== undefined) return invalid(`${at}.takenAtMs`, `takenAtMs must be an instant from 0 to ${MAX_INSTANT_MS} ms.`);
  const rs = value.randomState;
  if (!Array.isArray(rs) || rs.length !== 4 || !rs.every((n) => Number.isSafeInteger(n))) {
    return invalid(`${at}.randomState`, 'randomState must be the four integers of the random generator.');
  }
  for (const list of RECORD_LISTS) {
    const records = value[list];
    if (!Array.isArray(records)) return invalid(`${at}.${list}`, `The snapshot has no list "${list}".`);
    for (const [i, record] of records.entries()) {
      const bad = badField(record, RECORD_FIELDS[list]);
      if (bad !== undefined) {
        return invalid(`${at}.${list}[${i}]${bad.field === undefined ? '' : `.${bad.field}`}`, `A record of "${list}" (index ${i}): its ${bad.problem}.`);
      }
    }
  }
  if (!Array.isArray(value.windows)) return invalid(`${at}.windows`, 'The snapshot has no list "windows".');
  for (const [i, entry] of value.windows.entries()) {
    if (!Array.isArray(entry) || entry.length !== 2 || typeof entry[0] !== 'string' || fieldsProblem(entry[1], windowCounter) !== undefined) {
      return invalid(`${at}.windows[${i}]`, 'Each window is [key, { window, current, previous }] with integers ≥ 0.');
    }
  }
  const snapshot: EngineSnapshot = {
    format: value.format as EngineSnapshot['format'],
    version: value.version as EngineSnapshot['version'],
    compat: value.compat,
    seed: value.seed as number,
    randomState: [rs[0], rs[1], rs[2], rs[3]] as [number, number, number, number],
    takenAtMs: value.takenAtMs as number,
    workspaces: (value.workspaces as Fields[]).map((r) => known(r, RECORD_FIELDS.workspaces)),
    rootKeys: (value.rootKeys as Fields[]).map((r) => ({ ...known<EngineSnapshot['rootKeys'][number]>(r, RECORD_FIELDS.rootKeys), permissions: [...(r.permissions as string[])] })),
    apis: (value.apis as Fields[]).map((r) => known(r, RECORD_FIELDS.apis)),
    // Keys are rebuilt as createKey builds them (key-record.ts), straight from the checked fields.
    keys: restoredKeys(value.keys as Fields[], value.apis as Fields[]),
    identities: (value.identities as Fields[]).map((r) => {
      const identity = known<EngineSnapshot['identities'][number]>(r, RECORD_FIELDS.identities);
      return { ...identity, meta: copyMeta(identity.meta), ratelimits: copyRateLimits(identity.ratelimits) };
    }),
    namespaces: (value.namespaces as Fields[]).map((r) => known(r, RECORD_FIELDS.namespaces)),
    overrides: (value.overrides as Fields[]).map((r) => known(r, RECORD_FIELDS.overrides)),
    windows: (value.windows as Array<[string, Fields]>).map(([key, counter]) => [key, known(counter, windowCounter)]),
  };
  const broken = invariantProblem(snapshot, sha256);
  return broken === undefined ? ok(snapshot) : invalid(broken.location, broken.message);
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
    if (first !== undefined) return { location: `${SNAPSHOT_LOCATION}.${where}[${i}]${field === undefined ? '' : `.${field}`}`, message: `${where}[${i}] has the same ${what} as ${where}[${first}]; each must be unique.` };
    seen.set(key, i);
    out.set(key, record);
  }
  return out;
}

/** uniqueBy without the index (one map instead of two): the first duplicate, or undefined. */
function firstDuplicate<T>(list: readonly T[], keyOf: (record: T) => string, where: string, what: string, field?: string): Problem | undefined {
  const seen = new Map<string, number>();
  for (let i = 0; i < list.length; i++) {
    const key = keyOf(list[i] as T);
    const first = seen.get(key);
    if (first !== undefined) return { location: `${SNAPSHOT_LOCATION}.${where}[${i}]${field === undefined ? '' : `.${field}`}`, message: `${where}[${i}] has the same ${what} as ${where}[${first}]; each must be unique.` };
    seen.set(key, i);
  }
  return undefined;
}

const isProblem = (v: unknown): v is Problem => isObject(v) && typeof v.location === 'string' && typeof v.message === 'string';

function invariantProblem(s: EngineSnapshot, sha256: (text: string) => string): Problem | undefined {
  const at = (list: string, i: number, field: string) => `${SNAPSHOT_LOCATION}.${list}[${i}].${field}`;
  const workspaces = uniqueBy(s.workspaces, (r) => r.id, 'workspaces', 'id', 'id');
  if (isProblem(workspaces)) return workspaces;
  const inWorkspace = (list: string, i: number, workspaceId: string): Problem | undefined =>
    workspaces.has(workspaceId) ? undefined : { location: at(list, i, 'workspaceId'), message: `${list}[${i}] belongs to a workspace the snapshot does not hold.` };

  if (s.rootKeys.length === 0) return { location: `${SNAPSHOT_LOCATION}.rootKeys`, message: 'The snapshot has no root key: restoring it would lock every client out.' };
  for (const check of [uniqueBy(s.rootKeys, (r) => r.id, 'rootKeys', 'id', 'id'), uniqueBy(s.rootKeys, (r) => r.hash, 'rootKeys', 'hash', 'hash')]) if (isProblem(check)) return check;
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

  // One index at a time, each dropped before the next: at a million keys each is tens of MB.
  const keyIds = firstDuplicate(s.keys, (r) => r.id, 'keys', 'id', 'id');
  if (keyIds !== undefined) return keyIds;
  const keyHashes = firstDuplicate(s.keys, (r) => r.hash, 'keys', 'hash', 'hash');
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
  if (isProblem(liveNames)) return { location: `${SNAPSHOT_LOCATION}.namespaces`, message: 'Two live namespaces of one workspace have the same name; each name must be unique.' };
  for (const [i, r] of s.namespaces.entries()) {
    const problem = inWorkspace('namespaces', i, r.workspaceId);
    if (problem !== undefined) return problem;
  }

  const overrides = uniqueBy(s.overrides, (r) => r.id, 'overrides', 'id', 'id');
  if (isProblem(overrides)) return overrides;
  const identifiers = uniqueBy(s.overrides, (r) => `${r.namespaceId}\0${r.identifier}`, 'overrides', 'namespace and identifier');
  if (isProblem(identifiers)) return identifiers;
  for (const [i, r] of s.overrides.entries()) {
    if (!namespaces.has(r.namespaceId)) return { location: at('overrides', i, 'namespaceId'), message: `overrides[${i}] belongs to a namespace the snapshot does not hold.` };
  }

  const windows = uniqueBy(s.windows, ([key]) => key, 'windows', 'key');
  if (isProblem(windows)) return windows;

  let metaTotal = 0;
  for (const record of [...s.keys, ...s.identities]) metaTotal += metaBytes(record.meta);
  if (metaTotal > MAX_TOTAL_META_BYTES) {
    return { location: SNAPSHOT_LOCATION, message: `The snapshot holds more than ${MAX_TOTAL_META_BYTES} bytes of metadata in all, more than the simulator keeps.` };
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
  if (nextMs > due) return `its next refill (nextRefillAtMs ${nextMs}) comes after the first refill due after the snapshot's instant (${due}): the refills between would never happen.`;
  return undefined;
}
