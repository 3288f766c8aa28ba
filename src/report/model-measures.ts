/**
 * Measures: figures a run measured against what the target promises (docs/consistency.md) — how
 * long a change took to be seen everywhere, how far a rate limit over- or under-admitted per
 * window size, how far credits went past the exact model. A scenario reports its own (the
 * `visibility` scenario's lags); the history checkers report theirs. Every rendering (terminal,
 * JSON, Markdown, HTML, JUnit) shows them, and thresholds can name them (`p95(lag.credits) < 60s`).
 * Re-exported by model.ts, which is where importers take it from.
 */

/** The unit of a measure's figures: milliseconds, a share (0.07: 7 %), or credits. */
export type MeasureUnit = 'ms' | 'share' | 'credits';

/** One measured figure over a run, summarised. */
export interface Measure {
  /**
   * Stable name, dotted: `lag.credits`, `lag.disable`, `lag.delete`, `lag.expiry`, `lag.override`,
   * `lag.refill`, `ratelimit.over-admission.60s`, `ratelimit.under-admission.60s`,
   * `credits.over-spend`, `credits.under-serve`. Thresholds name it.
   */
  name: string;
  /** What it measures, in a short sentence. */
  title: string;
  unit: MeasureUnit;
  /** Samples measured (answers that never came are not samples: see `unknown`). */
  count: number;
  /** Over the samples; absent when `count` is 0. */
  p50?: number;
  p95?: number;
  max?: number;
  /** What the promise set in force allows (same unit); absent: no promise covers it. */
  promise?: number;
  /** Samples that could not be measured (e.g. a read that never came back): unknown, never evidence. */
  unknown?: number;
  /** Who measured it: a scenario's own code, or the history checkers. */
  source: 'scenario' | 'history';
}
