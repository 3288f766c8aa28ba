/**
 * The fields of a snapshot's records: each field's type and the bounds a request could have set,
 * and the copy of a checked record that keeps only the known fields (so unknown fields are
 * dropped and nothing unbounded reaches the state). Used record by record by the snapshot
 * builder (snapshot-builder.ts), whether the snapshot arrives whole or one record at a time.
 */
import { MAX_INSTANT_MS } from './clock.js';
import { MAX_CREDITS } from './credits.js';
import { metaProblem } from './meta.js';
import { MAX_LIMIT_DURATION_MS, MIN_LIMIT_DURATION_MS } from './ratelimit.js';
import type { JsonObject, RateLimitRecord } from './state.js';

/** Where a snapshot sits in a restore request; problems are reported under it. */
export const SNAPSHOT_LOCATION = 'body.snapshot';

export type Fields = Record<string, unknown>;
/** A field's problem as a sentence fragment ("must be …"), or undefined when it is fine. */
export type FieldCheck = (value: unknown) => string | undefined;

export const isObject = (v: unknown): v is Fields => typeof v === 'object' && v !== null && !Array.isArray(v);
const str =
  (min = 0, max = Number.MAX_SAFE_INTEGER): FieldCheck =>
  (v) =>
    typeof v !== 'string' ? 'must be a string' : v.length < min || v.length > max ? `must be ${min} to ${max} characters long` : undefined;
const bool: FieldCheck = (v) => (typeof v === 'boolean' ? undefined : 'must be a boolean');
const int =
  (min = 0, max = Number.MAX_SAFE_INTEGER): FieldCheck =>
  (v) =>
    Number.isSafeInteger(v) && (v as number) >= min && (v as number) <= max ? undefined : `must be an integer from ${min} to ${max}`;
export const instant = int(0, MAX_INSTANT_MS);
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
    // Keys store their permissions and roles as sets; root keys keep the list as given. (A list
    // of fewer than two has no entry twice: no set is built for each of a million empty lists.)
    return !unique || v.length < 2 || new Set(v).size === v.length ? undefined : 'has an entry twice';
  };
const meta: FieldCheck = (v) => {
  if (v === null) return undefined;
  const found = metaProblem(v);
  return 'bytes' in found ? undefined : found.problem;
};
const externalId: FieldCheck = (v) =>
  typeof v === 'string' && /^[A-Za-z0-9_.-]{1,255}$/.test(v) ? undefined : 'must be 1 to 255 letters, digits, "_", "." or "-"';
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

export const RECORD_FIELDS = {
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
export type RecordList = keyof typeof RECORD_FIELDS;
export const RECORD_LISTS = Object.keys(RECORD_FIELDS) as RecordList[];
export const windowCounter: Record<string, FieldCheck> = { window: int(), current: int(), previous: int() };

/** The checks of each record type as a list, made once: a restore checks a million records. */
const CHECK_LISTS = new WeakMap<Record<string, FieldCheck>, Array<[string, FieldCheck]>>();

function checkList(fields: Record<string, FieldCheck>): Array<[string, FieldCheck]> {
  let list = CHECK_LISTS.get(fields);
  if (list === undefined) {
    list = Object.entries(fields);
    CHECK_LISTS.set(fields, list);
  }
  return list;
}

/** The first bad field (`field` undefined when the value is no object) and its problem, or undefined. */
export function badField(value: unknown, fields: Record<string, FieldCheck>): { field?: string; problem: string } | undefined {
  if (!isObject(value)) return { problem: 'value is not an object' };
  for (const [field, check] of checkList(fields)) {
    if (!Object.hasOwn(value, field)) return { field, problem: `field "${field}" is missing` };
    const problem = check(value[field]);
    if (problem !== undefined) return { field, problem: `field "${field}" ${problem}` };
  }
  return undefined;
}

/** `field "x" must be …` for the first bad field, or undefined. */
export function fieldsProblem(value: unknown, fields: Record<string, FieldCheck>): string | undefined {
  return badField(value, fields)?.problem;
}

/** A copy of the known fields only (values are checked, so their nesting is bounded). */
export function known<T>(record: Fields, fields: Record<string, FieldCheck>): T {
  const copy: Fields = {};
  for (const field of Object.keys(fields)) copy[field] = record[field];
  return copy as T;
}

export const copyRateLimits = (list: RateLimitRecord[]): RateLimitRecord[] => list.map((r) => known<RateLimitRecord>(r as unknown as Fields, rateLimit));
export const copyMeta = (m: JsonObject | null): JsonObject | null => (m === null ? null : structuredClone(m));
