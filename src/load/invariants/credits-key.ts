/**
 * One key's credit checks (credits.ts's block comment says what each judges): every answer
 * against the bounds of the balance after its candidate sets, the credits VALID answers of one
 * period consumed, disjoint, and each period's VALID cost within what it had.
 */
import { iso } from '../../engine/iso.js';
import type { InvariantId } from './types.js';
import type { Bounds, KeyCreditJudge } from './credits-bounds.js';
import { INF, type KeyModel, type Read, type SetEvent, surelyAfter } from './credits-sets.js';
import type { Amount } from './credits-sums.js';
import { type ViolationLog, witness } from './violation-log.js';

export type CreditCounts = Record<'credits.no-over-spend' | 'credits.no-under-serve' | 'credits.consistent' | 'credits.refill', number>;

/** What the key's checks add to the history's totals. */
export interface CreditTally {
  verificationsChecked: number;
  skippedAmbiguous: number;
  /**
   * Per refill judged (an answer whose every candidate is a refill): how late, in service ms after
   * its last boundary, an answer still saw the balance before it (0: none did). For lag.refill.
   */
  refillLag: Map<SetEvent, number>;
  /** Per USAGE_EXCEEDED judged: the credits surely left beyond what a refusal allows (cost − 1), 0 when none. For credits.under-serve. */
  underServe: number[];
}

/** VALID answers of one period with a reported balance, for the disjointness check. */
type PeriodGroups = Map<SetEvent, Array<{ read: Read; reported: number }>>;

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

/** Checks one key's answers, then its periods; violations go to `log`, counts to `counts` and `tally`. */
export function checkKeyCredits(key: KeyModel, check: KeyCreditJudge, cap: number, log: ViolationLog, counts: CreditCounts, tally: CreditTally): void {
  const groups: PeriodGroups = new Map();
  const reads = [...key.reads].sort((a, b) => a.t.comp - b.t.comp || a.event.seq - b.event.seq);
  for (const read of reads) {
    const candidates = check.candidates(read.t, cap);
    if (candidates === undefined) {
      tally.skippedAmbiguous++;
      continue;
    }
    if (candidates.length === 0) continue; // before the key existed: nothing to compare with
    if (read.kind === 'verify') tally.verificationsChecked++;
    new ReadCheck(read, candidates, check, key.keyId, log, tally).run(counts, groups);
  }
  checkConsumedDisjoint(groups, key.keyId, log);
  checkPeriodBudgets(key, check, log, counts);
}

/** One answer against the bounds that hold after its candidate sets. */
class ReadCheck {
  readonly #read: Read;
  readonly #candidates: readonly SetEvent[];
  readonly #check: KeyCreditJudge;
  readonly #subject: string;
  readonly #log: ViolationLog;
  readonly #what: string;
  readonly #allRefills: boolean;
  readonly #refillLag: Map<SetEvent, number>;
  readonly #underServe: number[];

  constructor(read: Read, candidates: readonly SetEvent[], check: KeyCreditJudge, subject: string, log: ViolationLog, tally: CreditTally) {
    this.#read = read;
    this.#refillLag = tally.refillLag;
    this.#underServe = tally.underServe;
    this.#candidates = candidates;
    this.#check = check;
    this.#subject = subject;
    this.#log = log;
    this.#what = read.kind === 'getKey' ? `getKey #${read.event.seq}` : `${read.code ?? 'answer'} #${read.event.seq} (cost ${read.cost})`;
    this.#allRefills = candidates.every((s) => s.kind === 'refill');
  }

