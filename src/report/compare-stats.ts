/**
 * The statistics of `keysim compare`, as pure functions: a seeded random source, the Mann–Whitney
 * U test, distribution-free confidence intervals from order statistics, and the verdict rule.
 * See docs/compare.md for why these and not a t-test over requests.
 */

/** A seeded pseudo-random source (mulberry32): the same seed gives the same resamples. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A 32-bit hash of a string (FNV-1a), to give every figure its own random stream from one seed. */
export function hashString(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** The q-quantile (0..1) of sorted values, linearly interpolated (R's type 7). */
export function quantileSorted(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const h = (sorted.length - 1) * q;
  const lo = Math.floor(h);
  const hi = Math.ceil(h);
  const a = sorted[lo] as number;
  const b = sorted[hi] as number;
  return a + (h - lo) * (b - a);
}

export function median(values: readonly number[]): number {
  return quantileSorted(
    [...values].sort((a, b) => a - b),
    0.5,
  );
}

/** The standard normal distribution function Φ (Abramowitz–Stegun 7.1.26 via erf; error < 1e-7). */
export function normalCdf(z: number): number {
  const x = Math.abs(z) / Math.SQRT2;
  const t = 1 / (1 + 0.3275911 * x);
  const erf = 1 - ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * Math.exp(-x * x);
  return z >= 0 ? 0.5 * (1 + erf) : 0.5 * (1 - erf);
}

/** Samples per side up to which, without ties, the U test is exact (as R's wilcox.test). */
export const EXACT_U_LIMIT = 50;

const uCounts = new Map<string, Float64Array>();

/**
 * Number of orderings of m + n distinct values giving each U = 0 … m·n (the Mann–Whitney null
 * distribution, unnormalised), by the recurrence c(m, n, u) = c(m−1, n, u−n) + c(m, n−1, u).
 */
function uDistribution(m: number, n: number): Float64Array {
  const key = `${m},${n}`;
  const cached = uCounts.get(key);
  if (cached !== undefined) return cached;
  let counts: Float64Array;
  if (m === 0 || n === 0) {
    counts = new Float64Array([1]);
  } else {
    counts = new Float64Array(m * n + 1);
    const a = uDistribution(m - 1, n);
    const b = uDistribution(m, n - 1);
    for (let u = 0; u <= m * n; u++) counts[u] = (u - n >= 0 && u - n < a.length ? (a[u - n] as number) : 0) + (u < b.length ? (b[u] as number) : 0);
  }
  uCounts.set(key, counts);
  return counts;
}

/** P(U ≤ u) under the null hypothesis, for m and n distinct samples (exact). */
export function uCdf(m: number, n: number, u: number): number {
  const counts = uDistribution(m, n);
  let total = 0;
  let below = 0;
  for (let i = 0; i < counts.length; i++) {
    total += counts[i] as number;
    if (i <= u) below += counts[i] as number;
  }
  return below / total;
}

export interface MannWhitney {
  /** U of the first sample: pairs where it is the larger, ties counting one half (R's W). */
  u: number;
  /** Two-sided p-value. */
  p: number;
  /** exact: the null distribution counted (no ties, both samples ≤ 50); normal: the normal approximation with tie and continuity corrections. */
  method: 'exact' | 'normal';
}

/**
 * The Mann–Whitney U test (Wilcoxon rank-sum) of `x` against `y`, two-sided. Exact when there are
 * no ties and both samples have at most {@link EXACT_U_LIMIT} values; otherwise the normal
 * approximation with the tie correction of the variance and a continuity correction, which is
 * what R's `wilcox.test(x, y)` does.
 */
export function mannWhitneyU(x: readonly number[], y: readonly number[]): MannWhitney {
  const m = x.length;
  const n = y.length;
  if (m === 0 || n === 0) return { u: 0, p: 1, method: 'exact' };
  let u = 0;
  for (const a of x) for (const b of y) u += a > b ? 1 : a === b ? 0.5 : 0;
  // Tie groups over the pooled sample.
  const pooled = [...x, ...y].sort((a, b) => a - b);
  let tieTerm = 0;
  for (let i = 0; i < pooled.length;) {
    let j = i;
    while (j < pooled.length && pooled[j] === pooled[i]) j++;
    const t = j - i;
    tieTerm += t * t * t - t;
    i = j;
  }
  if (tieTerm === 0 && m <= EXACT_U_LIMIT && n <= EXACT_U_LIMIT) {
    const lower = uCdf(m, n, u);
    const upper = 1 - uCdf(m, n, u - 1);
    return { u, p: Math.min(1, 2 * Math.min(lower, upper)), method: 'exact' };
  }
  const total = m + n;
  const mean = (m * n) / 2;
  const variance = ((m * n) / 12) * (total + 1 - tieTerm / (total * (total - 1)));
  if (variance <= 0) return { u, p: 1, method: 'normal' };
  const d = u - mean;
  const z = (d - 0.5 * Math.sign(d)) / Math.sqrt(variance);
  return { u, p: Math.min(1, 2 * (1 - normalCdf(Math.abs(z)))), method: 'normal' };
}

export interface Interval {
  low: number;
  high: number;
  /** The confidence actually achieved (order statistics give discrete levels), 0..1. */
  confidence: number;
}

function binomialHalfCdf(n: number, k: number): number {
  let sum = 0;
  let term = 0.5 ** n; // C(n, 0) / 2^n
  for (let i = 0; i <= k; i++) {
    sum += term;
    term = (term * (n - i)) / (i + 1);
  }
  return sum;
}

/**
 * A distribution-free confidence interval of the median: [x₍k₎, x₍n+1−k₎] with the largest k whose
 * coverage 1 − 2·P(B < k), B ~ Binomial(n, ½), is at least `confidence`. With too few values for
 * that (fewer than 6 at 95 %), [min, max] and the (lower) confidence it has.
 */
export function medianInterval(values: readonly number[], confidence = 0.95): Interval {
  const sorted = [...values].sort((a, b) => a - b);
  const n = sorted.length;
  if (n === 0) return { low: Number.NaN, high: Number.NaN, confidence: 0 };
  let k = 1;
  while (k + 1 <= n / 2 && 1 - 2 * binomialHalfCdf(n, k) >= confidence) k++;
  return { low: sorted[k - 1] as number, high: sorted[n - k] as number, confidence: 1 - 2 * binomialHalfCdf(n, k - 1) };
}

/**
 * A distribution-free confidence interval of the shift between two samples (the Hodges–Lehmann
 * estimator's interval, Bauer 1972): the differences yⱼ − xᵢ of all pairs, sorted, and
 * [D₍k₎, D₍mn+1−k₎] with k from the U distribution. Given log values it is the interval of the ratio
 * of the two distributions' typical values. With too few values for `confidence` (3 and 3 reach
 * 90 %), the widest interval, [min, max] of the differences, with the confidence it has.
 */
export function shiftInterval(x: readonly number[], y: readonly number[], confidence = 0.95): Interval & { estimate: number } {
  const diffs: number[] = [];
  for (const a of x) for (const b of y) diffs.push(b - a);
  diffs.sort((a, b) => a - b);
  const m = x.length;
  const n = y.length;
  const mn = diffs.length;
  if (mn === 0) return { low: Number.NaN, high: Number.NaN, confidence: 0, estimate: Number.NaN };
  const useExact = m <= EXACT_U_LIMIT && n <= EXACT_U_LIMIT;
  // P(U ≤ k − 1) for the k-th smallest difference to be the lower bound.
  const tail = (k: number) => (useExact ? uCdf(m, n, k - 1) : normalCdf((k - 1 + 0.5 - mn / 2) / Math.sqrt((m * n * (m + n + 1)) / 12)));
  let k = 1;
  while (k + 1 <= mn / 2 && 1 - 2 * tail(k + 1) >= confidence) k++;
  return { low: diffs[k - 1] as number, high: diffs[mn - k] as number, confidence: 1 - 2 * tail(k), estimate: quantileSorted(diffs, 0.5) };
}

export type Verdict = 'better' | 'worse' | 'same' | 'inconclusive';

/**
 * The verdict on a change whose confidence interval is [low, high] (a relative change, 0.1 = +10 %,
 * or an absolute difference), against the practical threshold `noise` (> 0):
 * - worse: the whole interval is beyond +noise (strictly) in the bad direction;
 * - better: the whole interval is beyond −noise in the good direction;
 * - same: the whole interval lies within ±noise (bounds included);
 * - inconclusive otherwise: the interval straddles a threshold, collect more data.
 * `higherIsWorse` is true for latency and error shares, false for throughput (the direction flips).
 */
export function verdictOf(low: number, high: number, noise: number, higherIsWorse: boolean): Verdict {
  if (!Number.isFinite(low) || !Number.isFinite(high)) return 'inconclusive';
  const [worseSide, betterSide] = higherIsWorse ? [low > noise, high < -noise] : [high < -noise, low > noise];
  if (worseSide) return 'worse';
  if (betterSide) return 'better';
  if (low >= -noise && high <= noise) return 'same';
  return 'inconclusive';
}
