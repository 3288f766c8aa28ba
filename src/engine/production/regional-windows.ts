/**
 * A region's rate-limit counters. The region decides on its own copy of each counter: what it
 * last pulled from the database's (global) counter, plus what it admitted since. It publishes
 * what it admitted (push, then pull the global count) once that reaches a share of the limit
 * (20 %), when its copy is older than its freshness (5 s), and at its sync, every 5 s ± 20 %
 * (seeded). After a denial it stays strict: it denies that counter until its window ends. So
 * regions admit past the limit by what they have not published yet: at most about a share of
 * the limit each per window.
 */
import type { EpochMs } from '../clock.js';
import type { Random } from '../random.js';
import { type WindowCheck, type WindowDecision, decideWindows } from '../ratelimit-window.js';
import type { RegionalDatabase } from '../regional.js';
import type { WindowCounter } from '../state.js';
import type { ProductionFigures } from './figures.js';

/** Admitted in this region, not yet in the database. */
interface Unpublished {
  window: number;
  cost: number;
}

export class RegionalWindows {
  /** The region's copy of each counter it has used (the same shape as the database's). */
  readonly #local = new Map<string, WindowCounter>();
  readonly #durations = new Map<string, number>();
  readonly #pulledAtMs = new Map<string, EpochMs>();
  readonly #unpublished = new Map<string, Unpublished>();
  /** Counters denied here, strict until this instant (their window's end). */
  readonly #strictUntilMs = new Map<string, EpochMs>();
  #nextSyncMs: EpochMs | undefined;

  constructor(
    private readonly figures: ProductionFigures,
    private readonly random: Random,
    private readonly database: RegionalDatabase,
  ) {}

  decide(checks: readonly WindowCheck[], nowMs: EpochMs): { passed: boolean; decisions: WindowDecision[] } {
    if (this.#nextSyncMs === undefined || nowMs >= this.#nextSyncMs) this.#syncAll(nowMs);
    for (const check of checks) {
      this.#durations.set(check.key, check.durationMs);
      const pulled = this.#pulledAtMs.get(check.key);
      if (pulled === undefined || nowMs - pulled >= this.figures.rateLimitFreshMs) this.#sync(check.key, nowMs);
    }
    // Strict: a counter denied here is full to this region until its window ends.
    const effective = checks.map((check) => {
      const until = this.#strictUntilMs.get(check.key);
      if (until === undefined) return check;
      if (nowMs < until) return { ...check, limit: 0 };
      this.#strictUntilMs.delete(check.key);
      return check;
    });
    const decided = decideWindows(this.#local, effective, nowMs);
    for (const [i, check] of checks.entries()) {
      const decision = decided.decisions[i] as WindowDecision;
      if (decision.exceeded) this.#strictUntilMs.set(check.key, decision.view.resetAtMs);
      else if (decided.passed && check.cost > 0) this.#admitted(check, decision.view.window, nowMs);
    }
    return decided;
  }

  /** Pushes to the database every count admitted here and not yet published (a sync point, profile.ts). */
  publishAll(nowMs: EpochMs): void {
    for (const key of [...this.#unpublished.keys()]) this.#sync(key, nowMs);
  }

  clear(): void {
    for (const map of [this.#local, this.#durations, this.#pulledAtMs, this.#unpublished, this.#strictUntilMs]) map.clear();
    this.#nextSyncMs = undefined;
  }

  get size(): number {
    return this.#local.size;
  }

  #admitted(check: WindowCheck, window: number, nowMs: EpochMs): void {
    const pending = this.#unpublished.get(check.key);
    // A count of an earlier window is published before this one starts to add up.
    if (pending !== undefined && pending.window !== window) this.#sync(check.key, nowMs);
    const current = this.#unpublished.get(check.key) ?? { window, cost: 0 };
    current.cost += check.cost;
    this.#unpublished.set(check.key, current);
    if (current.cost >= this.figures.rateLimitPublishShare * check.limit) this.#sync(check.key, nowMs);
  }

  /** Push what this region admitted, then pull the database's count. */
  #sync(key: string, nowMs: EpochMs): void {
    const durationMs = this.#durations.get(key);
    if (durationMs === undefined) return;
    const pending = this.#unpublished.get(key);
    if (pending !== undefined) this.database.pushWindow(key, durationMs, pending.window, pending.cost, nowMs);
    this.#unpublished.delete(key);
    const global = this.database.windowCounter(key);
    if (global === undefined) this.#local.delete(key);
    else this.#local.set(key, global);
    this.#pulledAtMs.set(key, nowMs);
  }

  #syncAll(nowMs: EpochMs): void {
    for (const key of this.#durations.keys()) this.#sync(key, nowMs);
    const { rateLimitSyncMs: every, rateLimitSyncJitter: jitter } = this.figures;
    const spread = Math.round(every * jitter);
    this.#nextSyncMs = nowMs + every - spread + this.random.int(2 * spread + 1);
  }
}