  run(counts: CreditCounts, groups: PeriodGroups): void {
    const read = this.#read;
    const valid = read.code === 'VALID';
    const c = read.cost;
    const own = valid ? c : 0;
    const b = this.#check.bounds(this.#candidates, read.t, own);
    if (read.kind === 'verify') counts[valid ? 'credits.no-over-spend' : 'credits.no-under-serve'] += 1;
    if (this.#allRefills) {
      counts['credits.refill'] += 1;
      for (const c of this.#candidates) if (!this.#refillLag.has(c)) this.#refillLag.set(c, 0);
    }
    this.#checkGrantAndRefusal(b, valid);
    const r = read.reported;
    if (r === undefined) return;
    counts['credits.consistent'] += 1;
    this.#checkReported(b, valid, r);
    // Within one period the balance only goes down: collect for the disjointness check.
    if (valid && c > 0 && this.#candidates.length === 1) {
      const s = this.#candidates[0] as SetEvent;
      if (surelyAfter(read.t, s) && this.#check.boundsFor(s, read.t, own).upPossible === 0) {
        let group = groups.get(s);
        if (group === undefined) groups.set(s, (group = []));
        group.push({ read, reported: r });
      }
    }
  }

  /** (1) no over-spend: a VALID needs the credits; (2) no under-serve: a refusal needs them lacking. */
  #checkGrantAndRefusal(b: Bounds, valid: boolean): void {
    const read = this.#read;
    const c = read.cost;
    const x = read.t;
    if (valid && b.hi < c) {
      this.#log.add('credits.no-over-spend', this.#subject, x.comp, () => ({
        message: `${this.#what} was granted although at most ${fmt(Math.max(0, b.hi))} credits could be left for it ${this.#candidateText(b.hiSet)} and the ${this.#check.sureSpendsBetween(b.hiSet, x).length} VALID answers surely in between.`,
        witness: this.#sureWitness(b.hiSet),
      }));
    }
    if (read.code === 'USAGE_EXCEEDED' && Number.isFinite(b.lo)) this.#underServe.push(Math.max(0, b.lo - (c - 1)));
    if (read.code === 'USAGE_EXCEEDED' && b.lo >= c) {
      const allRefills = this.#allRefills;
      if (allRefills) this.#sawBeforeRefill();
      const invariant: InvariantId = allRefills ? 'credits.refill' : 'credits.no-under-serve';
      this.#log.add(invariant, this.#subject, x.comp, () => ({
        message: `${this.#what} was refused for credits although at least ${fmt(b.lo)} credits were surely left ${this.#candidateText(b.loSet)}${topUpText(this.#check.sureTopUpsBetween(b.loSet, x))}${allRefills ? ': the refill was not applied at its boundary' : ''} (${this.#check.possibleSpendsBetween(b.loSet, x, read.event).length} operations could have spent in between).`,
        witness: this.#possibleWitness(b.loSet),
      }));
    }
  }

  /** (3) consistent credits: the reported balance `r` lies in the bounds (VALID: less its cost). */
  #checkReported(b: Bounds, valid: boolean, r: number): void {
    const read = this.#read;
    const c = read.cost;
    const at = read.t.comp;
    const allRefills = this.#allRefills;
    const low = valid ? b.lo - c : b.lo;
    const high = valid ? b.hi - c : b.hi;
    const invariant: InvariantId = allRefills ? 'credits.refill' : 'credits.consistent';
    if (allRefills && (r < low || r > high)) this.#sawBeforeRefill();
    if (r < 0 || r < low) {
      this.#log.add(invariant, this.#subject, at, () => ({
        message: `${this.#what} reports ${fmt(r)} credits, but ${this.#candidateText(b.loSet)} at least ${fmt(Math.max(0, low))} must have been left${allRefills ? ': the refill was not applied at its boundary' : ''}.`,
        witness: this.#possibleWitness(b.loSet),
      }));
    } else if (r > high) {
      const bound = high >= 0 ? `at most ${fmt(high)} could be left` : `at most ${fmt(Math.max(0, b.hi))} were left before it, less than its cost`;
      this.#log.add(invariant, this.#subject, at, () => ({
        message: `${this.#what} reports ${fmt(r)} credits, but ${this.#candidateText(b.hiSet)} ${bound}${allRefills ? ': a refill replaces the balance, it does not add to it' : ' (a lost decrement?)'}.`,
        witness: this.#sureWitness(b.hiSet),
      }));
    } else if (read.code === 'USAGE_EXCEEDED' && r >= c) {
      this.#log.add('credits.consistent', this.#subject, at, () => ({
        message: `${this.#what} was refused for credits but reports a balance of ${fmt(r)}, enough for its cost.`,
        witness: [read.event],
      }));
    }
  }

  /** This answer still saw the balance before its refills: each was late by at least its service instant less their last boundary. */
  #sawBeforeRefill(): void {
    for (const c of this.#candidates) {
      const late = Math.max(0, this.#read.t.sInv - c.lastBoundaryMs);
      if (Number.isFinite(late)) this.#refillLag.set(c, Math.max(this.#refillLag.get(c) ?? 0, late));
    }
  }

  #candidateText(s: SetEvent): string {
    const n = this.#candidates.length;
    return n === 1 ? `after ${s.label}` : `after ${s.label} (or another of ${n} concurrent changes)`;
  }

  /** The decisive set, the answer, what happened in between, then the other candidate sets. */
  #sureWitness(s: SetEvent) {
    const others = this.#candidates.map((c) => c.event);
    return witness([s.event], this.#check.sureSpendsBetween(s, this.#read.t).slice(0, 3), [this.#read.event], others);
  }

  /** A lower bound rests on the set and the top-ups surely after it: they come before the spends. */
  #possibleWitness(s: SetEvent) {
    const x = this.#read.t;
    const others = this.#candidates.map((c) => c.event);
    return witness(
      [s.event],
      [this.#read.event],
      this.#check
        .sureTopUpsBetween(s, x)
        .slice(-3)
        .map((a) => a.event),
      this.#check.possibleSpendsBetween(s, x, this.#read.event).slice(0, 3),
      others,
    );
  }
}

/** (3) the credits consumed by VALID answers of one period, (credits, credits + cost], are disjoint. */
function checkConsumedDisjoint(groups: PeriodGroups, subject: string, log: ViolationLog): void {
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
}

/** (1) the VALID cost surely inside one period never exceeds what the period had. */
function checkPeriodBudgets(key: KeyModel, check: KeyCreditJudge, log: ViolationLog, counts: CreditCounts): void {
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
    log.add('credits.no-over-spend', key.keyId, inside[inside.length - 1]?.comp ?? s.hi, () => ({
      message: `${inside.length} VALID answers worth ${inside.reduce((n, a) => n + a.amount, 0)} credits all came after ${s.label} and before any other credit change, but the budget was ${fmt(budget)}.`,
      witness: witness(
        [s.event],
        inside.slice(0, 2).map((a) => a.event),
        inside.slice(-3).map((a) => a.event),
      ),
    }));
  }
}
