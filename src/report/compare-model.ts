/**
 * The comparison of two sets of runs (`keysim compare`): one value from which the terminal table,
 * Markdown, HTML and JSON are pure renderings. Latencies in ms; shares 0..1.
 */
import type { Verdict } from './compare-stats.js';

export const COMPARISON_SCHEMA = 'keysim-comparison';
export const COMPARISON_VERSION = 1;

/** The operation name under which the figures of all operations together are listed. */
export const ALL_OPERATIONS = 'all';

export const FIGURES = ['p50', 'p90', 'p99', 'p999', 'throughput', 'errors', 'late'] as const;
export type Figure = (typeof FIGURES)[number];

/** Defaults, documented in docs/compare.md. */
export const COMPARE_DEFAULTS = {
  /** The practical threshold: changes within ±5 % are "the same". */
  noise: 0.05,
  /** Bootstrap resamples per side. */
  resamples: 1000,
  seed: 1,
  confidence: 0.95,
  /**
   * The smallest threshold for error and late shares, compared as differences: 0.1 percentage
   * point (a relative threshold of a share near 0 would call any single error a change).
   */
  minShareNoise: 0.001,
} as const;

export interface RunRef {
  /** Where it was read from (a run folder or a report.json), as given. */
  source: string;
  scenario: string;
  startedAt: string;
  measuredMs: number;
  requests: number;
  /** The load generator could not keep its schedule in this run. */
  generatorLimited: boolean;
}

export interface SideFigure {
  /** Point estimate: the figure of the pooled run (one-run method) or the median of the runs. */
  value: number;
  /** Its confidence interval (bootstrap percentiles, or order statistics of the runs). */
  low: number;
  high: number;
  /** One value per run (several-runs method only). */
  runs?: number[];
}

export interface FigureComparison {
  operation: string;
  figure: Figure;
  unit: 'ms' | 'req/s' | 'share';
  baseline: SideFigure | null;
  candidate: SideFigure | null;
  /**
   * relative: (candidate / baseline) − 1 (latency, throughput); absolute: candidate − baseline
   * (error and late shares, in 0..1).
   */
  changeKind: 'relative' | 'absolute';
  change: number | null;
  /** Confidence interval of the change, same kind; null when it could not be estimated. */
  interval: { low: number; high: number; confidence: number } | null;
  /** The threshold the interval was judged against (same kind as the change). */
  noise: number;
  /** not-judged: no interval (e.g. late sends with one run per side: they are not recorded per second). */
  verdict: Verdict | 'not-judged';
  /** Mann–Whitney U two-sided p-value over the runs (several-runs method only). */
  p?: number;
  watched: boolean;
  note?: string;
  /**
   * Set when a side's load generator could not keep its schedule and this figure moves with it:
   * the machine was the limit, so collecting more runs on it would not settle the verdict.
   */
  limitedBy?: 'generator';
  /**
   * One or two runs per side: the between-run standard deviation each side's replicates were
   * widened by (log scale for relative figures, about the relative spread; share units for shares).
   * 0: the runs showed no variation beyond sampling. Absent with the term off and run by run.
   */
  betweenRun?: { baseline: number; candidate: number };
}

/** A percentile spectrum for the overlaid chart: latency (ms) at x = log10(1 / (1 − p)). */
export interface SpectrumCurve {
  points: Array<{ x: number; ms: number }>;
}

export interface Comparison {
  schema: typeof COMPARISON_SCHEMA;
  version: typeof COMPARISON_VERSION;
  /** bootstrap: fewer than three runs on a side; runs: three or more on both. */
  method: 'bootstrap' | 'runs';
  settings: {
    noise: number;
    confidence: number;
    seed: number;
    /** Bootstrap only. */
    resamples?: number;
    /** Bootstrap only: block length, seconds, per side. */
    blockSeconds?: { baseline: number; candidate: number };
    /** Bootstrap only: whether the between-run term widened the intervals (absent in comparisons written before it). */
    betweenRuns?: boolean;
  };
  baseline: RunRef[];
  candidate: RunRef[];
  /** The operations compared (those of both sides), then `all`. */
  operations: string[];
  figures: FigureComparison[];
  /** The watched figures as expressions (`p99(keys.verifyKey)`). */
  watched: string[];
  /** The watched figures found worse (exit code 93 when any). */
  worse: string[];
  spectra: Array<{ operation: string; baseline: SpectrumCurve; candidate: SpectrumCurve }>;
  notes: string[];
}

/** The expression naming a figure, as `--watch` takes it: `p99(keys.verifyKey)`, `errors` (all operations). */
export function figureExpression(figure: Figure, operation: string): string {
  return operation === ALL_OPERATIONS ? figure : `${figure}(${operation})`;
}
