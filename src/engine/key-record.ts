/**
 * How a key is held in memory: compact, because a simulator may hold millions of them.
 *
 * A key is an instance of `StoredKey`, which has the fields of `KeyRecord` but stores only what
 * most keys need in the object itself (id, owner, hash, start, creation time, credits and the
 * next refill).
 * The fields most keys leave at their default (name, meta, permissions, roles, expiry, identity,
 * rate limits, recoverable plaintext, enabled) live on the prototype: reading one on a key that
 * never set it reads the shared default, and setting one gives that key its own field. That
 * saves a pointer per default field and key, and every key built here (by createKey or by a
 * restore) has the same hidden class and shares the same empty lists and refill settings.
 *
 * The API and workspace ids and the refill settings are one field, `owner`: an object per API
 * and refill, shared by those keys (key-owners.ts: the state's, or the snapshot reader's), read
 * through `apiId`, `workspaceId` and `refill` on the prototype (two pointers less per key, 16 MB
 * at a million keys, and one copy of each id string however the keys were made).
 *
 * The hash is held as its 32 bytes, `digest` (key-digest.ts: 16 bytes less per key than its 43
 * characters of base64url), and read as base64url through `hash` on the prototype.
 *
 * Two fields are stored as small integers, which V8 keeps inside the object, instead of a
 * string or a number object of their own per key:
 * - the next refill instant is always a 00:00 UTC boundary, so it is held as a day number (an
 *   instant that is not a whole day is kept as is);
 * - `start` of a key without prefix is 4 base58 characters, held as a number below 58^4 (any
 *   other start is kept as its string).
 *
 * `keyToJson` turns a key back into the plain `KeyRecord` a snapshot holds, every field in
 * place: instances are never handed out of the engine.
 */
import type { EpochMs } from './clock.js';
import { MS_PER_DAY } from './calendar.js';
import { BASE58_ALPHABET } from './base58.js';
import { flatString } from './flat-string.js';
import { NO_RATE_LIMITS } from './attached-ratelimits.js';
import { internRefill } from './credits.js';
import { digestOfHash, hashOfDigest } from './key-digest.js';
import { type KeyOwner, type KeyOwners, newKeyOwner } from './key-owners.js';
import type { JsonObject, KeyRecord, RateLimitRecord, RefillConfig } from './state.js';

const START_LENGTH = 4;
/** The largest integer V8 keeps inside an object as a small integer on every platform (2^30 - 1). */
const SMALL_INTEGER_MAX = 0x3fff_ffff;
const BASE58_DIGIT = new Int8Array(128).fill(-1);
for (let i = 0; i < BASE58_ALPHABET.length; i++) BASE58_DIGIT[BASE58_ALPHABET.charCodeAt(i)] = i;
const BASE58_CODES = Array.from(BASE58_ALPHABET, (ch) => ch.charCodeAt(0));

/** A start of 4 base58 characters as a number (the digits in base 58), any other as itself. */
export function packStart(start: string): string | number {
  if (start.length !== START_LENGTH) return start;
  let code = 0;
  for (let i = 0; i < START_LENGTH; i++) {
    const unit = start.charCodeAt(i);
    const digit = unit < 128 ? BASE58_DIGIT[unit]! : -1;
    if (digit < 0) return start;
    code = code * 58 + digit;
  }
  return code;
}

export function unpackStart(packed: string | number): string {
  if (typeof packed === 'string') return packed;
  const d3 = packed % 58;
  const d2 = Math.floor(packed / 58) % 58;
  const d1 = Math.floor(packed / 3364) % 58;
  const d0 = Math.floor(packed / 195_112);
  return String.fromCharCode(BASE58_CODES[d0]!, BASE58_CODES[d1]!, BASE58_CODES[d2]!, BASE58_CODES[d3]!);
}

/** The empty list shared by every key without permissions or roles (never mutated: records replace their lists). */
export const NO_NAMES: string[] = [];

