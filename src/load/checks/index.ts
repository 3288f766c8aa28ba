/**
 * Offline invariant checkers over a recorded history (history.ts): usage credits (credits.ts)
 * and rate limits (ratelimit.ts). Pure functions: events in, verdict out. The algorithms are
 * described at the top of each checker.
 */
import type { HistoryEvent } from '../history.js';
import { type CheckOptions, type CheckReport, INVARIANTS, type InvariantVerdict } from './types.js';
import { checkCredits } from './credits.js';
import { checkRateLimits } from './ratelimit.js';

export { checkCredits } from './credits.js';
export { checkRateLimits } from './ratelimit.js';

export type { CheckOptions, CheckReport, CheckedCounts, CheckerResult, InvariantId, InvariantVerdict, Violation } from './types.js';
export { INVARIANTS } from './types.js';

/** Runs every checker over one history (an array, or any iterable: it is read once). */
export function checkHistory(events: Iterable<HistoryEvent>, options: CheckOptions = {}): CheckReport {
  const all = Array.isArray(events) ? (events as HistoryEvent[]) : [...events];
  const results = [checkCredits(all, options), checkRateLimits(all, options)];
  const violations = results.flatMap((r) => r.violations);
  const invariants = INVARIANTS.map(({ id, title }): InvariantVerdict => {
    const count = violations.filter((v) => v.invariant === id).length;
    const checked = results.reduce((n, r) => n + (r.counts[id] ?? 0), 0);
    return { id, title, checked, violations: count, passed: count === 0 };
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
    notes: results.flatMap((r) => r.notes),
  };
}
