/**
 * Builds a checked snapshot from its fields, handed in one at a time: header fields whole, and
 * record lists either whole or record by record as they are read from the text
 * (snapshot-reader.ts). Each record is checked and turned into its stored form when it arrives,
 * so a restore holds the records being built, never the parsed snapshot as well.
 *
 * The problem reported is the one a check of the whole value would report first, whatever the
 * order of the fields in the text: the header (format, compat, seed, instant, random state),
 * then the first bad record of each list in a fixed order, then the invariants across records
 * (snapshot-check.ts). A list past its first bad record keeps nothing more.
 */
import { MAX_INSTANT_MS } from './clock.js';
import { type Result, invalid } from './errors.js';
import { NO_RATE_LIMITS } from './attached-ratelimits.js';
import { KeyOwners } from './key-owners.js';
import { restoredKey } from './key-record.js';
import { type EngineSnapshot, SNAPSHOT_FORMAT, SNAPSHOT_VERSION } from './snapshot-format.js';
import type { KeyRecord } from './state.js';
import {
  type Fields,
  RECORD_FIELDS,
  RECORD_LISTS,
  type RecordList,
  SNAPSHOT_LOCATION,
  badField,
  copyMeta,
  copyRateLimits,
  fieldsProblem,
  instant,
  isObject,
  known,
  windowCounter,
} from './snapshot-fields.js';

type ListName = RecordList | 'windows';
/** The lists of a snapshot, which may be read record by record. */
export const SNAPSHOT_LISTS: readonly string[] = [...RECORD_LISTS, 'windows'];
const HEADER_FIELDS = new Set(['format', 'version', 'compat', 'seed', 'randomState', 'takenAtMs']);
/** Distinct creation instants remembered for sharing (#instant): beyond it, it starts again. */
const MAX_SHARED_INSTANTS = 4096;

interface ListState {
  /** The field was present and an array. */
  isArray: boolean;
  records: unknown[];
  problem?: { location: string; message: string };
}

export class SnapshotBuilder {
  readonly #header = new Map<string, unknown>();
  readonly #lists = new Map<ListName, ListState>();
  /** Creation instants met recently, shared by the keys created at them (#instant). */
  readonly #instants = new Map<number, number>();
  /** The owners the keys of each API share while they are read; the restored state adopts them. */
  readonly #owners = new KeyOwners();
  /** The hashes of the root keys as given (before any check), for the operator check of a restore. */
  #rootKeyHashes: unknown[] = [];

  /** Whether `name` is a list (read record by record when the text is streamed). */
  static isList(name: string): boolean {
    return SNAPSHOT_LISTS.includes(name);
  }

  /** A field read whole. A later field of the same name replaces an earlier one (as JSON.parse does). */
  field(name: string, value: unknown): void {
    if (SnapshotBuilder.isList(name)) {
      if (!Array.isArray(value)) {
        this.#lists.set(name as ListName, { isArray: false, records: [] });
        if (name === 'rootKeys') this.#rootKeyHashes = [];
        return;
      }
      this.beginList(name);
      for (const record of value) this.item(name, record);
    } else if (HEADER_FIELDS.has(name)) {
      this.#header.set(name, value);
    }
  }

  /** The start of a list whose records follow one by one (replacing an earlier list of that name). */
  beginList(name: string): void {
    if (!SnapshotBuilder.isList(name)) return;
    this.#lists.set(name as ListName, { isArray: true, records: [] });
    if (name === 'rootKeys') this.#rootKeyHashes = [];
  }

  /** The next record of a list. */
  item(name: string, record: unknown): void {
    const list = this.#lists.get(name as ListName);
    if (list === undefined) return;
    if (name === 'rootKeys') this.#rootKeyHashes.push(isObject(record) ? record.hash : undefined);
    if (list.problem !== undefined) return;
    const index = list.records.length;
    if (name === 'windows') {
      if (!Array.isArray(record) || record.length !== 2 || typeof record[0] !== 'string' || fieldsProblem(record[1], windowCounter) !== undefined) {
        this.#refuse(list, `${SNAPSHOT_LOCATION}.windows[${index}]`, 'Each window is [key, { window, current, previous }] with integers ≥ 0.');
        return;
      }
      list.records.push([record[0], known(record[1] as Fields, windowCounter)]);
      return;
    }
    const fields = RECORD_FIELDS[name as RecordList];
    const bad = badField(record, fields);
    if (bad !== undefined) {
      this.#refuse(
        list,
        `${SNAPSHOT_LOCATION}.${name}[${index}]${bad.field === undefined ? '' : `.${bad.field}`}`,
        `A record of "${name}" (index ${index}): its ${bad.problem}.`,
      );
      return;
    }
    list.records.push(this.#stored(name as RecordList, record as Fields));
  }

