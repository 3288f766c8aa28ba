/**
 * How an invariant's verdict under a promise set reads (docs/consistency.md), one wording for the
 * terminal, Markdown, HTML and JUnit: `exact`, `within promise (…)`, `violated (…)`, `unknown`.
 */
import type { InvariantResult, PromisesSection } from './model-invariants.js';

/** The verdict state of an invariant; a report written before promise sets has none: read from passed. */
export function invariantState(inv: InvariantResult): NonNullable<InvariantResult['state']> {
  if (inv.state !== undefined) return inv.state;
  if (!inv.passed) return 'violated';
  return inv.checked === 0 ? 'unknown' : 'exact';
}

/** `within promise: over-spend 60 credits ≤ bound 100 …`, `exact`, `violated: …`, `unknown`. */
export function invariantStateText(inv: InvariantResult): string {
  const state = invariantState(inv);
  const words = state === 'within-promise' ? 'within promise' : state;
  return inv.measured === undefined || state === 'exact' || state === 'unknown' ? words : `${words}: ${inv.measured}`;
}

/** The promise set in a sentence: `production (…); 2 regions (from the history)`. */
export function promisesText(p: PromisesSection): string {
  return `${p.text}; ${p.regions} region${p.regions === 1 ? '' : 's'} (from the ${p.regionsFrom})`;
}
