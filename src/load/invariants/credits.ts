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
import { iso } from '../../engine/iso.js';
import { type HistoryEvent, DEFAULT_WALL_SKEW_MS } from '../history/index.js';
import type { InvariantOptions, InvariantFindings, InvariantId } from './types.js';
import { KeyCreditJudge } from './credits-bounds.js';
import { collect } from './credits-collect.js';
import { INF, type Read, type SetEvent, ServiceToWall, refillSets, surelyAfter } from './credits-sets.js';
import type { Amount } from './credits-sums.js';
import { ViolationLog, witness } from './violation-log.js';
import { ownKeys } from './segment-scope.js';

const DEFAULT_MAX_CANDIDATES = 16;

function fmt(n: number): string {
  return n === INF ? '∞' : String(n);
}

/** The top-ups that surely came in between, with when they were answered (the latest three named). */
function topUpText(topUps: readonly Amount[]): string {
  if (topUps.length === 0) return '';
  const total = topUps.reduce((n, a) => n + a.amount, 0);
  const named = topUps.slice(-3).map((a) => `#${a.event.seq} +${a.amount} (answered ${iso(a.comp)})`);
  const more = topUps.length > named.length ? ` and ${topUps.length - named.length} earlier` : '';
  return ` and the top-up${topUps.length === 1 ? '' : 's'} of ${total} credits surely before it: ${named.join(', ')}${more}`;
}

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
  const counts = { 'credits.no-over-spend': 0, 'credits.no-under-serve': 0, 'credits.consistent': 0, 'credits.refill': 0 };
  let keysChecked = 0;
  let verificationsChecked = 0;
  let skippedAmbiguous = 0;
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
    const check = new KeyCreditJudge(key, refillSets(key, map, mode));
    const subject = key.keyId;
    const groups = new Map<SetEvent, Array<{ read: Read; reported: number }>>();

    const reads = [...key.reads].sort((a, b) => a.t.comp - b.t.comp || a.event.seq - b.event.seq);
    for (const read of reads) {
      const x = read.t;
      const candidates = check.candidates(x, cap);
      if (candidates === undefined) {
        skippedAmbiguous++;
        continue;
      }
      if (candidates.length === 0) continue; // before the key existed: nothing to compare with
      const valid = read.code === 'VALID';
      const c = read.cost;
      const own = valid ? c : 0;
      const b = check.bounds(candidates, x, own);
      if (read.kind === 'verify') verificationsChecked++;
      const allRefills = candidates.every((s) => s.kind === 'refill');
      const at = x.comp;
      const r = read.reported;
      const what = read.kind === 'getKey' ? `getKey #${read.event.seq}` : `${read.code ?? 'answer'} #${read.event.seq} (cost ${c})`;
      // The decisive set, the answer, what happened in between, then the other candidate sets.
      const others = candidates.map((s) => s.event);
      const sureWitness = (s: SetEvent) => witness([s.event], check.sureSpendsBetween(s, x).slice(0, 3), [read.event], others);
      // A lower bound rests on the set and the top-ups surely after it: they come before the spends.
      const possibleWitness = (s: SetEvent) =>
        witness(
          [s.event],
          [read.event],
          check
            .sureTopUpsBetween(s, x)
            .slice(-3)
            .map((a) => a.event),
          check.possibleSpendsBetween(s, x, read.event).slice(0, 3),
          others,
        );
      const candidateText = (s: SetEvent) =>
        candidates.length === 1 ? `after ${s.label}` : `after ${s.label} (or another of ${candidates.length} concurrent changes)`;

      if (read.kind === 'verify') counts[valid ? 'credits.no-over-spend' : 'credits.no-under-serve'] += 1;
      if (allRefills) counts['credits.refill'] += 1;
      if (valid && b.hi < c) {
        log.add('credits.no-over-spend', subject, at, () => ({
          message: `${what} was granted although at most ${fmt(Math.max(0, b.hi))} credits could be left for it ${candidateText(b.hiSet)} and the ${check.sureSpendsBetween(b.hiSet, x).length} VALID answers surely in between.`,
          witness: sureWitness(b.hiSet),
        }));
      }
      if (read.code === 'USAGE_EXCEEDED' && b.lo >= c) {
        const invariant: InvariantId = allRefills ? 'credits.refill' : 'credits.no-under-serve';
        log.add(invariant, subject, at, () => ({
          message: `${what} was refused for credits although at least ${fmt(b.lo)} credits were surely left ${candidateText(b.loSet)}${topUpText(check.sureTopUpsBetween(b.loSet, x))}${allRefills ? ': the refill was not applied at its boundary' : ''} (${check.possibleSpendsBetween(b.loSet, x, read.event).length} operations could have spent in between).`,
          witness: possibleWitness(b.loSet),
        }));
      }
      if (r !== undefined) {
        counts['credits.consistent'] += 1;
        const low = valid ? b.lo - c : b.lo;
        const high = valid ? b.hi - c : b.hi;
        const invariant: InvariantId = allRefills ? 'credits.refill' : 'credits.consistent';
        if (r < 0 || r < low) {
          log.add(invariant, subject, at, () => ({
            message: `${what} reports ${fmt(r)} credits, but ${candidateText(b.loSet)} at least ${fmt(Math.max(0, low))} must have been left${allRefills ? ': the refill was not applied at its boundary' : ''}.`,
            witness: possibleWitness(b.loSet),
          }));
        } else if (r > high) {
          const bound = high >= 0 ? `at most ${fmt(high)} could be left` : `at most ${fmt(Math.max(0, b.hi))} were left before it, less than its cost`;
          log.add(invariant, subject, at, () => ({
            message: `${what} reports ${fmt(r)} credits, but ${candidateText(b.hiSet)} ${bound}${allRefills ? ': a refill replaces the balance, it does not add to it' : ' (a lost decrement?)'}.`,
            witness: sureWitness(b.hiSet),
          }));
        } else if (read.code === 'USAGE_EXCEEDED' && r >= c) {
          log.add('credits.consistent', subject, at, () => ({
            message: `${what} was refused for credits but reports a balance of ${fmt(r)}, enough for its cost.`,
            witness: [read.event],
          }));
        }
        // Within one period the balance only goes down: collect for the disjointness check.
        if (valid && c > 0 && candidates.length === 1) {
          const s = candidates[0] as SetEvent;
          if (surelyAfter(x, s) && check.boundsFor(s, x, own).upPossible === 0) {
            let group = groups.get(s);
            if (group === undefined) groups.set(s, (group = []));
            group.push({ read, reported: r });
          }
        }
      }
    }

    // (3) the credits consumed by VALID answers of one period, (credits, credits + cost], are disjoint.
    for (const [s, group] of groups) {
      if (group.length < 2) continue;
      group.sort((p, q) => p.reported - q.reported || p.read.event.seq - q.read.event.seq);
      for (let i = 0; i + 1 < group.length; i++) {
        const a = group[i] as (typeof group)[number];
        const next = group[i + 1] as (typeof group)[number];
        if (a.reported + a.read.cost <= next.reported) continue;
        const invariant: InvariantId = s.kind === 'refill' ? 'credits.refill' : 'credits.consistent';
        log.add(invariant, subject, Math.max(a.read.t.comp, next.read.t.comp), () => ({
          message:
            `VALID #${a.read.event.seq} and VALID #${next.read.event.seq} both after ${s.label} report ${a.reported} (cost ${a.read.cost}) and ${next.reported} (cost ${next.read.cost}) credits: ` +
            'between credit changes the balance only goes down, so the credits they consumed cannot overlap (a lost decrement: one balance reported twice).',
          witness: witness([s.event, a.read.event, next.read.event]),
        }));
        break;
      }
    }

    // (1) the VALID cost surely inside one period never exceeds what the period had.
    const all = check.sets;
    let maxHiAll = Number.NEGATIVE_INFINITY;
    let maxHiOps = Number.NEGATIVE_INFINITY;
    for (const [i, s] of all.entries()) {
      const overlapped = s.kind === 'refill' ? maxHiOps >= s.lo : maxHiAll >= s.lo;
      maxHiAll = Math.max(maxHiAll, s.hi);
      if (s.kind === 'op') maxHiOps = Math.max(maxHiOps, s.hi);
      if (s.vHi === INF || s.hi === INF || overlapped) continue;
      const end = i + 1 < all.length ? (all[i + 1] as SetEvent).lo : INF;
      const notAfter = s.hiIncl ? check.sureDown.invLT(s.hi) : check.sureDown.invLE(s.hi);
      const spent = Math.max(0, check.sureDown.compLT(end) - notAfter);
      const upNotAfter = s.loIncl ? check.possibleUp.compLE(s.lo) : check.possibleUp.compLT(s.lo);
      const budget = s.vHi + check.possibleUp.invLT(end) - upNotAfter;
      counts['credits.no-over-spend'] += 1;
      if (spent <= budget) continue;
      const inside = key.sureDown.filter((a) => a.comp < end && surelyAfter(a, s)).sort((p, q) => p.comp - q.comp);
      log.add('credits.no-over-spend', subject, inside[inside.length - 1]?.comp ?? s.hi, () => ({
        message: `${inside.length} VALID answers worth ${inside.reduce((n, a) => n + a.amount, 0)} credits all came after ${s.label} and before any other credit change, but the budget was ${fmt(budget)}.`,
        witness: witness(
          [s.event],
          inside.slice(0, 2).map((a) => a.event),
          inside.slice(-3).map((a) => a.event),
        ),
      }));
    }
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
  if (skippedAmbiguous > 0) notes.push(`${skippedAmbiguous} answers came amid more than ${cap} possible credit changes: not checked.`);
  return {
    violations: log.violations(),
    checked: { keys: keysChecked, verifications: verificationsChecked, rateLimitChecks: 0 },
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
