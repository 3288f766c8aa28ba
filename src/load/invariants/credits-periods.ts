/**
 * A key's regional counter periods, cut from its answers on the service clock, and what the
 * database could hold when a counter was created (credits-promise.ts judges them).
 *
 * A region creates a key's counter at the first verification that reaches the credits (VALID or
 * USAGE_EXCEEDED) and drops it `ttlMs` later, or at an updateCredits made in that region. So per
 * region the periods are cut exactly as the region does: a period starts at the region's first
 * such answer, and holds its answers surely before the counter's earliest end; an answer surely
 * after its latest end, or after an updateCredits of the region, starts the next. An answer that
 * may fall on either side starts a period that is not judged (`loose`), as is every period that
 * may contain the effect of an operation whose answer never came (it may have run in any region).
 */
import type { TimeBracket } from '../history/index.js';
import { INF, type Read, type SetEvent } from './credits-sets.js';
import { type Amount, TimedSums } from './credits-sums.js';

export interface CounterPeriod {
  /** The region's name ('' for the periods of answers that name none). */
  region: string;
  /** The answer that created the counter, as far as the history shows. */
  start: Read;
  /** Its answers (the start included), in service order. */
  answers: Read[];
  /** Not judged: its start or one of its answers could be in another counter, or an unknown operation may have run in it. */
  loose: boolean;
}

/** A key's answers that touch its regional counters: VALID or USAGE_EXCEEDED verifications. */
export function counterAnswers(reads: readonly Read[]): Read[] {
  return reads.filter((r) => r.kind === 'verify' && (r.code === 'VALID' || r.code === 'USAGE_EXCEEDED'));
}

/** Whether `x` surely came before `y`: answered before it was sent, on the wall or the service clock. */
function surelyBefore(x: TimeBracket, y: TimeBracket): boolean {
  return x.comp < y.inv || x.sComp < y.sInv;
}

/**
 * The periods of one region's counter: `answers` and the region's updateCredits (`drops`), each
 * with its bracket; `looseFrom`: the earliest service instant an operation of unknown outcome
 * may have run.
 */
export function cutPeriods(region: string, answers: readonly Read[], drops: readonly TimeBracket[], ttlMs: number, looseFrom: number): CounterPeriod[] {
  type Item = { t: TimeBracket; read?: Read; drop?: TimeBracket };
  const items: Item[] = [...answers.map((read) => ({ t: read.t, read })), ...drops.map((drop) => ({ t: drop, drop }))];
  // In service order, then in the order they were sent.
  items.sort((a, b) => a.t.sInv - b.t.sInv || a.t.inv - b.t.inv);
  const periods: CounterPeriod[] = [];
  let current: CounterPeriod | undefined;
  let dropped: TimeBracket | undefined;
  for (const item of items) {
    if (item.drop !== undefined) {
      const drop = item.drop;
      // An answer of the period that may come after the drop may be the next counter's.
      if (current?.answers.some((a) => !surelyBefore(a.t, drop)) === true) current.loose = true;
      if (current !== undefined || dropped !== undefined) dropped = drop;
      current = undefined;
      continue;
    }
    const read = item.read as Read;
    const t = read.t;
    if (current !== undefined) {
      const endLo = current.start.t.sInv + ttlMs;
      const endHi = current.start.t.sComp + ttlMs;
      if (t.sComp < endLo) {
        current.answers.push(read);
        continue;
      }
      current = { region, start: read, answers: [read], loose: t.sInv < endHi };
    } else {
      current = { region, start: read, answers: [read], loose: dropped !== undefined && !surelyBefore(dropped, t) };
      dropped = undefined;
    }
    periods.push(current);
  }
  for (const p of periods) if (p.start.t.sComp + ttlMs > looseFrom) p.loose = true;
  return periods;
}

/** A set on the service clock: when it may have taken effect, and the balance it set. */
interface ServiceSet {
  set: SetEvent;
  sLo: number;
  sHi: number;
}

/**
 * An upper bound on the database balance at any instant of [lo, hi] (service ms): for each set
 * that may be the last one before it, its balance less the debits of VALID answers surely after
 * it that surely landed by `lo` (answered `replayMs` before it), never below 0, plus every top-up
 * possibly after it and possibly before `hi`. Decrements and debits not surely landed are not
 * taken off: the bound only rises. INF when a candidate's balance is unknown or unlimited.
 */
export class DatabaseBound {
  readonly #sets: ServiceSet[];
  readonly #grants: TimedSums;
  readonly #ups: TimedSums;
  readonly #replayMs: number;

  /** `spanOf` gives an operation's service bracket; `refillLagMs`: how long after its boundary a refill may take effect. */
  constructor(
    sets: readonly SetEvent[],
    grants: readonly Amount[],
    ups: readonly Amount[],
    spanOf: (a: Amount['event']) => TimeBracket,
    replayMs: number,
    refillLagMs: number,
  ) {
    this.#sets = sets.map((set) => {
      if (set.kind === 'refill') return { set, sLo: set.firstBoundaryMs, sHi: set.lastBoundaryMs + refillLagMs };
      const t = spanOf(set.event);
      return { set, sLo: t.sInv, sHi: t.sComp };
    });
    // The sums run on the service clock: inv and comp are the service bracket here.
    const onService = (a: Amount): Amount => {
      const t = spanOf(a.event);
      return { ...a, inv: t.sInv, comp: t.sComp };
    };
    this.#grants = new TimedSums(grants.map(onService));
    this.#ups = new TimedSums(ups.map(onService));
    this.#replayMs = replayMs;
  }

  at(lo: number, hi: number): number {
    // A set is not the last one when another surely came after it and surely before lo.
    let latestSurelyBefore = Number.NEGATIVE_INFINITY;
    for (const s of this.#sets) if (s.sHi < lo) latestSurelyBefore = Math.max(latestSurelyBefore, s.sLo);
    let most = 0;
    for (const s of this.#sets) {
      if (s.sLo > hi || s.sHi < latestSurelyBefore) continue;
      if (s.set.vHi === INF) return INF;
      // Landed: answered replayMs before lo, less those invoked before the set ended (under-counted: the bound only rises).
      const landed = Math.max(0, this.#grants.compLE(lo - this.#replayMs) - this.#grants.invLE(s.sHi));
      const ups = this.#ups.invLE(hi) - this.#ups.compLT(s.sLo);
      most = Math.max(most, Math.max(0, s.set.vHi - landed) + ups);
    }
    return most;
  }
}
