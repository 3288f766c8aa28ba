/**
 * Offline invariant checkers over a recorded history (history.ts): usage credits (credits.ts)
 * and rate limits (ratelimit.ts). Pure functions: events in, verdict out. The algorithms are
 * described at the top of each checker.
 */
import type { HistoryEvent } from '../history/index.js';
import { type InvariantOptions, type InvariantReport, INVARIANTS, type InvariantVerdict, type VerdictState } from './types.js';
import { judgeCreditInvariants } from './credits.js';
import { judgeRateLimitInvariants } from './ratelimit.js';
import { judgeUnderPromises } from './promise-verdicts.js';
import { checkerMeasures } from './measures.js';
import { promiseSet } from '../promises/index.js';

export { judgeCreditInvariants } from './credits.js';
export { judgeRateLimitInvariants } from './ratelimit.js';

export type {
  InvariantOptions,
  InvariantReport,
  JudgedCounts,
  InvariantFindings,
  InvariantId,
  InvariantVerdict,
  PromisesInForce,
  VerdictState,
  Violation,
} from './types.js';
export { regionsOf } from './promise-verdicts.js';
export { INVARIANTS } from './types.js';

/** Which invariants one segment judged and which it left to the verdict across segments. */
function segmentNote(invariants: readonly InvariantVerdict[]): string {
  const left = invariants.filter((i) => (i.notJudged ?? 0) > 0).map((i) => `${i.id} (${i.notJudged} ${i.id.startsWith('credits.') ? 'keys' : 'denials'})`);
  const judged = invariants.filter((i) => i.checked > 0).map((i) => i.id);
  return (
    `Judged in this segment: ${judged.length === 0 ? 'nothing' : judged.join(', ')}. ` +
    (left.length === 0
      ? 'Nothing was left to the verdict across segments.'
      : `Not judged in one segment (judged across segments by keysim merge / keysim check): ${left.join(', ')} — keys this segment did not create and limits other segments may also spend (docs/checking.md#one-segments-own-verdict).`)
  );
}

/**
 * Runs every checker over one history (an array, or any iterable: it is read once), and judges
 * what they found against `options.promises` (default exact: promise-verdicts.ts).
 */
export function judgeInvariants(events: Iterable<HistoryEvent>, options: InvariantOptions = {}): InvariantReport {
  const all = Array.isArray(events) ? (events as HistoryEvent[]) : [...events];
  const results = [judgeCreditInvariants(all, options), judgeRateLimitInvariants(all, options)];
  const set = options.promises ?? promiseSet('exact');
  const underSet = judgeUnderPromises(all, options, set, results);
  const promised = options.promises === undefined ? undefined : underSet;
  const judgements = promised?.judgements;
  // Under a promise set, an invariant it judged again keeps the violations of the promise only.
  const violations = results.flatMap((r) => r.violations).filter((v) => judgements?.get(v.invariant) === undefined);
  for (const j of judgements?.values() ?? []) violations.push(...j.violations);
  const invariants = INVARIANTS.map(({ id, title }): InvariantVerdict => {
    const count = violations.filter((v) => v.invariant === id).length;
    const checked = results.reduce((n, r) => n + (r.counts[id] ?? 0), 0);
    const notJudged = results.reduce((n, r) => n + (r.notJudged?.[id] ?? 0), 0);
    const judged = judgements?.get(id);
    const state: VerdictState = count > 0 ? 'violated' : (judged?.state ?? (checked === 0 ? 'unknown' : 'exact'));
    return {
      id,
      title,
      checked,
      violations: count,
      passed: count === 0,
      state,
      ...(judged?.measured === undefined ? {} : { measured: judged.measured }),
      ...(options.segment === undefined ? {} : { notJudged }),
    };
  });
  return {
    passed: violations.length === 0,
    violations,
    checked: {
      keys: results.reduce((n, r) => n + r.checked.keys, 0),
      verifications: results.reduce((n, r) => n + r.checked.verifications, 0),
      rateLimitChecks: results.reduce((n, r) => n + r.checked.rateLimitChecks, 0),
    },
    invariants,
    notes: [...(options.segment === undefined ? [] : [segmentNote(invariants)]), ...results.flatMap((r) => r.notes)],
    ...(promised === undefined ? {} : { promises: promised.inForce }),
    // Taken from the exact judgement (never the banded ones), against the set in force.
    measures: checkerMeasures({
      credits: results[0]?.samples,
      rateLimit: results[1]?.samples,
      overSpend: underSet.overSpend,
      set,
      regions: underSet.inForce.regions,
    }),
  };
}
