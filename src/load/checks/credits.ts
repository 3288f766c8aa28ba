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
import { MS_PER_DAY, civilFromDays, monthlyRefillInstant, nextRefillBoundary } from '../../engine/index.js';
import { type HistoryEvent, type HistoryRefill, type TimeBracket, DEFAULT_WALL_SKEW_MS, effectUnknown, okOutcome, timeBracket } from '../history.js';
import type { CheckOptions, CheckerResult, InvariantId, Violation } from './types.js';
import { countLE, countLT } from './sorted.js';
import { ViolationLog, witness } from './violation-log.js';

const INF = Number.POSITIVE_INFINITY;
const DEFAULT_MAX_CANDIDATES = 16;

/** An amount that changes the balance at an unknown point of [inv, comp]. */
interface Amount {
  inv: number;
  comp: number;
  amount: number;
  event: HistoryEvent;
}

/** Sums of amounts over invoke-time and complete-time prefixes. */
class TimedSums {
  readonly items: Amount[];
  readonly #invs: Float64Array;
  readonly #invCum: Float64Array;
  readonly #comps: Float64Array;
  readonly #compCum: Float64Array;

  constructor(items: Amount[]) {
    this.items = items;
    const byInv = [...items].sort((a, b) => a.inv - b.inv);
    const byComp = [...items].sort((a, b) => a.comp - b.comp);
    this.#invs = Float64Array.from(byInv, (a) => a.inv);
    this.#comps = Float64Array.from(byComp, (a) => a.comp);
    this.#invCum = new Float64Array(items.length + 1);
    this.#compCum = new Float64Array(items.length + 1);
    for (let i = 0; i < items.length; i++) {
      this.#invCum[i + 1] = (this.#invCum[i] as number) + (byInv[i] as Amount).amount;
      this.#compCum[i + 1] = (this.#compCum[i] as number) + (byComp[i] as Amount).amount;
    }
  }

  invLT(t: number): number {
    return this.#invCum[countLT(this.#invs, t)] as number;
  }
  invLE(t: number): number {
    return this.#invCum[countLE(this.#invs, t)] as number;
  }
  compLT(t: number): number {
    return this.#compCum[countLT(this.#comps, t)] as number;
  }
  compLE(t: number): number {
    return this.#compCum[countLE(this.#comps, t)] as number;
  }
}

// ── sets (the starts of balance periods) ──────────────────────────────────────────────────

/**
 * A set of the balance, placed on the wall clock. An operation Y is surely before it when
 * Y.comp < lo (≤ when loIncl), surely after it when Y.inv > hi (≥ when hiIncl). Refills are
 * inclusive: their wall bounds are times of other operations known to be on either side.
 */
