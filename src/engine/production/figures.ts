/**
 * The production service's figures the profile reproduces (docs/simulator.md#the-production-profile),
 * and the options that change them.
 */

export interface ProductionFigures {
  /** Regions in front of the one database; default 2. */
  regions: number;
  /** A region's credit counter lives this long from its creation (traffic does not extend it). */
  counterTtlMs: number;
  /** A region's cached key is served as is this long after it was read from the database. */
  cacheFreshMs: number;
  /** Up to this age a cached key is still served, and read again behind it (stale-while-revalidate). */
  cacheStaleMs: number;
  /** A valid debit lands in the database after a delay drawn from [min, max] ms (seeded). */
  replayDelayMs: { min: number; max: number };
  /** A region's copy of a rate-limit counter is used as is this long after it was pulled. */
  rateLimitFreshMs: number;
  /** A region pushes and pulls all its rate-limit counters this often … */
  rateLimitSyncMs: number;
  /** … give or take this share of it (seeded). */
  rateLimitSyncJitter: number;
  /** A region publishes a counter at once when what it admitted unpublished reaches this share of the limit. */
  rateLimitPublishShare: number;
  /** A region keeps the override it found for an identifier this long. */
  overrideCacheMs: number;
}

export const PRODUCTION_FIGURES: Readonly<ProductionFigures> = Object.freeze({
  regions: 2,
  counterTtlMs: 60_000,
  cacheFreshMs: 10_000,
  cacheStaleMs: 600_000,
  // At least 1 ms: a debit is buffered, never written in the instant it was made.
  replayDelayMs: Object.freeze({ min: 1, max: 5_000 }),
  rateLimitFreshMs: 5_000,
  rateLimitSyncMs: 5_000,
  rateLimitSyncJitter: 0.2,
  rateLimitPublishShare: 0.2,
  overrideCacheMs: 60_000,
});

/** The most regions a profile takes: enough to show drift, few enough to stay readable. */
export const MAX_REGIONS = 16;

/** The figures of these options, checked; a message saying what is wrong and what is allowed otherwise. */
export function checkFigures(options: Partial<ProductionFigures>): { ok: true; figures: ProductionFigures } | { ok: false; message: string } {
  const figures: ProductionFigures = { ...PRODUCTION_FIGURES, ...options, replayDelayMs: { ...(options.replayDelayMs ?? PRODUCTION_FIGURES.replayDelayMs) } };
  if (!Number.isInteger(figures.regions) || figures.regions < 1 || figures.regions > MAX_REGIONS) {
    return { ok: false, message: `regions must be an integer from 1 to ${MAX_REGIONS}, got ${String(figures.regions)}.` };
  }
  for (const name of ['counterTtlMs', 'cacheFreshMs', 'cacheStaleMs', 'rateLimitFreshMs', 'rateLimitSyncMs', 'overrideCacheMs'] as const) {
    const value = figures[name];
    if (!Number.isInteger(value) || value < 1) return { ok: false, message: `${name} must be an integer ≥ 1 (milliseconds), got ${String(value)}.` };
  }
  for (const name of ['rateLimitSyncJitter', 'rateLimitPublishShare'] as const) {
    const value = figures[name];
    if (!(value >= 0 && value <= 1)) return { ok: false, message: `${name} must be a share from 0 to 1, got ${String(value)}.` };
  }
  if (figures.cacheStaleMs < figures.cacheFreshMs) {
    return { ok: false, message: `cacheStaleMs (${figures.cacheStaleMs}) must be at least cacheFreshMs (${figures.cacheFreshMs}).` };
  }
  const { min, max } = figures.replayDelayMs;
  if (!Number.isInteger(min) || !Number.isInteger(max) || min < 0 || max < min) {
    return { ok: false, message: `replayDelayMs must be integers with 0 ≤ min ≤ max (milliseconds), got min ${String(min)}, max ${String(max)}.` };
  }
  return { ok: true, figures };
}
