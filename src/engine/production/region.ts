/**
 * One region of the production profile: its key cache and its credit counters, in front of the
 * one database (the exact engine) through the engine's regional seam (../regional.ts).
 */
import type { Clock, EpochMs } from '../clock.js';
import type { Random } from '../random.js';
import type { WindowCheck, WindowDecision } from '../ratelimit-window.js';
import type { RegionalDatabase, RegionalHook } from '../regional.js';
import type { KeyRecord, OverrideRecord } from '../state.js';
import { OverrideCache } from './override-cache.js';
import { RegionalWindows } from './regional-windows.js';
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
  rateLimitCounters: number;
}

export class Region implements RegionalHook {
  readonly cache: KeyCache;
  readonly counters: CreditCounters;
  readonly windows: RegionalWindows;
  readonly overrides: OverrideCache;

  constructor(
    /** 1-based. */
    readonly index: number,
    figures: ProductionFigures,
    private readonly clock: Clock,
    private readonly database: RegionalDatabase,
    private readonly replays: ReplayQueue,
    random: Random,
  ) {
    this.cache = new KeyCache(figures.cacheFreshMs, figures.cacheStaleMs);
    this.counters = new CreditCounters(figures.counterTtlMs);
    this.windows = new RegionalWindows(figures, random, database);
    this.overrides = new OverrideCache(figures.overrideCacheMs);
  }

  readKey(digest: string): KeyRecord | undefined {
    return this.cache.read(digest, this.clock.now(), this.database);
  }

  spendCredits(key: KeyRecord, cost: number): boolean {
    return this.counters.spend(key, cost, this.clock.now(), this.database, this.replays);
  }

  decideWindows(checks: readonly WindowCheck[], nowMs: EpochMs): { passed: boolean; decisions: WindowDecision[] } {
    return this.windows.decide(checks, nowMs);
  }

  matchOverride(namespaceId: string, identifier: string, lookup: () => OverrideRecord | undefined): OverrideRecord | undefined {
    return this.overrides.match(namespaceId, identifier, this.clock.now(), lookup);
  }

  /** A key changed (updated, deleted) in this region: only this region's cache forgets it. */
  keyChanged(digest: string | undefined): void {
    this.cache.invalidate(digest);
  }

  stats(): RegionStats {
    const counters = this.counters.stats();
    return {
      region: this.index,
      cachedKeys: this.cache.size,
      counters: counters.counters,
      countersCreated: counters.created,
      rateLimitCounters: this.windows.size,
    };
  }

  clear(): void {
    this.cache.clear();
    this.counters.clear();
    this.windows.clear();
    this.overrides.clear();
  }
}