interface SetEvent {
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

interface ConfigEvent {
  t: TimeBracket;
  event: HistoryEvent;
  refill: HistoryRefill | null;
}

/** An answer whose reported balance is checked against the bounds. */
interface Read {
  t: TimeBracket;
  event: HistoryEvent;
  kind: 'verify' | 'getKey';
  code: string | undefined;
  cost: number;
  /** The reported balance; Infinity = unlimited (getKey); undefined = not reported. */
  reported: number | undefined;
}

interface KeyModel {
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

function newKey(keyId: string): KeyModel {
  return { keyId, sets: [], configs: [], sureDown: [], possibleDown: [], sureUp: [], possibleUp: [], reads: [], points: [] };
}

function iso(ms: number): string {
  if (!Number.isFinite(ms)) return String(ms);
  const date = new Date(ms);
  return Number.isNaN(date.getTime()) ? String(ms) : date.toISOString();
}

function shownValue(vLo: number, vHi: number): string {
  if (vLo === INF) return 'unlimited';
  if (vLo === vHi) return `${vLo} credits`;
  if (vHi === INF) return vLo === 0 ? 'an unknown balance' : `at least ${vLo} credits`;
  return `${vLo}..${vHi} credits`;
}

function opSet(event: HistoryEvent, t: TimeBracket, vLo: number, vHi: number, what: string): SetEvent {
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

function possiblyBefore(s: SetEvent, x: { comp: number }): boolean {
  return !(x.comp < s.lo || (s.loIncl && x.comp === s.lo));
}

function surelyAfter(x: { inv: number }, s: SetEvent): boolean {
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
class ServiceToWall {
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
function refillSets(key: KeyModel, map: ServiceToWall, mode: 'replace' | 'production'): SetEvent[] {
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
      hi: map.after(lastBoundary),
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

// ── collecting the history ────────────────────────────────────────────────────────────────

interface Collected {
  keys: Map<string, KeyModel>;
  brackets: TimeBracket[];
  verificationsWithoutKeyId: number;
  createsWithoutKeyId: number;
}

function collect(events: Iterable<HistoryEvent>, wallSkewMs: number): Collected {
  const keys = new Map<string, KeyModel>();
  const brackets: TimeBracket[] = [];
  let verificationsWithoutKeyId = 0;
  let createsWithoutKeyId = 0;
  const keyOf = (keyId: string): KeyModel => {
    let key = keys.get(keyId);
    if (key === undefined) {
      key = newKey(keyId);
      keys.set(keyId, key);
    }
    return key;
  };
  const touch = (key: KeyModel, t: TimeBracket) => {
    key.points.push(t.sInv);
    if (Number.isFinite(t.sComp)) key.points.push(t.sComp);
  };

  for (const event of events) {
    const t = timeBracket(event, wallSkewMs);
    brackets.push(t);
    const ok = okOutcome(event);
    const unknown = effectUnknown(event);
    const effective = ok !== undefined || unknown;
    const req = event.request;
    switch (event.op) {
      case 'keys.createKey': {
        if (ok === undefined) {
          if (unknown) createsWithoutKeyId++;
          break;
        }
        if (ok.keyId === undefined) {
          createsWithoutKeyId++;
          break;
        }
        const key = keyOf(ok.keyId);
        touch(key, t);
        const remaining = req.credits?.remaining;
        const limited = typeof remaining === 'number';
        key.sets.push(limited ? opSet(event, t, remaining, remaining, 'createKey') : opSet(event, t, INF, INF, 'createKey'));
        key.configs.push({ t, event, refill: limited ? (req.credits?.refill ?? null) : null });
        break;
      }
      case 'keys.updateKey': {
        if (!effective || req.keyId === undefined || req.credits === undefined) break;
        const key = keyOf(req.keyId);
        touch(key, t);
        const credits = req.credits;
        if (credits === null || credits.remaining === null) {
          key.sets.push(opSet(event, t, INF, INF, 'updateKey'));
          key.configs.push({ t, event, refill: null });
          break;
        }
        if (typeof credits.remaining === 'number') key.sets.push(opSet(event, t, credits.remaining, credits.remaining, 'updateKey'));
        if (credits.refill !== undefined) key.configs.push({ t, event, refill: credits.refill });
        break;
      }
      case 'keys.updateCredits': {
        if (!effective || req.keyId === undefined || req.operation === undefined) break;
        const key = keyOf(req.keyId);
        touch(key, t);
        if (req.operation === 'set') {
          if (req.value === null || req.value === undefined) {
            key.sets.push(opSet(event, t, INF, INF, 'updateCredits set'));
            key.configs.push({ t, event, refill: null });
          } else {
            key.sets.push(opSet(event, t, req.value, req.value, 'updateCredits set'));
          }
        } else if (typeof req.value === 'number' && req.value > 0) {
          const amount: Amount = { inv: t.inv, comp: t.comp, amount: req.value, event };
          if (req.operation === 'increment') {
            key.possibleUp.push(amount);
            if (!unknown) key.sureUp.push(amount);
          } else {
            // A decrement stops at 0, so it takes away at most its value: a possible spend only.
            key.possibleDown.push(amount);
          }
        }
        break;
      }
      case 'keys.verifyKey': {
        const keyId = req.keyId ?? ok?.keyId;
        if (keyId === undefined) {
          if (effective) verificationsWithoutKeyId++;
          break;
        }
        if (!effective) break;
        const key = keyOf(keyId);
        touch(key, t);
        const cost = req.cost ?? 1;
        if (unknown) {
          if (cost > 0) key.possibleDown.push({ inv: t.inv, comp: t.comp, amount: cost, event });
          break;
        }
        const code = ok?.code;
        if (code === 'VALID' && cost > 0) {
          const amount: Amount = { inv: t.inv, comp: t.comp, amount: cost, event };
          key.sureDown.push(amount);
          key.possibleDown.push(amount);
        }
        if (code === undefined || code === 'NOT_FOUND') break;
        if (code === 'VALID' || code === 'USAGE_EXCEEDED' || ok?.credits !== undefined) {
          key.reads.push({ t, event, kind: 'verify', code, cost, reported: ok?.credits });
        }
        break;
      }
      case 'keys.getKey': {
        if (ok === undefined || req.keyId === undefined || ok.remaining === undefined) break;
        const key = keyOf(req.keyId);
        touch(key, t);
        key.reads.push({ t, event, kind: 'getKey', code: undefined, cost: 0, reported: ok.remaining === null ? INF : ok.remaining });
        break;
      }
      default:
        break;
    }
  }
  return { keys, brackets, verificationsWithoutKeyId, createsWithoutKeyId };
}

// ── violations ────────────────────────────────────────────────────────────────────────────


function fmt(n: number): string {
  return n === INF ? '∞' : String(n);
}

// ── the checker ───────────────────────────────────────────────────────────────────────────

interface Bounds {
  lo: number;
  hi: number;
  loSet: SetEvent;
  hiSet: SetEvent;
}

/** One key's sets and sums, with the queries of the algorithm. */
class KeyCheck {
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
    const downPossible = KeyCheck.possiblyBetween(this.possibleDown, s, x) - ownSpend;
    const downSure = KeyCheck.surelyBetween(this.sureDown, s, x);
    const upPossible = KeyCheck.possiblyBetween(this.possibleUp, s, x);
    const upSure = KeyCheck.surelyBetween(this.sureUp, s, x);
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

  /** The spends possibly between S and X, for witnesses. */
  possibleSpendsBetween(s: SetEvent, x: TimeBracket, self: HistoryEvent): HistoryEvent[] {
    return this.key.possibleDown
      .filter((a) => a.event !== self && a.inv <= x.comp && possiblyBefore(s, a))
      .sort((a, b) => b.inv - a.inv)
      .map((a) => a.event);
  }
}

/**
 * Checks the usage-credit invariants of a history (see the block comment at the top). Events may
 * come in any order; they are all held in memory.
 */
export function checkCredits(events: Iterable<HistoryEvent>, options: CheckOptions = {}): CheckerResult {
  const wallSkewMs = options.wallSkewMs ?? DEFAULT_WALL_SKEW_MS;
  const cap = options.maxCandidates ?? DEFAULT_MAX_CANDIDATES;
  const mode = options.refill ?? 'replace';
  const collected = collect(events, wallSkewMs);
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
    keysChecked++;
    const check = new KeyCheck(key, refillSets(key, map, mode));
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
      const possibleWitness = (s: SetEvent) => witness([s.event], [read.event], check.possibleSpendsBetween(s, x, read.event).slice(0, 3), others);
      const candidateText = (s: SetEvent) => (candidates.length === 1 ? `after ${s.label}` : `after ${s.label} (or another of ${candidates.length} concurrent changes)`);

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
          message: `${what} was refused for credits although at least ${fmt(b.lo)} credits were surely left ${candidateText(b.loSet)}${allRefills ? ': the refill was not applied at its boundary' : ''} (${check.possibleSpendsBetween(b.loSet, x, read.event).length} operations could have spent in between).`,
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
      log.add('credits.no-over-spend', subject, (inside[inside.length - 1]?.comp ?? s.hi), () => ({
        message: `${inside.length} VALID answers worth ${inside.reduce((n, a) => n + a.amount, 0)} credits all came after ${s.label} and before any other credit change, but the budget was ${fmt(budget)}.`,
        witness: witness([s.event], inside.slice(0, 2).map((a) => a.event), inside.slice(-3).map((a) => a.event)),
      }));
    }
  }

  const notes: string[] = [];
  if (keysWithoutCreate > 0) notes.push(`${keysWithoutCreate} keys were used without their createKey in the history: their credits were not checked.`);
  if (collected.verificationsWithoutKeyId > 0) notes.push(`${collected.verificationsWithoutKeyId} verifications name no key id: not checked for credits.`);
  if (collected.createsWithoutKeyId > 0) notes.push(`${collected.createsWithoutKeyId} createKey calls have no answer (unknown outcome): the keys they may have made cannot be followed.`);
  if (skippedAmbiguous > 0) notes.push(`${skippedAmbiguous} answers came amid more than ${cap} possible credit changes: not checked.`);
  return {
    violations: log.violations(),
    checked: { keys: keysChecked, verifications: verificationsChecked, rateLimitChecks: 0 },
    counts,
    notes,
  };
}
