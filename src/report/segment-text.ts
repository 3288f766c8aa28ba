/** The banner of a segment's partial report, or of a report merged from segments (docs/distributed.md). */
import type { RunReport } from './model.js';

export interface SegmentBanner {
  /** True when the figures miss part of the plan: a merge with a missing or incomplete segment. */
  partial: boolean;
  text: string;
}

export function segmentBanner(report: RunReport): SegmentBanner | undefined {
  const merge = report.merge;
  if (merge !== undefined) {
    if (!merge.partial) return { partial: false, text: `Merged from all ${merge.segments} segments (${merge.merged.join(', ')}).` };
    const what = [
      merge.missing.length > 0 ? `missing: ${merge.missing.join(', ')}` : '',
      merge.incomplete.length > 0 ? `incomplete: ${merge.incomplete.join(', ')}` : '',
    ]
      .filter((t) => t !== '')
      .join('; ');
    return { partial: true, text: `Merged from ${merge.merged.length} of ${merge.segments} segments (${what}): the figures do not cover the whole plan.` };
  }
  if (report.segment !== undefined) {
    const { index, count } = report.segment;
    return {
      partial: false,
      text: `Segment ${index}/${count}: a partial report — this run sent the plan's arrivals k with k mod ${count} = ${index}; keysim merge combines the ${count} segments' reports into one.`,
    };
  }
  return undefined;
}