  /** Whether the root keys were given as a list, and their hashes as given. */
  get rootKeys(): { listed: boolean; hashes: readonly unknown[] } {
    return { listed: this.#lists.get('rootKeys')?.isArray === true, hashes: this.#rootKeyHashes };
  }

  /** The checked snapshot (its records in their stored form), or the first problem; invariants are left to the caller. */
  finish(): Result<EngineSnapshot> {
    const at = SNAPSHOT_LOCATION;
    const h = (name: string) => this.#header.get(name);
    const format = h('format');
    const version = h('version');
    if (format !== SNAPSHOT_FORMAT || version !== SNAPSHOT_VERSION) {
      return invalid(`${at}.format`, `Not a keysim snapshot of version ${SNAPSHOT_VERSION} (expected format "${SNAPSHOT_FORMAT}").`);
    }
    const compat = h('compat');
    if (compat !== 'interface' && compat !== 'production') return invalid(`${at}.compat`, 'compat must be "interface" or "production".');
    const seed = h('seed');
    if (!Number.isSafeInteger(seed)) return invalid(`${at}.seed`, 'seed must be an integer.');
    const takenAtMs = h('takenAtMs');
    if (instant(takenAtMs) !== undefined) return invalid(`${at}.takenAtMs`, `takenAtMs must be an instant from 0 to ${MAX_INSTANT_MS} ms.`);
    const rs = h('randomState');
    if (!Array.isArray(rs) || rs.length !== 4 || !rs.every((n) => Number.isSafeInteger(n))) {
      return invalid(`${at}.randomState`, 'randomState must be the four integers of the random generator.');
    }
    for (const name of SNAPSHOT_LISTS) {
      const list = this.#lists.get(name as ListName);
      if (list === undefined || !list.isArray) return invalid(`${at}.${name}`, `The snapshot has no list "${name}".`);
      if (list.problem !== undefined) return invalid(list.problem.location, list.problem.message);
    }
    const records = <T>(name: ListName) => (this.#lists.get(name) as ListState).records as T[];
    return {
      ok: true,
      value: {
        format: SNAPSHOT_FORMAT,
        version: SNAPSHOT_VERSION,
        compat,
        seed: seed as number,
        randomState: [rs[0], rs[1], rs[2], rs[3]] as [number, number, number, number],
        takenAtMs: takenAtMs as number,
        workspaces: records('workspaces'),
        rootKeys: records('rootKeys'),
        apis: records('apis'),
        keys: records('keys'),
        identities: records('identities'),
        namespaces: records('namespaces'),
        overrides: records('overrides'),
        windows: records('windows'),
      },
    };
  }

  #refuse(list: ListState, location: string, message: string): void {
    list.problem = { location, message };
    list.records = [];
  }

  /** A checked record as the state keeps it: the known fields only, copied. */
  #stored(name: RecordList, r: Fields): unknown {
    switch (name) {
      case 'keys': {
        // Keys are rebuilt as createKey builds them (key-record.ts), straight from the checked fields;
        // keys of one API share its owner (API and workspace ids) there, as created keys do.
        const key = r as unknown as KeyRecord;
        const stored = restoredKey(key, this.#owners, copyMeta(key.meta), key.ratelimits.length === 0 ? NO_RATE_LIMITS : copyRateLimits(key.ratelimits));
        stored.createdAt = this.#instant(stored.createdAt);
        return stored;
      }
      case 'rootKeys':
        return { ...known<EngineSnapshot['rootKeys'][number]>(r, RECORD_FIELDS.rootKeys), permissions: [...(r.permissions as string[])] };
      case 'identities': {
        const identity = known<EngineSnapshot['identities'][number]>(r, RECORD_FIELDS.identities);
        return { ...identity, meta: copyMeta(identity.meta), ratelimits: copyRateLimits(identity.ratelimits) };
      }
      default:
        return known(r, RECORD_FIELDS[name]);
    }
  }

  /**
   * Keys created in the same millisecond share one number object for their creation instant, as
   * keys created by createKey at one clock reading do; parsing gives each its own (an instant is
   * no small integer, so it is a heap number of its own: 16 MB at a million keys).
   */
  #instant(ms: number): number {
    const shared = this.#instants.get(ms);
    if (shared !== undefined) return shared;
    if (this.#instants.size >= MAX_SHARED_INSTANTS) this.#instants.clear();
    this.#instants.set(ms, ms);
    return ms;
  }
}
