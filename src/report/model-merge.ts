/**
 * The merge section of a run report (`RunReport.merge`): which segments' partial reports
 * `keysim merge` combined (docs/distributed.md). Re-exported by model.ts.
 */

/** Which partial reports a merged report was made from, and whether some were missing or incomplete. */
export interface MergeSection {
  /** N: the number of segments the plan was cut into. */
  segments: number;
  /** The segments whose reports were merged, as `i/N`, in order. */
  merged: string[];
  /** Segments of 0…N−1 with no report (a segment that never ran or whose report was lost). */
  missing: string[];
  /** Segments whose report is not `completed` (interrupted or failed), as `i/N (status)`. */
  incomplete: string[];
  /** True when a segment is missing or incomplete: the figures do not cover the whole plan. */
  partial: boolean;
}