export class StoredKey implements KeyRecord {
  id: string;
  /** `apiId`, `workspaceId` and `refill`, shared with the API's other keys of that refill (key-owners.ts). */
  owner: KeyOwner;
  /** `hash` as its 32 bytes (key-digest.ts): what the state's `keysByDigest` is keyed by. */
  digest: string;
  /** `start`, packed (packStart). */
  startCode: string | number;
  createdAt: EpochMs;
  remaining: number | null;
  /** The next refill instant: a day number (≥ 0) when it is a whole day, else -(ms + 1); null without refill. */
  nextRefill: number | null;

  // Defaults on the prototype (below): declared here for the type only, never as own fields.
  declare name: string | null;
  declare meta: JsonObject | null;
  declare permissions: string[];
  declare roles: string[];
  declare expiresAtMs: EpochMs | null;
  declare enabled: boolean;
  declare identityId: string | null;
  declare ratelimits: RateLimitRecord[];
  declare recoverablePlaintext: string | null;

  /** `owner` brings the refill settings (null in `KeyOwners.of` by default); `digest` is the hash's in-memory form. */
  constructor(id: string, owner: KeyOwner, digest: string, start: string, createdAt: EpochMs) {
    this.id = id;
    this.owner = owner;
    this.digest = digest;
    this.startCode = packStart(start);
    this.createdAt = createdAt;
    this.remaining = null;
    this.nextRefill = null;
  }

  get hash(): string {
    return hashOfDigest(this.digest);
  }

  set hash(value: string) {
    this.digest = digestOfHash(value);
  }

  get refill(): RefillConfig | null {
    return this.owner.refill;
  }

  // Another refill is another owner of the same API: the shared one for it (key-owners.ts).
  set refill(value: RefillConfig | null) {
    if (value !== this.owner.refill) this.owner = this.owner.family.withRefill(value);
  }

  get apiId(): string {
    return this.owner.apiId;
  }

  // Setting an id gives this key an owner of its own (the engine never moves a key).
  set apiId(value: string) {
    this.owner = newKeyOwner(value, this.owner.workspaceId, this.owner.refill);
  }

  get workspaceId(): string {
    return this.owner.workspaceId;
  }

  set workspaceId(value: string) {
    this.owner = newKeyOwner(this.owner.apiId, value, this.owner.refill);
  }

  get start(): string {
    return unpackStart(this.startCode);
  }

  set start(value: string) {
    this.startCode = packStart(value);
  }

  get nextRefillAtMs(): EpochMs | null {
    const next = this.nextRefill;
    if (next === null) return null;
    return next >= 0 ? next * MS_PER_DAY : -next - 1;
  }

  set nextRefillAtMs(value: EpochMs | null) {
    if (value === null) {
      this.nextRefill = null;
      return;
    }
    const day = value / MS_PER_DAY;
    // `| 0` keeps the day a small integer inside the key (every instant up to MAX_INSTANT_MS has
    // one): unoptimised code boxes a quotient as a heap number of its own, whole or not (16 bytes
    // more for each key made before the optimiser takes over, or by a cold path such as a refill).
    this.nextRefill = value % MS_PER_DAY === 0 ? (day <= SMALL_INTEGER_MAX ? day | 0 : day) : -value - 1;
  }
}

Object.assign(StoredKey.prototype, {
  name: null,
  meta: null,
  permissions: NO_NAMES,
  roles: NO_NAMES,
  expiresAtMs: null,
  enabled: true,
  identityId: null,
  ratelimits: NO_RATE_LIMITS,
  recoverablePlaintext: null,
});

/**
 * Sets the optional fields that differ from the defaults (a field equal to its default stays on
 * the prototype; an empty list becomes the shared one).
 */
