/**
 * The starts of a key's balance periods ("sets"): operations that set the balance, and refill
 * boundaries placed on the wall clock through the service clock (see the checker's comment in
 * credits.ts). Also the per-key model the collector fills.
 */
import { MS_PER_DAY, civilFromDays, monthlyRefillInstant, nextRefillBoundary } from '../../engine/index.js';
import { iso } from '../../engine/iso.js';
import { type HistoryEvent, type HistoryRefill, type TimeBracket, effectUnknown } from '../history/index.js';
import type { Amount } from './credits-sums.js';
import { countLT } from './sorted.js';

export const INF = Number.POSITIVE_INFINITY;

/**
 * A set of the balance, placed on the wall clock. An operation Y is surely before it when
 * Y.comp < lo (≤ when loIncl), surely after it when Y.inv > hi (≥ when hiIncl). Refills are
 * inclusive: their wall bounds are times of other operations known to be on either side.
 */
export interface SetEvent {
  kind: 'op' | 'refill';
  /** The operation (for a refill: the one that configured it), for witnesses. */
  event: HistoryEvent;
  lo: number;
  loIncl: boolean;
  hi: number;
  hiIncl: boolean;
  /** The balance it sets: [vLo, vHi]; Infinity = unlimited; [0, ∞] = unknown. */
  vLo: number;
  vHi: number;
  /** Refills: the first and last calendar boundary it stands for (NaN for operations). */
  firstBoundaryMs: number;
  lastBoundaryMs: number;
  label: string;
}

export interface ConfigEvent {
  t: TimeBracket;
  event: HistoryEvent;
  refill: HistoryRefill | null;
}

/** An answer whose reported balance is checked against the bounds. */
export interface Read {
  t: TimeBracket;
  event: HistoryEvent;
  kind: 'verify' | 'getKey';
  code: string | undefined;
  cost: number;
  /** The reported balance; Infinity = unlimited (getKey); undefined = not reported. */
  reported: number | undefined;
}

export interface KeyModel {
  keyId: string;
  sets: SetEvent[];
  configs: ConfigEvent[];
  sureDown: Amount[];
  possibleDown: Amount[];
  sureUp: Amount[];
  possibleUp: Amount[];
  reads: Read[];
  /** Service instants (finite) of the key's own operations. */
  points: number[];
}

export function newKey(keyId: string): KeyModel {
  return { keyId, sets: [], configs: [], sureDown: [], possibleDown: [], sureUp: [], possibleUp: [], reads: [], points: [] };
}

export function shownValue(vLo: number, vHi: number): string {
  if (vLo === INF) return 'unlimited';
  if (vLo === vHi) return `${vLo} credits`;
  if (vHi === INF) return vLo === 0 ? 'an unknown balance' : `at least ${vLo} credits`;
  return `${vLo}..${vHi} credits`;
}

export function opSet(event: HistoryEvent, t: TimeBracket, vLo: number, vHi: number, what: string): SetEvent {
  const unknown = effectUnknown(event) ? ' (outcome unknown)' : '';
  return {
    kind: 'op',
    event,
    lo: t.inv,
    loIncl: false,
    hi: t.comp,
    hiIncl: false,
    vLo,
    vHi,
    firstBoundaryMs: Number.NaN,
    lastBoundaryMs: Number.NaN,
    label: `${what} #${event.seq} to ${shownValue(vLo, vHi)}${unknown}`,
  };
}

export function possiblyBefore(s: SetEvent, x: { comp: number }): boolean {
  return !(x.comp < s.lo || (s.loIncl && x.comp === s.lo));
}

export function surelyAfter(x: { inv: number }, s: SetEvent): boolean {
  return x.inv > s.hi || (s.hiIncl && x.inv === s.hi);
}

/** The last calendar boundary at or before `t`. */
function lastBoundaryAtOrBefore(t: number, refill: HistoryRefill): number {
  const days = Math.floor(t / MS_PER_DAY);
  if (refill.interval === 'daily') return days * MS_PER_DAY;
  const refillDay = refill.refillDay ?? 1;
  const { year, month } = civilFromDays(days);
  const thisMonth = monthlyRefillInstant(year, month, refillDay);
  if (thisMonth <= t) return thisMonth;
  return month === 1 ? monthlyRefillInstant(year - 1, 12, refillDay) : monthlyRefillInstant(year, month - 1, refillDay);
}

function sameRefill(a: HistoryRefill | null, b: HistoryRefill | null): boolean {
  if (a === null || b === null) return a === b;
  return a.interval === b.interval && a.amount === b.amount && (a.interval === 'daily' || (a.refillDay ?? 1) === (b.refillDay ?? 1));
}

/**
 * Maps a service instant to wall bounds using every operation of the history: the refill at b
 * happened after every operation whose service bracket ends before b completed, and before every
 * operation whose bracket starts at or after b was invoked.
 */
