/**
 * The simulator's journal: the realised order in which it executed operations, for the runner's
 * oracle (src/load/oracle/oracle.ts), which replays it through a fresh engine and compares every answer.
 *
 * Requests run one at a time on the event loop, and the engine is synchronous, so the order in
 * which route handlers are called *is* the execution order: the journal records each call just
 * before it, with the instant it runs at (the one clock reading the engine decides with too), the
 * route, the root key and the validated input.
 *
 * It is off until `/_sim/journal.start`, which also answers a snapshot of the state at that
 * moment (the replay's starting point). Memory is bounded: a reader drains it with
 * `/_sim/journal.take`; beyond `capacity` undrained entries nothing more is recorded and the
 * journal says it overflowed (what was recorded is still a correct prefix of the order).
 * A reset ends it: the state it describes is gone.
 * It keeps no credential in plaintext: the bearer root key and the key a verification sends are
 * recorded as their SHA-256 (what the engine looks them up by), which is all a replay needs; and it
 * reaches the operator only (`/_sim/*`, operator.ts).
 */
import type { ProductionFigures } from '../engine/index.js';

/** What `/_sim/journal.start` answers: the replay's starting point (replay.ts). */
export interface JournalStart {
  snapshot: unknown;
  startedAtMs: number;
  /** SHA-256 of the operator's root key: the replay's admin surface answers the same caller. */
  operatorRootKeyHash: string;
  /**
   * The production profile the journal ran on, with all its figures (regions and replay delays
   * included): the replay runs the same profile over the snapshot, every entry in its region.
   * The start was a sync point (ProductionProfile#syncPoint): the regions were empty and the
   * delays at the start of their seeded sequence, as a fresh profile's are. Absent on the exact engine.
   */
  profile?: JournalProfile;
}

export interface JournalProfile {
  name: 'production';
  figures: ProductionFigures;
}

/** One executed call. */
export interface JournalEntry {
  /** Position in the journal since its start, from 0. */
  index: number;
  /** The service clock's one reading the call ran at (the instant the engine decided with), Unix ms. */
  atMs: number;
  method: 'GET' | 'POST';
  /** Route path, e.g. `/v2/keys.verifyKey` or `/_sim/clock.set`. */
  path: string;
  /** SHA-256 (base64url) of the bearer token sent (undefined: none). */
  rootKeyHash?: string;
  /** The validated input the handler received; the fields of `HASHED_INPUT_FIELDS` hold the SHA-256 of what was sent. */
  input: unknown;
  /** The client's `x-keysim-seq` header (its history sequence number), when sent. */
  seq?: number;
  /**
   * The region the call ran in (1-based), on the production profile: the replay runs it in the
   * same region of its own profile (replay.ts). Absent on the exact engine.
   */
  region?: number;
}

export interface JournalTake {
  entries: JournalEntry[];
  /** Whether the journal is recording (false after a stop, a reset or an overflow). */
  active: boolean;
  /** Set once `capacity` undrained entries were reached: later calls were not recorded. */
  overflowed: boolean;
  /** Why the journal ended, when it did (e.g. a reset). */
  endedBecause?: string;
}

/** Input fields that carry a key plaintext, per route: journaled as their SHA-256. */
export const HASHED_INPUT_FIELDS: Readonly<Record<string, readonly string[]>> = {
  '/v2/keys.verifyKey': ['key'],
};

export const DEFAULT_JOURNAL_CAPACITY = 200_000;
/** About 430 bytes per verification entry: a full journal of this size is ~430 MB, within Node's default heap. */
export const MAX_JOURNAL_CAPACITY = 1_000_000;
/** Largest page `take` hands out. */
export const MAX_JOURNAL_TAKE = 100_000;

export interface JournalPosition {
  active: boolean;
  overflowed: boolean;
  capacity: number;
  /** The entries not yet handed out. */
  entries: JournalEntry[];
  next: number;
  endedBecause?: string;
}