export function setOptionalFields(
  key: StoredKey,
  record: Omit<KeyRecord, 'id' | 'apiId' | 'workspaceId' | 'hash' | 'start' | 'createdAt' | 'remaining' | 'refill' | 'nextRefillAtMs'>,
): void {
  if (record.name !== null) key.name = record.name;
  if (record.meta !== null) key.meta = record.meta;
  if (record.permissions.length > 0) key.permissions = record.permissions;
  if (record.roles.length > 0) key.roles = record.roles;
  if (record.expiresAtMs !== null) key.expiresAtMs = record.expiresAtMs;
  if (!record.enabled) key.enabled = false;
  if (record.identityId !== null) key.identityId = record.identityId;
  if (record.ratelimits.length > 0) key.ratelimits = record.ratelimits;
  if (record.recoverablePlaintext !== null) key.recoverablePlaintext = record.recoverablePlaintext;
}

/** The key as a plain record with every field (a deep copy: nothing in it is shared with the state). */
export function keyToJson(key: KeyRecord): KeyRecord {
  return {
    id: key.id,
    apiId: key.apiId,
    workspaceId: key.workspaceId,
    hash: key.hash,
    start: key.start,
    name: key.name,
    meta: key.meta === null ? null : structuredClone(key.meta),
    permissions: [...key.permissions],
    roles: [...key.roles],
    expiresAtMs: key.expiresAtMs,
    enabled: key.enabled,
    createdAt: key.createdAt,
    identityId: key.identityId,
    remaining: key.remaining,
    refill: key.refill === null ? null : { interval: key.refill.interval, amount: key.refill.amount, refillDay: key.refill.refillDay },
    nextRefillAtMs: key.nextRefillAtMs,
    ratelimits: key.ratelimits.map((r) => ({ id: r.id, name: r.name, limit: r.limit, durationMs: r.durationMs, autoApply: r.autoApply })),
    recoverablePlaintext: key.recoverablePlaintext,
  };
}

/**
 * A key rebuilt from a checked snapshot record, the way createKey builds one: the same hidden
 * class, the shared empty lists, the shared refill settings, the owner of its API from `owners`.
 * `meta` and `ratelimits` are the caller's copies (the record itself may belong to whoever
 * handed in the snapshot).
 */
export function restoredKey(record: KeyRecord, owners: KeyOwners, meta: JsonObject | null, ratelimits: RateLimitRecord[]): StoredKey {
  // Fresh copies of the strings a key keeps: the parsed ones sit among the whole parsed snapshot,
  // and would keep its memory pages (hundreds of MB) from being released after the restore (the
  // digest is a new string anyway).
  const refill =
    record.refill === null ? null : internRefill({ interval: record.refill.interval, amount: record.refill.amount, refillDay: record.refill.refillDay });
  const key = new StoredKey(
    flatString(record.id),
    owners.of(record.apiId, record.workspaceId, refill),
    digestOfHash(record.hash),
    record.start,
    record.createdAt,
  );
  if (typeof key.startCode === 'string') key.startCode = flatString(key.startCode);
  key.remaining = record.remaining;
  key.nextRefillAtMs = record.nextRefillAtMs;
  setOptionalFields(key, {
    name: record.name === null ? null : flatString(record.name),
    meta,
    permissions: record.permissions.length === 0 ? NO_NAMES : [...record.permissions],
    roles: record.roles.length === 0 ? NO_NAMES : [...record.roles],
    expiresAtMs: record.expiresAtMs,
    enabled: record.enabled,
    identityId: record.identityId === null ? null : flatString(record.identityId),
    ratelimits: ratelimits.length === 0 ? NO_RATE_LIMITS : ratelimits,
    recoverablePlaintext: record.recoverablePlaintext === null ? null : flatString(record.recoverablePlaintext),
  });
  return key;
}

/** A key's digest (key-digest.ts): every key of a state is a `StoredKey`; any other record is converted. */
export function digestOfKey(key: KeyRecord): string {
  return key instanceof StoredKey ? key.digest : digestOfHash(key.hash);
}