export class ServiceToWall {
  readonly #sComps: Float64Array;
  readonly #maxCompPrefix: Float64Array;
  readonly #sInvs: Float64Array;
  readonly #minInvSuffix: Float64Array;

  constructor(brackets: readonly TimeBracket[]) {
    const bySComp = [...brackets].sort((a, b) => a.sComp - b.sComp);
    this.#sComps = Float64Array.from(bySComp, (b) => b.sComp);
    this.#maxCompPrefix = new Float64Array(bySComp.length);
    let max = Number.NEGATIVE_INFINITY;
    for (const [i, b] of bySComp.entries()) {
      max = Math.max(max, b.comp);
      this.#maxCompPrefix[i] = max;
    }
    const bySInv = [...brackets].sort((a, b) => a.sInv - b.sInv);
    this.#sInvs = Float64Array.from(bySInv, (b) => b.sInv);
    this.#minInvSuffix = new Float64Array(bySInv.length);
    let min = INF;
    for (let i = bySInv.length - 1; i >= 0; i--) {
      min = Math.min(min, (bySInv[i] as TimeBracket).inv);
      this.#minInvSuffix[i] = min;
    }
  }

  /** Latest wall time known to be before the service instant b. */
  before(b: number): number {
    const n = countLT(this.#sComps, b);
    return n === 0 ? Number.NEGATIVE_INFINITY : (this.#maxCompPrefix[n - 1] as number);
  }

  /** Earliest wall time known to be at or after the service instant b. */
  after(b: number): number {
    const i = countLT(this.#sInvs, b);
    return i >= this.#sInvs.length ? INF : (this.#minInvSuffix[i] as number);
  }
}

/**
 * The refill sets of one key: one per gap between consecutive service instants of its own
 * operations that contains at least one boundary of a configuration possibly in force.
 */
export function refillSets(key: KeyModel, map: ServiceToWall, mode: 'replace' | 'production', lagMs = 0): SetEvent[] {
  if (key.configs.length === 0) return [];
  const points = [...new Set(key.points)].sort((a, b) => a - b);
  const byStart = [...key.configs].sort((a, b) => a.t.sInv - b.t.sInv);
  const byEnd = [...key.configs].sort((a, b) => a.t.sComp - b.t.sComp);
  const active = new Set<ConfigEvent>();
  let last: ConfigEvent[] = [];
  let started = 0;
  let ended = 0;
  const out: SetEvent[] = [];
  for (let i = 0; i + 1 < points.length; i++) {
    const from = points[i] as number;
    const to = points[i + 1] as number;
    while (started < byStart.length && (byStart[started] as ConfigEvent).t.sInv <= from) active.add(byStart[started++] as ConfigEvent);
    while (ended < byEnd.length && (byEnd[ended] as ConfigEvent).t.sComp <= from) {
      const done = byEnd[ended++] as ConfigEvent;
      active.delete(done);
      // Keep the configurations that may have been the last one applied.
      if (last.some((c) => done.t.comp < c.t.inv)) continue;
      last = last.filter((c) => !(c.t.comp < done.t.inv));
      last.push(done);
    }
    const possible = [...last, ...active];
    if (possible.length === 0) continue;
    const ambiguous = active.size > 0 || last.some((c) => !sameRefill(c.refill, (last[0] as ConfigEvent).refill));
    let first = INF;
    let lastBoundary = Number.NEGATIVE_INFINITY;
    let source: ConfigEvent | undefined;
    for (const config of possible) {
      if (config.refill === null) continue;
      const b1 = nextRefillBoundary(from, config.refill.interval, config.refill.refillDay ?? 1);
      if (b1 > to) continue;
      if (b1 < first) {
        first = b1;
        source = config;
      }
      lastBoundary = Math.max(lastBoundary, lastBoundaryAtOrBefore(to, config.refill));
    }
    if (source === undefined || source.refill === null) continue;
    const amount = source.refill.amount;
    const [vLo, vHi] = ambiguous ? [0, INF] : mode === 'replace' ? [amount, amount] : [amount, INF];
    const span = first === lastBoundary ? iso(first) : `${iso(first)} … ${iso(lastBoundary)}`;
    out.push({
      kind: 'refill',
      event: source.event,
      lo: map.before(first),
      loIncl: true,
      // A promised lag: answers up to lagMs after the boundary may still see the balance before it.
      hi: map.after(lastBoundary + lagMs),
      hiIncl: true,
      vLo,
      vHi,
      firstBoundaryMs: first,
      lastBoundaryMs: lastBoundary,
      label: ambiguous
        ? `the refill at ${span} (configuration ambiguous: a concurrent or unknown change)`
        : `the ${source.refill.interval} refill at ${span} to ${amount} credits (configured by #${source.event.seq})`,
    });
  }
  return out;
}