export class Journal {
  readonly #sha256: (text: string) => string;
  #active = false;
  #overflowed = false;
  #capacity = DEFAULT_JOURNAL_CAPACITY;
  #entries: JournalEntry[] = [];
  #head = 0;
  #next = 0;
  #endedBecause: string | undefined;

  /** `sha256`: the engine's hash (base64url), so that the journal's hashes are the ones it looks keys up by. */
  constructor(sha256: (text: string) => string) {
    this.#sha256 = sha256;
  }

  /** Checked by the server on every request: the only cost while the journal is off. */
  get active(): boolean {
    return this.#active && !this.#overflowed;
  }

  /** Starts afresh (dropping anything undrained). */
  start(capacity = DEFAULT_JOURNAL_CAPACITY): void {
    this.#active = true;
    this.#overflowed = false;
    this.#capacity = capacity;
    this.#entries = [];
    this.#head = 0;
    this.#next = 0;
    this.#endedBecause = undefined;
  }

  /** Stops recording and drops what was not drained. */
  stop(reason?: string): void {
    if (this.#active && reason !== undefined) this.#endedBecause = reason;
    this.#active = false;
    this.#entries = [];
    this.#head = 0;
  }

  record(atMs: number, method: 'GET' | 'POST', path: string, rootKey: string | undefined, input: unknown, seq: number | undefined, region?: number): void {
    if (!this.active) return;
    if (this.#entries.length - this.#head >= this.#capacity) {
      this.#overflowed = true;
      return;
    }
    const entry: JournalEntry = { index: this.#next++, atMs, method, path, input: this.#withoutSecrets(path, input) };
    if (rootKey !== undefined) entry.rootKeyHash = this.#sha256(rootKey);
    if (seq !== undefined) entry.seq = seq;
    if (region !== undefined) entry.region = region;
    this.#entries.push(entry);
  }

  /** A copy of `input` whose key plaintexts are replaced by their hashes (the input itself is the handler's). */
  #withoutSecrets(path: string, input: unknown): unknown {
    const fields = HASHED_INPUT_FIELDS[path];
    if (fields === undefined || typeof input !== 'object' || input === null) return input;
    const copy: Record<string, unknown> = { ...(input as Record<string, unknown>) };
    for (const field of fields) {
      const value = copy[field];
      if (typeof value === 'string') copy[field] = this.#sha256(value);
    }
    return copy;
  }

  /** Everything the journal holds, as plain data (a store checkpoint carries it). */
  position(): JournalPosition {
    const position: JournalPosition = {
      active: this.#active,
      overflowed: this.#overflowed,
      capacity: this.#capacity,
      entries: this.#entries.slice(this.#head),
      next: this.#next,
    };
    if (this.#endedBecause !== undefined) position.endedBecause = this.#endedBecause;
    return position;
  }

  resume(position: JournalPosition): void {
    this.#active = position.active;
    this.#overflowed = position.overflowed;
    this.#capacity = position.capacity;
    this.#entries = [...position.entries];
    this.#head = 0;
    this.#next = position.next;
    this.#endedBecause = position.endedBecause;
  }

  /** Hands out (and forgets) up to `max` of the oldest entries. */
  take(max: number): JournalTake {
    const end = Math.min(this.#entries.length, this.#head + max);
    const entries = this.#entries.slice(this.#head, end);
    this.#head = end;
    // Compact once the drained front dominates, so a long run keeps only what is undrained.
    if (this.#head > 4096 && this.#head * 2 > this.#entries.length) {
      this.#entries = this.#entries.slice(this.#head);
      this.#head = 0;
    }
    const taken: JournalTake = { entries, active: this.active, overflowed: this.#overflowed };
    if (this.#endedBecause !== undefined) taken.endedBecause = this.#endedBecause;
    return taken;
  }
}

/** The `x-keysim-seq` header as a sequence number (anything else: none). */
export function seqHeader(value: string | string[] | undefined): number | undefined {
  if (typeof value !== 'string' || !/^\d{1,15}$/.test(value)) return undefined;
  return Number(value);
}
