/**
 * (2) No false denial (ratelimit.ts's block comment): a denied request is legal only if, for some
 * possible counter and window, an upper bound on what the service could have counted plus its
 * cost exceeds the limit. Otherwise the denial is a violation, explained by the window that came
 * closest to the limit.
 */
import type { Decision, Possibility } from './ratelimit-collect.js';
import { type Bucket, type Counter, MAX_WINDOW_SPREAD, windowText } from './ratelimit-counters.js';
import { type ViolationLog, witness } from './violation-log.js';
import { ownCounter } from './segment-scope.js';

/** The window that came closest to the limit: what the violation names. */
interface Explanation {
  used: number;
  limit: number;
  cost: number;
  p: Possibility;
  k: number;
  bucket: Bucket | undefined;
}

/** Which denials are judged: a segment's own counters, and none after an unattributed unknown verification. */
export interface DenialScope {
  ownedKeys: ReadonlySet<string> | undefined;
  unattributedSince: number;
  unjudgeable: (counter: string) => boolean;
  /** A denial after a legal denial of the same counter, window and region is legal (InvariantOptions.strictAfterDenial). */
  strict?: boolean;
}

/** How many denials were judged, left to the merge of segments, and not judged at all; and what they measured. */
export interface DenialTally {
  judged: number;
  leftToMerge: number;
  unjudged: number;
  /** Per judged denial: the share of the limit not yet usable when it came (measures.ts). */
  underAdmission: Array<{ durationMs: number; share: number }>;
  /** Denials whose earliness the history cannot size (an unknown window, several windows far apart, a split counter). */
  unmeasured: Array<{ durationMs: number | undefined }>;
}

/** How a denial weighed: legal or not, and how early it came (undefined: not measurable). */
interface Weighed {
  legal: boolean;
  zeroCost: boolean;
  explanation: Explanation | undefined;
  early: { durationMs: number; share: number } | undefined;
  /** The counters and windows it was denied on, for the strictness of its region. */
  denied: Array<{ counter: string; k: number }>;
}

export function checkFalseDenials(decisions: readonly Decision[], counters: ReadonlyMap<string, Counter>, scope: DenialScope, log: ViolationLog): DenialTally {
  const tally: DenialTally = { judged: 0, leftToMerge: 0, unjudged: 0, underAdmission: [], unmeasured: [] };
  // By answer: a region's earlier legal denial makes it strict for the later ones.
  const denials = decisions.filter((d) => d.admitted === 'no').sort((a, b) => a.t.comp - b.t.comp);
  /** Per counter, window and region: when a legal denial there was answered (the earliest). */
  const strictSince = new Map<string, number>();
  const strictKey = (dn: Decision, counter: string, k: number) => `${counter}\0${k}\0${dn.event.region ?? ''}`;
  for (const dn of denials) {
    if (dn.kind === 'verify' && dn.t.comp > scope.unattributedSince) {
      tally.unjudged++;
      continue;
    }
    if (dn.entries.length === 0) continue;
    const ownedKeys = scope.ownedKeys;
    if (ownedKeys !== undefined && dn.entries.some((e) => e.exceeded && e.possibilities.some((p) => !ownCounter(p.counter, ownedKeys)))) {
      tally.leftToMerge++;
      continue;
    }
    tally.judged += 1;
    const weighed = weighDenial(dn, counters, scope.unjudgeable);
    if (weighed.early === undefined) tally.unmeasured.push({ durationMs: dn.entries.flatMap((e) => e.possibilities)[0]?.durationMs });
    else tally.underAdmission.push(weighed.early);
    const strictLegal = scope.strict === true && weighed.denied.some(({ counter, k }) => (strictSince.get(strictKey(dn, counter, k)) ?? Infinity) < dn.t.inv);
    if (weighed.legal || strictLegal) {
      for (const { counter, k } of weighed.denied) {
        const key = strictKey(dn, counter, k);
        if (!strictSince.has(key)) strictSince.set(key, dn.t.comp);
      }
      continue;
    }
    if (!weighed.zeroCost && weighed.explanation === undefined) continue; // the answer names no exceeded limit: nothing to weigh
    reportFalseDenial(dn, weighed.explanation, log);
  }
  return tally;
}

