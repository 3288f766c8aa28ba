/**
 * The between-run term of the one- and two-run method (docs/compare.md#the-between-run-term).
 *
 * A block bootstrap resamples the seconds of the runs it was given, so its interval says how well
 * *these* runs measured their figure; it cannot see that another run of the same build lands
 * elsewhere (JIT decisions, heap layout, the machine's state). That variation between runs is
 * estimated from the side's own parts, as a one-way random-effects analysis of variance does:
 *
 * - the parts are the side's runs when it has two or more, else the two halves of its one run
 *   (the slowest variation a run shows of itself: another run of the same set-up may differ by at
 *   least as much as one run's halves do);
 * - S² is the sample variance of the parts' figures (on log scale for latency and throughput, whose
 *   changes are relative; as they are for error shares);
 * - the part of S² that sampling alone explains is k·v, where v is the bootstrap variance of the
 *   side's whole figure and k the number of parts (a part holds 1/k of the data);
 * - the level of one run then varies with variance σ² = max(0, S² − k·v), and a side pooling R
 *   runs with σ² / R.
 *
 * Every bootstrap replicate of a side is then shifted by σ·z, z one standard normal draw per side
 * and replicate (the whole run is slower or faster together). A steady run gives σ ≈ 0 and leaves
 * the interval as it was; a run that drifted widens it by as much as it drifted. There is no free
 * constant: the spread comes from the runs.
 */
import type { SideSample } from './compare-bootstrap.js';

/** The between-run standard deviation of each figure of a side (0: none seen), on the figure's own scale. */
export type BetweenSpread = SideSample;

/** How each figure is compared: relative figures on log scale, shares as they are. */
const onScale = {
  relative: (v: number) => (v > 0 ? Math.log(v) : Number.NaN),
  absolute: (v: number) => v,
};

function sampleVariance(values: readonly number[]): number {
  if (values.length < 2 || values.some((v) => !Number.isFinite(v))) return Number.NaN;
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  return values.reduce((a, v) => a + (v - mean) ** 2, 0) / (values.length - 1);
}

/** σ of one figure from its value in each part and in each bootstrap replicate of the whole side. */
export function betweenSpread(parts: readonly number[], replicates: readonly number[], runs: number, kind: keyof typeof onScale): number {
  const scale = onScale[kind];
  const s2 = sampleVariance(parts.map(scale));
  const finite = replicates.map(scale).filter((v) => Number.isFinite(v));
  // Fewer than half the replicates usable: the figure has no interval anyway (centralInterval).
  const v = finite.length < Math.max(2, replicates.length / 2) ? Number.NaN : sampleVariance(finite);
  if (!Number.isFinite(s2) || !Number.isFinite(v)) return 0;
  return Math.sqrt(Math.max(0, s2 - parts.length * v) / Math.max(1, runs));
}

/** The spread of every figure of a side: `parts` (≥ 2) as the doc comment says, `replicates` the side's bootstrap samples. */
export function sideSpread(parts: readonly SideSample[], replicates: readonly SideSample[], runs: number): BetweenSpread {
  if (parts.length < 2) return { percentilesMs: replicates[0]?.percentilesMs.map(() => 0) ?? [], throughput: 0, errorShare: 0 };
  const percentiles = parts[0]?.percentilesMs.length ?? 0;
  return {
    percentilesMs: Array.from({ length: percentiles }, (_, i) =>
      betweenSpread(
        parts.map((p) => p.percentilesMs[i] as number),
        replicates.map((r) => r.percentilesMs[i] as number),
        runs,
        'relative',
      ),
    ),
    throughput: betweenSpread(
      parts.map((p) => p.throughput),
      replicates.map((r) => r.throughput),
      runs,
      'relative',
    ),
    errorShare: betweenSpread(
      parts.map((p) => p.errorShare),
      replicates.map((r) => r.errorShare),
      runs,
      'absolute',
    ),
  };
}

/** A standard normal draw (Box–Muller) from a uniform source in [0, 1). */
export function normalDraw(random: () => number): number {
  return Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
}

/**
 * Each replicate shifted by its side's between-run level: latency and throughput multiplied by
 * exp(σ·z), the error share moved by σ·z and kept within [0, 1] (a share cannot leave it).
 */
export function shiftReplicates(replicates: readonly SideSample[], spread: BetweenSpread, random: () => number): SideSample[] {
  return replicates.map((r) => {
    const z = normalDraw(random);
    return {
      percentilesMs: r.percentilesMs.map((ms, i) => ms * Math.exp((spread.percentilesMs[i] ?? 0) * z)),
      throughput: r.throughput * Math.exp(spread.throughput * z),
      errorShare: Math.min(1, Math.max(0, r.errorShare + spread.errorShare * z)),
    };
  });
}
