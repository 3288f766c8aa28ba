/**
 * The banner of a run that did not reach its planned end, one text for report.md and report.html
 * (each renderer only adds its markup). Whether the run was interrupted is the verdict's reading
 * (`runVerdict`, the one judgement behind every rendering and the exit code), so the banner can
 * never say "interrupted" where the headline and the exit code say otherwise. A run that failed
 * part-way is not a verdict of its own (what it found decides that): the banner says only that its
 * figures are partial, which the report's status records.
 */
import { formatCount, formatDuration } from './format.js';
import type { RunReport } from './model.js';
import { type RunVerdict, runVerdict } from './verdict.js';

export interface StatusBanner {
  /** `interrupted`: stopped by a signal, the figures cover what was measured; `failed`: the run could not go on. */
  kind: 'interrupted' | 'failed';
  /** The banner's first word, which the renderers set in bold. */
  word: 'Interrupted' | 'Failed';
  /** The sentence after it, plain text (each renderer escapes it for its format). */
  text: string;
}

/** The banner, or undefined for a run that reached its planned end. */
export function statusBanner(report: RunReport, verdict: RunVerdict = runVerdict(report)): StatusBanner | undefined {
  if (verdict.cause === 'interrupted') {
    return {
      kind: 'interrupted',
      word: 'Interrupted',
      text:
        `The run was stopped before its end: the figures cover only the ${formatDuration(report.measuredMs)} that were measured, ` +
        `and ${formatCount(report.totals.dropped)} planned sends were never made.`,
    };
  }
  if (report.status === 'failed') {
    return { kind: 'failed', word: 'Failed', text: 'The run could not go on; the figures are partial or empty. See the notes.' };
  }
  return undefined;
}
