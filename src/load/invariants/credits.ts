/**
 * Usage-credit invariants over a recorded history, with counter-style bounds.
 *
 * Every operation took effect at one instant (its linearisation point) inside its wall interval
 * [invoke, complete]; an operation whose effect is unknown (timeout, lost connection, 5xx) may
 * take effect at any time after its invoke, or never. Two operations whose intervals overlap may
 * have taken effect in either order. The checkers accept every order consistent with real time:
 * they compute, for each answer, bounds that hold in all of them, and report a violation only
 * when an answer is outside those bounds — so a correct service is never flagged (no false
 * positives), whatever the concurrency.
 *
 * Per key, the balance is a sequence of periods. A period starts at a "set": createKey (its
 * credits, or unlimited), updateKey with credits.remaining / null, updateCredits set, and every
 * refill boundary (the balance is replaced by the amount). Within a period only verifications
 * (VALID spends its cost), updateCredits increment (+) and decrement (− at most) change it.
 * For an answer X the last set before it is one of its candidates: the sets that may precede X
 * and that are not surely followed by another set that surely precedes X (usually one, two
 * around a concurrent change). For each candidate S with value [vLo, vHi]:
 *
 *   upper(X) = vHi + increments possibly between S and X − VALID spends surely between S and X
 *   lower(X) = vLo + increments surely between S and X  − spends/decrements possibly between
 *
 * ("surely between": invoked after S completed and completed before X was invoked; "possibly":
 * not surely before S and invoked before X completed). X's bounds are the union over candidates.
 * The sums are prefix sums over operations sorted by invoke and by complete time (binary search,
 * O(log n) per query; the "surely" sums are under-counted, the "possibly" sums exact or over-
 * counted, which only widens the bounds). Candidates come from a backward scan over the sets
 * sorted by start, cut off by a prefix maximum of their ends, so the work is O(n log n + n·k)
 * with k the number of candidates (capped; an answer with more is skipped, never guessed).
 *
 * Checks, per answer: (1) no over-spend — VALID needs upper ≥ cost, and the VALID cost surely
 * inside one period never exceeds its value plus the increments possibly in it; (2) no under-
 * serve — USAGE_EXCEEDED needs lower < cost; (3) consistent credits — the reported balance lies
 * in the bounds (VALID: [lower − cost, upper − cost]); and within one period the credits that
 * VALID answers consumed, (credits, credits + cost], are pairwise disjoint, because the balance
 * only goes down between sets (for cost 1: each balance is reported at most once); (4) refills —
 * when every candidate of an answer is a refill, a wrong balance or a refusal is reported as a
 * refill that was not applied (or did not replace the balance).
 *
 * Refill boundaries come from the calendar (engine/calendar.ts) on the service clock: service-
 * clock brackets when the history has them, wall times widened by the skew otherwise. A boundary
 * b maps to the wall interval [max complete of operations surely before b, min invoke of
 * operations surely after b] (any operation of the history; the service clock is monotone).
 * Boundaries between two consecutive service instants of the key's own operations collapse into
 * one set spanning them on the wall clock (they set the same amount, and an answer is only
 * attributed to that set once it is surely after the last of them). When the refill
 * configuration at a boundary is ambiguous (a concurrent or unknown change), that refill's value
 * is unknown, which disables the checks that depend on it instead of guessing.
 */
import { type HistoryEvent, DEFAULT_WALL_SKEW_MS } from '../history/index.js';
import type { InvariantOptions, InvariantFindings } from './types.js';
import { KeyCreditJudge } from './credits-bounds.js';
import { collect } from './credits-collect.js';
import { ServiceToWall, refillSets } from './credits-sets.js';
import { withRegionalLag } from './credits-lag.js';
import { ViolationLog } from './violation-log.js';
import { type CreditCounts, type CreditTally, checkKeyCredits } from './credits-key.js';
import { ownKeys } from './segment-scope.js';

const DEFAULT_MAX_CANDIDATES = 16;

/**
 * Checks the usage-credit invariants of a history (see the block comment at the top). Events may
 * come in any order; they are all held in memory.
 */
export function judgeCreditInvariants(events: Iterable<HistoryEvent>, options: InvariantOptions = {}): InvariantFindings {
  const wallSkewMs = options.wallSkewMs ?? DEFAULT_WALL_SKEW_MS;
  const cap = options.maxCandidates ?? DEFAULT_MAX_CANDIDATES;
  const mode = options.refill ?? 'replace';
  const history = Array.isArray(events) ? (events as HistoryEvent[]) : [...events];
  const collected = collect(history, wallSkewMs);
  // In a segment, only keys no other process can have used are judged (segment-scope.ts).
  const ownedKeys = ownKeys(history, options.segment?.sharedKeyIds, options.segment !== undefined);
  let keysLeftToMerge = 0;
  const map = new ServiceToWall(collected.brackets);
  const log = new ViolationLog();
  const counts: CreditCounts = { 'credits.no-over-spend': 0, 'credits.no-under-serve': 0, 'credits.consistent': 0, 'credits.refill': 0 };
  let keysChecked = 0;
  const tally: CreditTally = { verificationsChecked: 0, skippedAmbiguous: 0, refillLag: new Map(), underServe: [] };
  let keysWithoutCreate = 0;

  for (const key of collected.keys.values()) {
    if (key.sets.length === 0) {
      if (key.reads.length > 0) keysWithoutCreate++;
      continue;
    }
    if (ownedKeys !== undefined && !ownedKeys.has(key.keyId)) {
      keysLeftToMerge++;
      continue;
    }
    keysChecked++;
    const judged = options.regionalLag === undefined ? key : withRegionalLag(key, map, options.regionalLag, wallSkewMs);
    checkKeyCredits(judged, new KeyCreditJudge(judged, refillSets(judged, map, mode, options.refillLagMs ?? 0)), cap, log, counts, tally);
  }

  const notes: string[] = [];
  if (keysWithoutCreate > 0) notes.push(`${keysWithoutCreate} keys were used without their createKey in the history: their credits were not checked.`);
  if (collected.verificationsWithoutKeyId > 0) notes.push(`${collected.verificationsWithoutKeyId} verifications name no key id: not checked for credits.`);
  if (collected.createsWithoutKeyId > 0)
    notes.push(`${collected.createsWithoutKeyId} createKey calls have no answer (unknown outcome): the keys they may have made cannot be followed.`);
  if (keysLeftToMerge > 0)
    notes.push(
      `${keysLeftToMerge} keys were changed by this segment but not created by it: other segments may change them too, so their credits are judged across segments, not here.`,
    );
  if (tally.skippedAmbiguous > 0) notes.push(`${tally.skippedAmbiguous} answers came amid more than ${cap} possible credit changes: not checked.`);
  return {
    violations: log.violations(),
    samples: { refillLagMs: [...tally.refillLag.values()], underServe: tally.underServe },
    checked: { keys: keysChecked, verifications: tally.verificationsChecked, rateLimitChecks: 0 },
    counts,
    notes,
    ...(ownedKeys === undefined
      ? {}
      : {
          notJudged: {
            'credits.no-over-spend': keysLeftToMerge,
            'credits.no-under-serve': keysLeftToMerge,
            'credits.consistent': keysLeftToMerge,
            'credits.refill': keysLeftToMerge,
          },
        }),
  };
}
