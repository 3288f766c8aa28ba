/**
 * A region's credit counters: one atomic decision per verification, exact within the region. A
 * key's counter is created from the database balance on its first use in the region and lives a
 * fixed time from then (traffic does not extend it); the next use after that creates it again
 * from the database. Every valid debit is also buffered for the database (replay-queue.ts), so
 * regions drift apart until their counters are created again.
 */
import type { EpochMs } from '../clock.js';
import type { RegionalDatabase } from '../regional.js';
import type { KeyRecord } from '../state.js';
import type { ReplayQueue } from './replay-queue.js';

interface Counter {
  remaining: number;
  createdAtMs: EpochMs;
}

/** What a counter did for one verification (for tests and the health page). */
export interface CounterStats {
  counters: number;
  /** Counters created from the database since the start (or reset). */
  created: number;
}

export class CreditCounters {
  readonly #counters = new Map<string, Counter>();
  #created = 0;

  constructor(private readonly ttlMs: number) {}

  /**
   * Spends `cost` of `key`'s credits at `nowMs`: true when the region's balance covered it (the
   * debit then buffered for the database). `key` (the region's copy) gets the region's balance.
   */
  spend(key: KeyRecord, cost: number, nowMs: EpochMs, database: RegionalDatabase, replays: ReplayQueue): boolean {
    let counter = this.#counters.get(key.id);
    if (counter === undefined || nowMs >= counter.createdAtMs + this.ttlMs) {
      const balance = database.balance(key.id, nowMs);
      // Unlimited in the database since the copy was cached: nothing to count.
      if (balance === null) return true;
      // Deleted since: the region still has its copy to count from.
      counter = { remaining: balance ?? key.remaining ?? 0, createdAtMs: nowMs };
      this.#counters.set(key.id, counter);
      this.#created++;
    }
    if (cost > counter.remaining) {
      key.remaining = counter.remaining;
      return false;
    }
    counter.remaining -= cost;
    key.remaining = counter.remaining;
    if (cost > 0) replays.push(key.id, cost, nowMs);
    return true;
  }

  /** Drops a key's counter (updateCredits in this region): the next use reads the database. */
  invalidate(keyId: string): void {
    this.#counters.delete(keyId);
  }

  /** The region's balance of a key, while its counter lives (undefined: none). */
  balance(keyId: string, nowMs: EpochMs): number | undefined {
    const counter = this.#counters.get(keyId);
    return counter === undefined || nowMs >= counter.createdAtMs + this.ttlMs ? undefined : counter.remaining;
  }

  stats(): CounterStats {
    return { counters: this.#counters.size, created: this.#created };
  }

  clear(): void {
    this.#counters.clear();
    this.#created = 0;
  }
}
