/**
 * One key's bounds on its balance before an answer: the candidate sets that may be the last one
 * before it, and what surely and possibly happened in between (see the checker's comment in
 * credits.ts).
 */
import type { HistoryEvent, TimeBracket } from '../history/index.js';
import { type Amount, TimedSums } from './credits-sums.js';
import { type KeyModel, type SetEvent, INF, possiblyBefore, surelyAfter } from './credits-sets.js';
import { countLE } from './sorted.js';

export interface Bounds {
  lo: number;
  hi: number;
  loSet: SetEvent;
  hiSet: SetEvent;
}

/** One key's sets and sums, with the queries of the algorithm. */
export class KeyCreditJudge {
  readonly key: KeyModel;
  readonly sets: SetEvent[];
  readonly #finite: SetEvent[];
  readonly #finiteLos: Float64Array;
  readonly #finiteMaxHi: Float64Array;
  readonly #infinite: SetEvent[];
  readonly sureDown: TimedSums;
  readonly possibleDown: TimedSums;
  readonly sureUp: TimedSums;
  readonly possibleUp: TimedSums;

  constructor(key: KeyModel, refills: SetEvent[]) {
    this.key = key;
    const byStart = (a: SetEvent, b: SetEvent) => a.lo - b.lo || (a.firstBoundaryMs || 0) - (b.firstBoundaryMs || 0);
    this.sets = [...key.sets, ...refills].sort(byStart);
    this.#finite = this.sets.filter((s) => s.hi !== INF);
    this.#infinite = this.sets.filter((s) => s.hi === INF);
    this.#finiteLos = Float64Array.from(this.#finite, (s) => s.lo);
    this.#finiteMaxHi = new Float64Array(this.#finite.length);
    let max = Number.NEGATIVE_INFINITY;
    for (const [i, s] of this.#finite.entries()) {
      max = Math.max(max, s.hi);
      this.#finiteMaxHi[i] = max;
    }
    this.sureDown = new TimedSums(key.sureDown);
    this.possibleDown = new TimedSums(key.possibleDown);
    this.sureUp = new TimedSums(key.sureUp);
    this.possibleUp = new TimedSums(key.possibleUp);
  }

  /** The sets that may be the last one before X; undefined when there are more than `cap`. */
  candidates(x: TimeBracket, cap: number): SetEvent[] | undefined {
    const out: SetEvent[] = [];
    let maxLo = Number.NEGATIVE_INFINITY;
    let maxLoIncl = false;
    let maxRefillBoundary = Number.NEGATIVE_INFINITY;
    const dominated = (s: SetEvent) =>
      s.hi < maxLo || (s.hi === maxLo && (s.hiIncl || maxLoIncl)) || (s.kind === 'refill' && s.lastBoundaryMs < maxRefillBoundary);
    for (let i = countLE(this.#finiteLos, x.comp) - 1; i >= 0; i--) {
      // Every set from here down ends before a set that surely precedes X: none can be last.
      if ((this.#finiteMaxHi[i] as number) < maxLo) break;
      const s = this.#finite[i] as SetEvent;
      if (!possiblyBefore(s, x)) continue;
      if (!dominated(s)) {
        out.push(s);
        if (out.length > cap) return undefined;
      }
      if (surelyAfter(x, s)) {
        if (s.lo > maxLo) {
          maxLo = s.lo;
          maxLoIncl = s.loIncl;
        } else if (s.lo === maxLo) {
          maxLoIncl ||= s.loIncl;
        }
        if (s.kind === 'refill') maxRefillBoundary = Math.max(maxRefillBoundary, s.firstBoundaryMs);
      }
    }
    for (const s of this.#infinite) {
      if (!possiblyBefore(s, x) || dominated(s)) continue;
      out.push(s);
      if (out.length > cap) return undefined;
    }
    return out;
  }

  /** Σ over `sums` of the amounts possibly between set S and X (X's own amount excluded by the caller). */
  static possiblyBetween(sums: TimedSums, s: SetEvent, x: TimeBracket): number {
    return sums.invLE(x.comp) - (s.loIncl ? sums.compLE(s.lo) : sums.compLT(s.lo));
  }

  /** Σ over `sums` of the amounts surely between set S and X (under-counted, never over). */
  static surelyBetween(sums: TimedSums, s: SetEvent, x: TimeBracket): number {
    return Math.max(0, sums.compLT(x.inv) - (s.hiIncl ? sums.invLT(s.hi) : sums.invLE(s.hi)));
  }

  boundsFor(s: SetEvent, x: TimeBracket, ownSpend: number): { lo: number; hi: number; upPossible: number } {
    const downPossible = KeyCreditJudge.possiblyBetween(this.possibleDown, s, x) - ownSpend;
    const downSure = KeyCreditJudge.surelyBetween(this.sureDown, s, x);
    const upPossible = KeyCreditJudge.possiblyBetween(this.possibleUp, s, x);
    const upSure = KeyCreditJudge.surelyBetween(this.sureUp, s, x);
    return { lo: Math.max(0, s.vLo + upSure - downPossible), hi: s.vHi + upPossible - downSure, upPossible };
  }

  bounds(candidates: readonly SetEvent[], x: TimeBracket, ownSpend: number): Bounds {
    let best: Bounds | undefined;
    for (const s of candidates) {
      const { lo, hi } = this.boundsFor(s, x, ownSpend);
      if (best === undefined) {
        best = { lo, hi, loSet: s, hiSet: s };
        continue;
      }
      if (lo < best.lo) {
        best.lo = lo;
        best.loSet = s;
      }
      if (hi > best.hi) {
        best.hi = hi;
        best.hiSet = s;
      }
    }
    if (best === undefined) throw new Error('bounds() needs at least one candidate');
    return best;
  }

  /** The VALID spends surely between S and X (the latest first), for witnesses. */
  sureSpendsBetween(s: SetEvent, x: TimeBracket): HistoryEvent[] {
    return this.key.sureDown
      .filter((a) => a.comp < x.inv && surelyAfter(a, s))
      .sort((a, b) => b.comp - a.comp)
      .map((a) => a.event);
  }

  /** The top-ups (increments) surely between S and X, the earliest first: what proves a refusal wrong. */
  sureTopUpsBetween(s: SetEvent, x: TimeBracket): Amount[] {
    return this.key.sureUp.filter((a) => a.comp < x.inv && surelyAfter(a, s)).sort((a, b) => a.comp - b.comp);
  }

  /** The spends possibly between S and X, for witnesses. */
  possibleSpendsBetween(s: SetEvent, x: TimeBracket, self: HistoryEvent): HistoryEvent[] {
    return this.key.possibleDown
      .filter((a) => a.event !== self && a.inv <= x.comp && possiblyBefore(s, a))
      .sort((a, b) => b.inv - a.inv)
      .map((a) => a.event);
  }
}
