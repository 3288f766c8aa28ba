/**
 * The buffer between the regions and the database: every valid debit made in a region is applied
 * to the database later, after a seeded delay. Due debits are applied lazily, when any operation
 * of the profile runs (as refills are settled), in the order they fall due.
 */
import type { EpochMs } from '../clock.js';
import type { Random } from '../random.js';
import type { RegionalDatabase } from '../regional.js';

export interface PendingDebit {
  keyId: string;
  cost: number;
  /** When it lands in the database. */
  dueAtMs: EpochMs;
  /** Ties on `dueAtMs` land in the order the debits were made. */
  seq: number;
}

export class ReplayQueue {
  /** Sorted by (dueAtMs, seq): the next to land first. */
  readonly #pending: PendingDebit[] = [];
  #seq = 0;

  constructor(
    private readonly random: Random,
    private readonly delay: { min: number; max: number },
  ) {}

  get size(): number {
    return this.#pending.length;
  }

  /** Buffers a debit made at `nowMs`. */
  push(keyId: string, cost: number, nowMs: EpochMs): void {
    const span = this.delay.max - this.delay.min + 1;
    const debit: PendingDebit = { keyId, cost, dueAtMs: nowMs + this.delay.min + this.random.int(span), seq: this.#seq++ };
    // Binary search for the place: the queue stays sorted without sorting it again.
    let lo = 0;
    let hi = this.#pending.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.#pending[mid] as PendingDebit).dueAtMs <= debit.dueAtMs) lo = mid + 1;
      else hi = mid;
    }
    this.#pending.splice(lo, 0, debit);
  }

  /** Lands every debit due by `nowMs` in the database, oldest first. */
  applyDue(database: RegionalDatabase, nowMs: EpochMs): void {
    let landed = 0;
    for (const debit of this.#pending) {
      if (debit.dueAtMs > nowMs) break;
      database.replayDebit(debit.keyId, debit.cost, debit.dueAtMs);
      landed++;
    }
    if (landed > 0) this.#pending.splice(0, landed);
  }

  /**
   * Lands every pending debit now, the ones not due yet included (a sync point, profile.ts): those
   * due by `nowMs` at their own instant, the rest at `nowMs`, oldest first. The buffer is empty after.
   */
  landAll(database: RegionalDatabase, nowMs: EpochMs): void {
    this.applyDue(database, nowMs);
    for (const debit of this.#pending) database.replayDebit(debit.keyId, debit.cost, nowMs);
    this.#pending.length = 0;
  }

  /** When the last pending debit lands (undefined: none pending). */
  get lastDueAtMs(): EpochMs | undefined {
    return this.#pending.at(-1)?.dueAtMs;
  }

  clear(): void {
    this.#pending.length = 0;
    this.#seq = 0;
  }
}
