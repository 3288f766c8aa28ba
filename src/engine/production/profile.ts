/**
 * The production profile: the production service as it behaves, not linearizable by design.
 * The exact engine stays the database (the source of truth); N regions stand in front of it,
 * each with its key cache and its credit counters (region.ts), and valid debits reach the
 * database later through a seeded buffer (replay-queue.ts). Every operation runs in a region
 * (1-based); a run is replayable from its seed.
 */
import type { Engine, EngineStats } from '../engine.js';
import type { Result } from '../errors.js';
import { Random } from '../random.js';
import type { CheckedSnapshot } from '../snapshot.js';
import { type ProductionFigures, checkFigures } from './figures.js';
import { Region, type RegionStats } from './region.js';
import { type EngineSurface, regionView } from './region-view.js';
import { ReplayQueue } from './replay-queue.js';

export interface ProductionProfileOptions extends Partial<ProductionFigures> {
  /** The database: an exact engine (its seed also seeds the replay delays). */
  engine: Engine;
}

export interface ProductionStats extends EngineStats {
  regions: RegionStats[];
  /** Debits made in a region, not yet in the database. */
  pendingDebits: number;
}

/** The replay delays' own sequence: they never change the engine's ids, nor the faults'. */
export function replaySeed(seed: number): number {
  return (Math.imul(seed ^ 0x5eed, 0x9e37_79b1) ^ 0x2545_f491) >>> 0;
}

export class ProductionProfile {
  readonly engine: Engine;
  readonly figures: Readonly<ProductionFigures>;
  readonly #regions: Region[];
  readonly #views: EngineSurface[];
  readonly #random: Random;
  readonly #replays: ReplayQueue;

  /** Throws a RangeError naming the wrong figure when an option is out of range. */
  constructor(options: ProductionProfileOptions) {
    const { engine, ...rest } = options;
    const checked = checkFigures(rest);
    if (!checked.ok) throw new RangeError(`production profile: ${checked.message}`);
    this.engine = engine;
    this.figures = checked.figures;
    this.#random = new Random(replaySeed(engine.seed));
    this.#replays = new ReplayQueue(this.#random, this.figures.replayDelayMs);
    this.#regions = Array.from(
      { length: this.figures.regions },
      (_, i) => new Region(i + 1, this.figures, engine.clock, engine.database, this.#replays, this.#random),
    );
    const owned = {
      restore: (snapshot: unknown) => this.restore(snapshot),
      restoreChecked: (checked: CheckedSnapshot) => this.restoreChecked(checked),
      reset: () => this.reset(),
    };
    const inRegion = <T>(region: Region, run: () => T): T => {
      this.settle();
      return engine.inRegion(region, run);
    };
    this.#views = this.#regions.map((region) => regionView(engine, region, inRegion, owned));
  }

  get regionCount(): number {
    return this.#regions.length;
  }

  /** Region `index` (1-based) as an engine: every operation of `Engine`, run in that region. */
  region(index: number): EngineSurface {
    const view = this.#views[index - 1];
    if (view === undefined || !Number.isInteger(index)) {
      throw new RangeError(`region must be an integer from 1 to ${this.#regions.length}, got ${String(index)}.`);
    }
    return view;
  }

  /** Lands in the database every buffered debit due by now (every operation does it first). */
  settle(): void {
    this.#replays.applyDue(this.engine.database, this.engine.clock.now());
  }

  /**
   * A sync point (the journal's start, src/http/admin.ts): everything the regions hold that the
   * database lacks is put in it now — every buffered debit lands (those not due yet at this
   * instant), every rate-limit count a region admitted and has not published is pushed — and
   * then every region is emptied and the delays start again from the seed, as after a restore.
   * What the profile decides with from here on is then the database's state (a snapshot holds
   * it) and the seed: a fresh profile over that snapshot decides every later call the same way.
   */
  syncPoint(): void {
    const nowMs = this.engine.clock.now();
    this.#replays.landAll(this.engine.database, nowMs);
    for (const region of this.#regions) region.windows.publishAll(nowMs);
    this.#clearRegions();
  }

  /** When the last buffered debit lands (undefined: none pending): a test's point of convergence. */
  get lastReplayDueMs(): number | undefined {
    return this.#replays.lastDueAtMs;
  }

  stats(): ProductionStats {
    this.settle();
    return { ...this.engine.stats(), regions: this.#regions.map((r) => r.stats()), pendingDebits: this.#replays.size };
  }

  /** The database's state in a snapshot; the regions start empty after a restore (nothing buffered). */
  restore(snapshot: unknown): Result<EngineStats> {
    const restored = this.engine.restore(snapshot);
    if (restored.ok) this.#clearRegions();
    return restored;
  }

  restoreChecked(checked: CheckedSnapshot): EngineStats {
    const stats = this.engine.restoreChecked(checked);
    this.#clearRegions();
    return stats;
  }

  /** The database back to empty, the regions and the buffer emptied, the delays from the seed again. */
  reset(): void {
    this.engine.reset();
    this.#clearRegions();
  }

  #clearRegions(): void {
    for (const region of this.#regions) region.clear();
    this.#replays.clear();
    this.#random.reseed(replaySeed(this.engine.seed));
  }
}
