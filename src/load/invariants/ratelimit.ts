/**
 * Rate-limit invariants over a recorded history (docs/service-model.md#rate-limits), with counter-style bounds.
 *
 * A counter is what the service counts per window: (namespace, identifier, duration) for
 * ratelimit.limit and multiLimit, the limit's `rl_` id and duration for a key's or identity's
 * limit checked by verifyKey (an identity's limit is shared by its keys), and (key, name,
 * duration) for an inline limit. The effective limit and duration of a ratelimit.limit request
 * are an override's when one applies: the overrides set and deleted in the history are replayed
 * (an exact identifier beats a wildcard), and when an override's change is concurrent with a
 * request, every possibility is kept. An override the history never set but the answer names
 * is taken as the answer reports it (its window identified by `reset`). Namespaces are matched
 * by the string the requests used (name or id, consistently). Where this model may split what the
 * service counts as one counter (such a foreign override; one limit name of a key seen under
 * several ids or also inline), only over-admission is judged: splitting can only under-count.
 *
 * Each decision falls in the fixed window floor(t / duration) of its service time t: the service
 * bracket when recorded, else the wall times widened by the skew; a bracket crossing a window
 * boundary is narrowed by the answer's `reset` (a correct service reports its own window), else
 * the decision may be in either window. Per counter and window:
 *
 *   sure(k)     = admitted cost of confirmed answers surely in window k (one counter, one window)
 *   possible(k) = admitted or unknown (timeout) cost possibly in window k
 *
 * (1) No over-admission (ratelimit-admission.ts): for sets of requests surely admitted in window
 * k — all of them; X and those completed before X was sent; those decided by the latest time X
 * could have been, concurrent ones included — the set's cost plus what sure(k−1) still weighed
 * when the last of them was decided, floor(sure(k−1) · (1 − latest elapsed)), may not exceed the
 * limit: the sliding-window rule with every term a lower bound. (2) No false denial: a denied request X is legal only if, for some possible counter and
 * window, (possible cost in k invoked before X completed) + floor(possible(k−1) · (1 − earliest
 * elapsed)) + cost(X) > limit — an upper bound on what the service could have seen (plus the
 * cost of earlier entries of the same multiLimit on the same counter: the service counts those
 * first). A denial of cost 0 is always wrong. Unknown outcomes count only toward upper bounds.
 *
 * Sums are prefix sums over each window's decisions sorted by time (binary search), so the work
 * is O(n log n); decisions whose window range is wide (an unknown outcome may land in any later
 * window) sit in a per-counter list scanned by the denial checks, which is short in practice.
 */
import { iso } from '../../engine/iso.js';
import { type HistoryEvent, DEFAULT_WALL_SKEW_MS, effectUnknown } from '../history/index.js';
import type { InvariantOptions, InvariantFindings } from './types.js';
import { type Decision, type Possibility, collect } from './ratelimit-collect.js';
import { Counter, type Item, MAX_WINDOW_SPREAD } from './ratelimit-counters.js';
import { judgeOverAdmission } from './ratelimit-admission.js';
import { ViolationLog } from './violation-log.js';
import { ownKeys } from './segment-scope.js';
import { checkFalseDenials } from './ratelimit-denial.js';

// ── the checker ───────────────────────────────────────────────────────────────────────────

/**
 * Files every decision that may have taken effect under each counter and window it may have
 * counted in: `possible` always, `sure` when it was surely admitted on one counter in one window;
 * a decision whose windows spread wide goes to the counter's `wide` list. Counts the checks made.
 */
function fileDecisions(decisions: readonly Decision[]): { counters: Map<string, Counter>; rateLimitChecks: number } {
  const counters = new Map<string, Counter>();
  const counterOf = (p: Possibility): Counter => {
    let c = counters.get(p.counter);
    if (c === undefined) counters.set(p.counter, (c = new Counter(p.subject, p.durationMs)));
    return c;
  };
  let rateLimitChecks = 0;
  for (const d of decisions) {
    if (d.admitted !== 'maybe') rateLimitChecks += d.entries.length;
    if (d.admitted === 'no') continue;
    for (const entry of d.entries) {
      if (entry.cost === 0) continue;
      const definite = d.admitted === 'yes' && entry.possibilities.length === 1;
      for (const p of entry.possibilities) {
        const counter = counterOf(p);
        const item: Item = { inv: d.t.inv, comp: d.t.comp, sComp: d.t.sComp, cost: entry.cost, limit: p.limit, event: d.event, source: p.source };
        if (p.kHi - p.kLo > MAX_WINDOW_SPREAD) {
          counter.wide.push({ ...item, kLo: p.kLo, kHi: p.kHi });
          continue;
        }
        for (let k = p.kLo; k <= p.kHi; k++) counter.bucket(k).possible.push(item);
        if (definite && p.kLo === p.kHi) counter.bucket(p.kLo).sure.push(item);
      }
    }
  }
  for (const counter of counters.values()) for (const bucket of counter.buckets.values()) bucket.finish();
  return { counters, rateLimitChecks };
}

