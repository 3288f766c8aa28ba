/**
 * Promise sets: what a deployment promises about its consistency, figure by figure. `exact` is a
 * linearizable service (every over-spend or over-admission breaks it); `production` is the
 * documented behaviour of the production service (docs/consistency.md): regional credit counters
 * with a TTL, refills visible late, regional rate limits with an admission band. The checkers
 * judge a history against the set in force; a bound is always derived from the run itself, the
 * figures here only say how.
 */

export type ConsistencyName = 'exact' | 'production';

/** The consistency models keysim knows, in the order `--help` lists them. */
export const CONSISTENCY_NAMES: readonly ConsistencyName[] = ['exact', 'production'];

/** The figures of a promise set. */
export interface PromiseFigures {
  /** Regions the deployment runs in, when the history does not name them (x-keysim-region). */
  regions: number;
  /** Life of a regional credit counter, ms (0: one exact counter). */
  creditTtlMs: number;
  /** How long after a VALID answer its debit may still be missing from the database, ms (a regional counter created meanwhile does not see it). */
  creditReplayMs: number;
  /** How long after its boundary a refill may still be unseen, ms. */
  refillLagMs: number;
  /** How long a key cache entry stays fresh (a disabled key, a changed limit may be served), ms. */
  cacheFreshMs: number;
  /** How long a stale key cache entry may be served while it is refreshed, ms. */
  cacheStaleMs: number;
  /** How long a rate-limit override may be cached, ms. */
  overrideCacheMs: number;
  /**
   * Over-admission allowed per region, as a share of the limit, on top of one request's cost per
   * region (0.20: limit × (1 + 0.20 × regions) + regions × the largest cost; docs/consistency.md).
   */
  rateLimitOverAdmission: number;
  /** The share of the limit below which a denial is a false denial (0.95: down to 0.95 × limit). */
  rateLimitUnderAdmission: number;
}

export type PromiseFigure = keyof PromiseFigures;

/** A promise set in force: its name, its figures and which of them were set by hand. */
export interface PromiseSet extends PromiseFigures {
  name: ConsistencyName;
  /** The figures given by `--promise` or the config file, in the order given. */
  overridden: PromiseFigure[];
}

const FIGURES: Record<ConsistencyName, PromiseFigures> = {
  exact: {
    regions: 1,
    creditTtlMs: 0,
    creditReplayMs: 0,
    refillLagMs: 0,
    cacheFreshMs: 0,
    cacheStaleMs: 0,
    overrideCacheMs: 0,
    rateLimitOverAdmission: 0,
    rateLimitUnderAdmission: 1,
  },
  production: {
    regions: 2,
    creditTtlMs: 60_000,
    creditReplayMs: 5_000,
    refillLagMs: 60_000,
    cacheFreshMs: 10_000,
    cacheStaleMs: 600_000,
    overrideCacheMs: 60_000,
    // Derived from the mechanism (docs/consistency.md#the-rate-limit-band): a region publishes what
    // it admitted once that reaches 20 % of the limit, so each region may admit that share, and
    // the request that crosses it, beyond what the others saw.
    rateLimitOverAdmission: 0.2,
    rateLimitUnderAdmission: 0.95,
  },
};

/** Every figure's name, in the order `--help` and the reports list them. */
export const PROMISE_FIGURES: readonly PromiseFigure[] = Object.keys(FIGURES.exact) as PromiseFigure[];

/** A promise set, a figure or a consistency name that is not one keysim knows. */
export class PromiseError extends Error {
  override readonly name = 'PromiseError';
}

/** Whether a value is one of the consistency names. */
export function isConsistencyName(value: unknown): value is ConsistencyName {
  return typeof value === 'string' && (CONSISTENCY_NAMES as readonly string[]).includes(value);
}

/** The smallest and largest value each figure may take (a share is a fraction, regions a whole number). */
function checkFigure(figure: PromiseFigure, value: number): void {
  const bad = (what: string) => new PromiseError(`--promise ${figure}=${value}: ${figure} must be ${what}.`);
  if (!Number.isFinite(value)) throw bad('a finite number');
  if (figure === 'regions') {
    if (!Number.isInteger(value) || value < 1) throw bad('a whole number ≥ 1');
  } else if (figure === 'rateLimitUnderAdmission') {
    if (value <= 0 || value > 1) throw bad('a share of the limit in (0, 1], e.g. 0.95');
  } else if (figure === 'rateLimitOverAdmission') {
    if (value < 0 || value > 10) throw bad('a share of the limit per region in [0, 10], e.g. 0.20');
  } else if (value < 0) {
    throw bad('a duration in ms ≥ 0');
  }
}

/** The promise set `name`, with `overrides` (figure → value) applied; throws a PromiseError naming what was wrong. */
export function promiseSet(name: string = 'exact', overrides: Readonly<Record<string, number>> = {}): PromiseSet {
  if (!isConsistencyName(name)) throw new PromiseError(`--consistency ${name}: unknown consistency model; use one of ${CONSISTENCY_NAMES.join(', ')}.`);
  const set: PromiseSet = { name, ...FIGURES[name], overridden: [] };
  for (const [figure, value] of Object.entries(overrides)) {
    if (!(PROMISE_FIGURES as readonly string[]).includes(figure))
      throw new PromiseError(`--promise ${figure}=${value}: unknown promise figure "${figure}"; use one of ${PROMISE_FIGURES.join(', ')}.`);
    checkFigure(figure as PromiseFigure, value);
    set[figure as PromiseFigure] = value;
    set.overridden.push(figure as PromiseFigure);
  }
  return set;
}

/** `name=value` (one `--promise`) as a figure and its number; throws a PromiseError naming the flag. */
export function parsePromise(text: string): [PromiseFigure, number] {
  const eq = text.indexOf('=');
  const figure = eq < 0 ? text : text.slice(0, eq).trim();
  if (!(PROMISE_FIGURES as readonly string[]).includes(figure))
    throw new PromiseError(`--promise ${text}: unknown promise figure "${figure}"; use one of ${PROMISE_FIGURES.join(', ')} (as name=value).`);
  const raw = eq < 0 ? '' : text.slice(eq + 1).trim();
  const value = raw === '' ? Number.NaN : Number(raw);
  if (!Number.isFinite(value)) throw new PromiseError(`--promise ${text}: the value of ${figure} must be a number, as ${figure}=<number>.`);
  checkFigure(figure as PromiseFigure, value);
  return [figure as PromiseFigure, value];
}

/** Whether the set judges as one exact service: no tolerance at all (the checkers' own verdict stands). */
export function judgesExactly(set: PromiseFigures): boolean {
  return set.creditTtlMs === 0 && set.refillLagMs === 0 && set.rateLimitOverAdmission === 0 && set.rateLimitUnderAdmission === 1;
}

/** The set in a line: `production (regions 2, creditTtlMs 60000, …)`; overridden figures are marked `*`. */
export function promiseSetText(set: PromiseSet): string {
  const figures = PROMISE_FIGURES.map((f) => `${f} ${set[f]}${set.overridden.includes(f) ? '*' : ''}`);
  return `${set.name} (${figures.join(', ')})`;
}
