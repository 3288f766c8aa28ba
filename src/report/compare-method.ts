/** What both methods of a comparison (compare-by-bootstrap.ts, compare-by-runs.ts) take and give. */
import type { FigureComparison } from './compare-model.js';

/** The settings of either method, defaults applied (compare.ts). */
export interface MethodSettings {
  noise: number;
  confidence: number;
  seed: number;
  resamples: number;
  betweenRuns: boolean;
  /** Bootstrap block length, seconds (default ⌈√seconds⌉). */
  blockSeconds?: number | undefined;
}

/** A method's figures and its notes; or why the runs cannot be compared by it. */
export type MethodResult =
  { ok: true; figures: FigureComparison[]; notes: string[]; blockSeconds?: { baseline: number; candidate: number } } | { ok: false; error: string };
