/**
 * What the rate-limit checker counts: per counter (what the service counts in one window
 * series), per fixed window, the admitted cost that is sure to be there and the cost that may be,
 * sorted by time with prefix sums so that each question is a binary search.
 */
import { iso } from '../../engine/iso.js';
import type { HistoryEvent, TimeBracket } from '../history/index.js';
import { countLE, countLT } from './sorted.js';

export const INF = Number.POSITIVE_INFINITY;
/** A decision possibly in more windows than this is kept in the counter's wide list. */
export const MAX_WINDOW_SPREAD = 3;

export interface Item {
  inv: number;
  comp: number;
  sComp: number;
  cost: number;
  limit: number;
  event: HistoryEvent;
  source: HistoryEvent | undefined;
}

export interface WideItem extends Item {
  kLo: number;
  kHi: number;
}

export class Bucket {
  readonly sure: Item[] = [];
  readonly possible: Item[] = [];
  #sureComps = new Float64Array(0);
  #sureCum = new Float64Array(1);
  /** The sure items again, by their latest possible service time (sComp), with prefix sums and prefix maxima of the limit. */
  #bySComp: Item[] = [];
  #sureSComps = new Float64Array(0);
  #sureSCompCum = new Float64Array(1);
  #sureSCompMaxLimit = new Float64Array(1);
  #possibleInvs = new Float64Array(0);
  #possibleCum = new Float64Array(1);
  sureTotal = 0;
  possibleTotal = 0;
  maxSureLimit = 0;

  finish(): void {
    this.sure.sort((a, b) => a.comp - b.comp);
    this.possible.sort((a, b) => a.inv - b.inv);
    this.#sureComps = Float64Array.from(this.sure, (i) => i.comp);
    this.#sureCum = new Float64Array(this.sure.length + 1);
    for (const [i, item] of this.sure.entries()) {
      this.#sureCum[i + 1] = (this.#sureCum[i] as number) + item.cost;
      this.maxSureLimit = Math.max(this.maxSureLimit, item.limit);
    }
    this.#bySComp = [...this.sure].sort((a, b) => a.sComp - b.sComp);
    this.#sureSComps = Float64Array.from(this.#bySComp, (i) => i.sComp);
    this.#sureSCompCum = new Float64Array(this.#bySComp.length + 1);
    this.#sureSCompMaxLimit = new Float64Array(this.#bySComp.length + 1);
    for (const [i, item] of this.#bySComp.entries()) {
      this.#sureSCompCum[i + 1] = (this.#sureSCompCum[i] as number) + item.cost;
      this.#sureSCompMaxLimit[i + 1] = Math.max(this.#sureSCompMaxLimit[i] as number, item.limit);
    }
    this.#possibleInvs = Float64Array.from(this.possible, (i) => i.inv);
    this.#possibleCum = new Float64Array(this.possible.length + 1);
    for (const [i, item] of this.possible.entries()) this.#possibleCum[i + 1] = (this.#possibleCum[i] as number) + item.cost;
    this.sureTotal = this.#sureCum[this.sure.length] as number;
    this.possibleTotal = this.#possibleCum[this.possible.length] as number;
  }

  /** Sure cost completed before `t`. */
  sureCompLT(t: number): number {
    return this.#sureCum[countLT(this.#sureComps, t)] as number;
  }

  /**
   * The sure items whose latest possible service time is ≤ `t`: how many (the first ones by
   * sComp), their cost and the largest limit among them.
   */
  sureBySCompLE(t: number): { count: number; cost: number; maxLimit: number } {
    const count = countLE(this.#sureSComps, t);
    return { count, cost: this.#sureSCompCum[count] as number, maxLimit: this.#sureSCompMaxLimit[count] as number };
  }

  /** The sure items ordered by their latest possible service time. */
  get sureBySComp(): readonly Item[] {
    return this.#bySComp;
  }

  /** Possible cost invoked at or before `t`. */
  possibleInvLE(t: number): number {
    return this.#possibleCum[countLE(this.#possibleInvs, t)] as number;
  }
}

export class Counter {
  readonly buckets = new Map<number, Bucket>();
  readonly wide: WideItem[] = [];
  constructor(
    readonly subject: string,
    readonly durationMs: number | undefined,
  ) {}

  bucket(k: number): Bucket {
    let b = this.buckets.get(k);
    if (b === undefined) {
      b = new Bucket();
      this.buckets.set(k, b);
    }
    return b;
  }
}

export function windowText(p: { durationMs: number | undefined }, k: number): string {
  if (p.durationMs === undefined) return `the window ending ${iso(k)}`;
  return `the window ${iso(k * p.durationMs)} … ${iso((k + 1) * p.durationMs)}`;
}

/** Window range of a service bracket for one duration, narrowed by the answer's `reset`. */
export function windows(t: TimeBracket, durationMs: number, reset: number | undefined): { kLo: number; kHi: number } {
  const kLo = Math.floor(t.sInv / durationMs);
  const kHi = Number.isFinite(t.sComp) ? Math.floor(t.sComp / durationMs) : INF;
  if (reset !== undefined && Number.isInteger(reset / durationMs)) {
    const k = reset / durationMs - 1;
    if (k >= kLo && k <= kHi) return { kLo: k, kHi: k };
  }
  return { kLo, kHi };
}
