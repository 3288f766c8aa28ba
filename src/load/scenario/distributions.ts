/** Popularity distributions for request mixes. */
import type { Random } from '../../engine/index.js';

/** A uniform float in [0, 1). */
export function uniform(random: Random): number {
  return random.nextUint32() / 0x1_0000_0000;
}

/**
 * Zipf-distributed ranks 0..n-1 with exponent `s` (s = 1: the top key gets ~1/H(n) of the
 * traffic): real key popularity is heavily skewed. Precomputes the CDF once; sampling is a
 * binary search.
 */
export function zipfSampler(n: number, s = 1.1): (random: Random) => number {
  if (!Number.isInteger(n) || n < 1) throw new RangeError(`zipf needs n ≥ 1, got ${n}`);
  const cdf = new Float64Array(n);
  let total = 0;
  for (let k = 0; k < n; k++) {
    total += 1 / (k + 1) ** s;
    cdf[k] = total;
  }
  for (let k = 0; k < n; k++) cdf[k] = (cdf[k] ?? 0) / total;
  return (random) => {
    const u = uniform(random);
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((cdf[mid] ?? 1) < u) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}

/** Picks an entry by weight. */
export function weightedPicker<T extends { weight: number }>(entries: readonly T[]): (random: Random) => T {
  const total = entries.reduce((sum, e) => sum + Math.max(0, e.weight), 0);
  if (entries.length === 0 || total <= 0) throw new RangeError('a mix needs at least one entry with a positive weight');
  return (random) => {
    let u = uniform(random) * total;
    for (const entry of entries) {
      u -= Math.max(0, entry.weight);
      if (u < 0) return entry;
    }
    return entries[entries.length - 1] as T;
  };
}
