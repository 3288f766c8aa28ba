/**
 * The one-run method: a moving-block bootstrap over the per-second histograms.
 *
 * Requests of one run are not independent (a GC pause, a noisy neighbour or a compaction slows a
 * whole stretch of them), so resampling requests would overstate how sure we are. Seconds are
 * closer to independent, and blocks of consecutive seconds keep what correlation remains: each
 * resample draws blocks of `blockSeconds` consecutive seconds with replacement until it has as many
 * seconds as the run, merges their histograms and takes the figure. The interval of the ratio
 * candidate / baseline is the central `confidence` share of the resampled ratios (percentile
 * bootstrap), the two sides resampled independently. Several runs on a side are resampled each
 * within itself (blocks never straddle two runs) and pooled.
 *
 * Each side also gives the figures of its parts (its runs, or the halves of its one run), from
 * which compare-between.ts estimates the variation between runs the resamples cannot see.
 */
import type { RunReport } from './model.js';
import { type Second, ValueIndex, indexSeconds, mergedPercentiles, rawSeconds } from './compare-seconds.js';
import { quantileSorted } from './compare-stats.js';

export const BOOTSTRAP_PERCENTILES = [50, 90, 99, 99.9] as const;

/** The default block length for a run of `seconds` seconds: ⌈√seconds⌉ (5 s for a 25 s run). */
export function defaultBlockSeconds(seconds: number): number {
  return Math.max(1, Math.ceil(Math.sqrt(Math.max(1, seconds))));
}

/** Figures of one side, in one resample or over the whole runs. */
export interface SideSample {
  /** p50, p90, p99, p99.9 in ms (NaN without samples). */
  percentilesMs: number[];
  throughput: number;
  errorShare: number;
}

export interface BootstrapSide {
  full: SideSample;
  resamples: SideSample[];
  blockSeconds: number;
  /** Runs pooled on the side. */
  runs: number;
  /** The figures of each run when the side has two or more, else of its one run's halves (none under 2 s). */
  parts: SideSample[];
}

export interface BootstrapResult {
  baseline: BootstrapSide;
  candidate: BootstrapSide;
}

/**
 * The parts a side's between-run variation is estimated from: its runs, or the first and the last
 * ⌊n/2⌋ seconds of its one run (equal halves, so each holds half the data; an odd middle second is
 * left out).
 */
export function sideParts(runs: readonly Second[][]): Second[][] {
  if (runs.length >= 2) return runs.map((r) => [...r]);
  const run = runs[0] ?? [];
  const half = Math.floor(run.length / 2);
  return half === 0 ? [] : [run.slice(0, half), run.slice(run.length - half)];
}

function figuresOf(seconds: readonly Second[], values: readonly number[], dense: Float64Array): SideSample {
  let requests = 0;
  let errors = 0;
  for (const s of seconds) {
    requests += s.requests;
    errors += s.errors;
  }
  return {
    percentilesMs: mergedPercentiles(seconds, values, BOOTSTRAP_PERCENTILES, dense).map((us) => us / 1000),
    throughput: seconds.length === 0 ? 0 : requests / seconds.length,
    errorShare: requests === 0 ? 0 : errors / requests,
  };
}

/** One moving-block resample of each run's seconds, pooled. */
function resample(runs: readonly Second[][], blockSeconds: number, random: () => number): Second[] {
  const out: Second[] = [];
  for (const run of runs) {
    const length = Math.min(blockSeconds, run.length);
    const starts = run.length - length + 1;
    let taken = 0;
    while (taken < run.length) {
      const start = Math.floor(random() * starts);
      for (let i = 0; i < length && taken < run.length; i++, taken++) out.push(run[start + i] as Second);
    }
  }
  return out;
}

/**
 * Bootstraps one operation (`null`: all operations together) of the baseline's and the
 * candidate's runs. `blockSeconds` overrides the default block length.
 */
export function bootstrapOperation(
  baseline: readonly RunReport[],
  candidate: readonly RunReport[],
  operation: string | null,
  options: { resamples: number; random: () => number; blockSeconds?: number },
): BootstrapResult {
  const index = new ValueIndex();
  const rawB = baseline.map((r) => rawSeconds(r, operation));
  const rawC = candidate.map((r) => rawSeconds(r, operation));
  for (const side of [rawB, rawC]) for (const run of side) for (const s of run) for (const [v] of s.entries) index.add(v);
  index.seal();
  const runsB = rawB.map((run) => indexSeconds(run, index));
  const runsC = rawC.map((run) => indexSeconds(run, index));
  const dense = new Float64Array(index.values.length);
  const block = (runs: Second[][]) =>
    options.blockSeconds ??
    defaultBlockSeconds(
      quantileSorted(
        runs.map((r) => r.length).sort((a, b) => a - b),
        0.5,
      ),
    );
  const blockB = block(runsB);
  const blockC = block(runsC);
  const resB: SideSample[] = [];
  const resC: SideSample[] = [];
  for (let r = 0; r < options.resamples; r++) {
    resB.push(figuresOf(resample(runsB, blockB, options.random), index.values, dense));
    resC.push(figuresOf(resample(runsC, blockC, options.random), index.values, dense));
  }
  const side = (runs: Second[][], resamples: SideSample[], blockSeconds: number): BootstrapSide => ({
    full: figuresOf(runs.flat(), index.values, dense),
    resamples,
    blockSeconds,
    runs: runs.length,
    parts: sideParts(runs).map((part) => figuresOf(part, index.values, dense)),
  });
  return { baseline: side(runsB, resB, blockB), candidate: side(runsC, resC, blockC) };
}

/** The central `confidence` interval of the finite values (null when fewer than half of them are finite). */
export function centralInterval(values: readonly number[], confidence: number): { low: number; high: number } | null {
  const finite = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  if (finite.length === 0 || finite.length < values.length / 2) return null;
  const tail = (1 - confidence) / 2;
  return { low: quantileSorted(finite, tail), high: quantileSorted(finite, 1 - tail) };
}
