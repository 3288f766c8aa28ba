/**
 * One region of the production profile: its key cache and its credit counters, in front of the
 * one database (the exact engine) through the engine's regional seam (../regional.ts).
 */
import type { Clock } from '../clock.js';
import type { RegionalDatabase, RegionalHook } from '../regional.js';
import type { KeyRecord } from '../state.js';
import { CreditCounters } from './credit-counters.js';
import type { ProductionFigures } from './figures.js';
import { KeyCache } from './key-cache.js';
import type { ReplayQueue } from './replay-queue.js';

export interface RegionStats {
  /** 1-based, as requests name regions. */
  region: number;
  cachedKeys: number;
  counters: number;
  countersCreated: number;
}

export class Region implements RegionalHook {
  readonly cache: KeyCache;
  readonly counters: CreditCounters;

  constructor(
    /** 1-based. */
    readonly index: number,
    figures: ProductionFigures,
    private readonly clock: Clock,
    private readonly database: RegionalDatabase,
    private readonly replays: ReplayQueue,
  ) {
    this.cache = new KeyCache(figures.cacheFreshMs, figures.cacheStaleMs);
    this.counters = new CreditCounters(figures.counterTtlMs);
  }

  readKey(digest: string): KeyRecord | undefined {
    return this.cache.read(digest, this.clock.now(), this.database);
  }

  spendCredits(key: KeyRecord, cost: number): boolean {
    return this.counters.spend(key, cost, this.clock.now(), this.database, this.replays);
  }

  /** A key changed (updated, deleted) in this region: only this region's cache forgets it. */
  keyChanged(digest: string | undefined): void {
    this.cache.invalidate(digest);
  }

  stats(): RegionStats {
    const counters = this.counters.stats();
    return { region: this.index, cachedKeys: this.cache.size, counters: counters.counters, countersCreated: counters.created };
  }

  clear(): void {
    this.cache.clear();
    this.counters.clear();
  }
}