/**
 * Whether some exceeded entry could have been over its limit (legal); else whether an entry had
 * cost 0 (always wrong to deny) and the window that came closest. Also how early the denial came:
 * the least share of the limit not yet usable over its exceeded entries and their windows.
 */
function weighDenial(dn: Decision, counters: ReadonlyMap<string, Counter>, unjudgeable: (counter: string) => boolean): Weighed {
  const x = dn.t;
  let zeroCost = false;
  let explanation: Explanation | undefined;
  let early: Weighed['early'];
  let measurable = true;
  let legal = false;
  const denied: Weighed['denied'] = [];
  for (const [i, entry] of dn.entries.entries()) {
    if (!entry.exceeded) continue;
    if (entry.cost === 0) {
      zeroCost = true;
      continue;
    }
    for (const p of entry.possibilities) {
      // Entries of one request that share a counter see the cost of those before them.
      const sameRequest = dn.entries.slice(0, i).reduce((n, e) => (e.possibilities.some((q) => q.counter === p.counter) ? n + e.cost : n), 0);
      const d = p.durationMs;
      if (d === undefined || p.kHi - p.kLo > MAX_WINDOW_SPREAD || unjudgeable(p.counter)) {
        legal = true;
        measurable = false;
        continue;
      }
      const counter = counters.get(p.counter);
      for (let k = p.kLo; k <= p.kHi; k++) {
        denied.push({ counter: p.counter, k });
        const used = usedAtMost(counter, k, d, x, sameRequest);
        const share = p.limit > 0 ? Math.max(0, (p.limit - used - entry.cost) / p.limit) : 0;
        if (early === undefined || share < early.share) early = { durationMs: d, share };
        if (used + entry.cost > p.limit) legal = true;
        else if (explanation === undefined || used > explanation.used)
          explanation = { used, limit: p.limit, cost: entry.cost, p, k, bucket: counter?.buckets.get(k) };
      }
    }
  }
  return { legal, zeroCost, explanation, early: measurable ? early : undefined, denied };
}

/**
 * The most the service could have counted in window k of `d` ms when it decided X: the possible
 * cost in k invoked before X completed, plus the previous window's weight at X's earliest instant.
 */
function usedAtMost(counter: Counter | undefined, k: number, d: number, x: Decision['t'], sameRequest: number): number {
  const bucket = counter?.buckets.get(k);
  let current = (bucket?.possibleInvLE(x.comp) ?? 0) + sameRequest;
  let previous = counter?.buckets.get(k - 1)?.possibleTotal ?? 0;
  for (const w of counter?.wide ?? []) {
    if (w.kLo <= k && k <= w.kHi && w.inv <= x.comp) current += w.cost;
    if (w.kLo <= k - 1 && k - 1 <= w.kHi) previous += w.cost;
  }
  const earliest = Math.max(x.sInv, k * d);
  const weight = Math.floor((previous * ((k + 1) * d - earliest)) / d);
  return current + weight;
}

function reportFalseDenial(dn: Decision, e: Explanation | undefined, log: ViolationLog): void {
  const x = dn.t;
  const subject = e?.p.subject ?? dn.entries[0]?.possibilities[0]?.subject ?? `#${dn.event.seq}`;
  log.add('ratelimit.no-false-denial', subject, x.comp, () => ({
    message:
      e === undefined
        ? `#${dn.event.seq} was denied for a limit checked with cost 0, which never fails.`
        : `#${dn.event.seq} was denied (cost ${e.cost}) although at most ${e.used} of the limit ${e.limit} could have been used in ${windowText(e.p, e.k)}: ${e.used} + ${e.cost} ≤ ${e.limit}.`,
    witness: witness(
      [e?.p.source],
      [dn.event],
      (e?.bucket?.possible ?? [])
        .filter((i) => i.inv <= x.comp)
        .slice(-4)
        .map((i) => i.event),
    ),
  }));
}
