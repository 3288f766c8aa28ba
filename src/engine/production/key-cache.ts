/**
 * A region's cache of key records (stale-while-revalidate): a key read from the database is
 * served as is while fresh; once stale it is still served, and read again behind that answer for
 * the next one; past the stale limit it is read again first. Only the region where a key is
 * changed drops its entry: the other regions go on serving theirs until it goes stale.
 */
import type { EpochMs } from '../clock.js';
import type { RegionalDatabase } from '../regional.js';
import type { KeyRecord } from '../state.js';

interface CachedKey {
  record: KeyRecord;
  readAtMs: EpochMs;
}

export class KeyCache {
  /** By the key's hash digest, as verification looks keys up. */
  readonly #entries = new Map<string, CachedKey>();

  constructor(
    private readonly freshMs: number,
    private readonly staleMs: number,
  ) {}

  get size(): number {
    return this.#entries.size;
  }

  /** The record verification decides on, or undefined when the database has no such key. */
  read(digest: string, nowMs: EpochMs, database: RegionalDatabase): KeyRecord | undefined {
    const entry = this.#entries.get(digest);
    const age = entry === undefined ? Infinity : nowMs - entry.readAtMs;
    if (entry !== undefined && age < this.freshMs) return entry.record;
    if (entry !== undefined && age < this.staleMs) {
      // Stale: this answer is the cached one; the revalidation behind it serves the next.
      this.#load(digest, nowMs, database);
      return entry.record;
    }
    return this.#load(digest, nowMs, database);
  }

  /** Drops a key's entry (a change made in this region). */
  invalidate(digest: string | undefined): void {
    if (digest !== undefined) this.#entries.delete(digest);
  }

  clear(): void {
    this.#entries.clear();
  }

  #load(digest: string, nowMs: EpochMs, database: RegionalDatabase): KeyRecord | undefined {
    const record = database.keyCopy(digest, nowMs);
    // An unknown key is not cached: a key created since is found at once.
    if (record === undefined) this.#entries.delete(digest);
    else this.#entries.set(digest, { record, readAtMs: nowMs });
    return record;
  }
}