/** The largest share by which a window's surely admitted cost went over its limit (0: none did). */
function largestOverAdmission(counters: Iterable<Counter>): number {
  let most = 0;
  for (const counter of counters)
    for (const bucket of counter.buckets.values())
      if (bucket.maxSureLimit > 0 && bucket.sureTotal > bucket.maxSureLimit) most = Math.max(most, bucket.sureTotal / bucket.maxSureLimit - 1);
  return most;
}

/**
 * Every limit judged as `scale` × itself plus `costSlack` × the largest cost its counter saw
 * (promise-verdicts.ts's bands; 1 and 0 judge the limits as they are).
 */
function scaleLimits(decisions: readonly Decision[], scale: number, costSlack: number): void {
  if (scale === 1 && costSlack === 0) return;
  const largestCost = new Map<string, number>();
  for (const d of decisions)
    for (const e of d.entries) for (const p of e.possibilities) largestCost.set(p.counter, Math.max(largestCost.get(p.counter) ?? 0, e.cost));
  for (const d of decisions)
    for (const e of d.entries) for (const p of e.possibilities) p.limit = p.limit * scale + costSlack * (largestCost.get(p.counter) ?? 0);
}

/**
 * One sample per judged window (one with a surely admitted request): the share its surely
 * admitted cost went over its limit, 0 when it did not. A window whose admissions are all
 * unknown, or whose limit's window size is unknown, is not measured.
 */
function windowSamples(counters: Iterable<Counter>): {
  samples: Array<{ durationMs: number; share: number }>;
  unknown: Array<{ durationMs: number | undefined }>;
} {
  const samples: Array<{ durationMs: number; share: number }> = [];
  const unknown: Array<{ durationMs: number | undefined }> = [];
  for (const counter of counters) {
    const durationMs = counter.durationMs;
    // An admission that may fall in any later window (its answer never came) is one unknown.
    for (const w of counter.wide) if (effectUnknown(w.event)) unknown.push({ durationMs });
    for (const bucket of counter.buckets.values()) {
      if (bucket.sure.length === 0) {
        if (bucket.possible.some((i) => effectUnknown(i.event))) unknown.push({ durationMs });
        continue;
      }
      if (durationMs === undefined || bucket.maxSureLimit <= 0) {
        unknown.push({ durationMs });
        continue;
      }
      samples.push({ durationMs, share: Math.max(0, bucket.sureTotal / bucket.maxSureLimit - 1) });
    }
  }
  return { samples, unknown };
}

/** Checks the rate-limit invariants of a history (see the block comment at the top). */
export function judgeRateLimitInvariants(events: Iterable<HistoryEvent>, options: InvariantOptions = {}): InvariantFindings {
  const wallSkewMs = options.wallSkewMs ?? DEFAULT_WALL_SKEW_MS;
  const all = Array.isArray(events) ? (events as HistoryEvent[]) : [...events];
  const { decisions, unattributedSince, unjudgeable } = collect(all, wallSkewMs, options.segment !== undefined);
  scaleLimits(decisions, options.limitScale ?? 1, options.limitCostSlack ?? 0);
  const { counters, rateLimitChecks } = fileDecisions(decisions);
  const counts = { 'ratelimit.no-over-admission': 0, 'ratelimit.no-false-denial': 0 };
  const log = new ViolationLog();

  // (1) No over-admission (ratelimit-admission.ts).
  counts['ratelimit.no-over-admission'] += judgeOverAdmission(counters.values(), log);

  // (2) No false denial. In a segment, only on counters no other process can spend (segment-scope.ts):
  // elsewhere the admissions that filled the window may be in another segment's history.
  const ownedKeys = ownKeys(all, options.segment?.sharedKeyIds, options.segment !== undefined);
  const strict = options.strictAfterDenial ?? false;
  const { judged, leftToMerge, unjudged, underAdmission, unmeasured } = checkFalseDenials(
    decisions,
    counters,
    { ownedKeys, unattributedSince, unjudgeable, strict },
    log,
  );
  counts['ratelimit.no-false-denial'] += judged;

  const notes: string[] = [];
  if (unjudged > 0) {
    notes.push(
      `A verification without an answer, on a key whose limits no answer showed, was sent at ${iso(unattributedSince)}: ${unjudged} later RATE_LIMITED verifications were not judged.`,
    );
  }
  if (leftToMerge > 0) {
    notes.push(
      `${leftToMerge} denials were on limits other segments may also spend (a namespace's identifier, a key's attached or an identity's limit): they are judged across segments, not here.`,
    );
  }
  const overAdmission = largestOverAdmission(counters.values());
  const windows = windowSamples(counters.values());
  return {
    violations: log.violations(),
    ...(overAdmission > 0 ? { overAdmission } : {}),
    samples: { overAdmission: windows.samples, underAdmission, overAdmissionUnknown: windows.unknown, underAdmissionUnknown: unmeasured },
    checked: { keys: 0, verifications: 0, rateLimitChecks },
    counts,
    notes,
    ...(ownedKeys === undefined ? {} : { notJudged: { 'ratelimit.no-false-denial': leftToMerge } }),
  };
}
