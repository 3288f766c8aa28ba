/**
 * Credits under a promise set with regional counters (docs/consistency.md#credits): each region
 * spends from its own counter, created from the database balance and living `creditTtlMs`
 * (traffic does not extend it), dropped earlier only by an updateCredits made in that region;
 * debits reach the database up to `creditReplayMs` later. Within its life a counter is exact and
 * never negative, so what one region grants from one counter never exceeds the database balance
 * it was created from. That is the bound judged here, per counter (credits-periods.ts):
 *
 * - when the history names the region of every answer of the key, each region's periods are cut
 *   as the region cuts them, and a period's VALID cost may not exceed an upper bound of the
 *   database balance when it started (DatabaseBound): the regions' counters may be created at
 *   different instants, and straddle each other's periods, without any region going beyond its own;
 * - otherwise (the conservative choice): periods of `creditTtlMs` are cut over all answers, and a
 *   period may grant what `regions` counters alive at its start (created up to `creditTtlMs`
 *   before) and `regions` counters created in it could hold, one more per updateCredits.
 *
 * A reported balance lies between 0 and what its counter could hold (credits.consistent). The
 * over-spend measure (credits-over-spend.ts) is the key's figure; this is the verdict.
 */
import { type HistoryEvent, type TimeBracket, DEFAULT_WALL_SKEW_MS, effectUnknown, timeBracket } from '../history/index.js';
import type { InvariantOptions, Violation } from './types.js';
import { collect } from './credits-collect.js';
import { type KeyModel, type Read, type SetEvent, INF, ServiceToWall, refillSets } from './credits-sets.js';
import { type CounterPeriod, DatabaseBound, counterAnswers, cutPeriods } from './credits-periods.js';
import { type OverSpendSample, overSpendSamples } from './credits-over-spend.js';
import { ViolationLog, witness } from './violation-log.js';
import { ownKeys } from './segment-scope.js';

/** The figures of the counter promise. */
export interface CounterFigures {
  ttlMs: number;
  replayMs: number;
  /** Regions the conservative bound counts (the history's, else the set's). */
  regions: number;
}

/** One key's counters judged: violations go to `log`; returns how many periods were judged and left out. */
function checkKeyCounters(
  key: KeyModel,
  sets: readonly SetEvent[],
  figures: CounterFigures,
  spanOf: (e: HistoryEvent) => TimeBracket,
  refillLagMs: number,
  log: ViolationLog,
) {
  const db = new DatabaseBound(sets, key.sureDown, key.possibleUp, spanOf, figures.replayMs, refillLagMs);
  const answers = counterAnswers(key.reads);
  // Everything that may have run in any region without an answer: periods after it are not placed.
  let looseFrom = INF;
  for (const a of key.possibleDown) if (effectUnknown(a.event)) looseFrom = Math.min(looseFrom, spanOf(a.event).sInv);
  for (const a of key.possibleUp) if (effectUnknown(a.event)) looseFrom = Math.min(looseFrom, spanOf(a.event).sInv);
  for (const s of key.sets) if (s.event.op === 'keys.updateCredits' && effectUnknown(s.event)) looseFrom = Math.min(looseFrom, spanOf(s.event).sInv);
  const drops = updateCreditsOf(key, spanOf);
  // Regions are followed only when every answer and every updateCredits names its own.
  const named = answers.length > 0 && answers.every((r) => r.event.region !== undefined) && !drops.has('');
  const tally = { judged: 0, loose: 0 };
  const periods = named ? byRegion(answers, drops, figures.ttlMs, looseFrom) : cutPeriods('', answers, [], figures.ttlMs, looseFrom);
  for (const p of periods) {
    if (p.loose) {
      tally.loose++;
      continue;
    }
    const bound = named ? db.at(p.start.t.sInv, p.start.t.sComp) : conservativeBound(p, answers, drops, db, figures);
    if (bound === INF) continue;
    tally.judged++;
    checkPeriod(key.keyId, p, bound, named, log);
  }
  for (const r of key.reads) {
    if (r.kind !== 'getKey' || r.reported === undefined || r.reported === INF || r.t.sComp > looseFrom) continue;
    const bound = db.at(r.t.sInv, r.t.sComp);
    if (r.reported >= 0 && r.reported <= bound) continue;
    log.add('credits.consistent', key.keyId, r.t.comp, () => ({
      message: `getKey #${r.event.seq} reports ${r.reported} credits, but the database held between 0 and ${bound} then (the balance set, less the debits surely replayed, plus the top-ups).`,
      witness: [r.event],
    }));
  }
  return tally;
}

/** The key's updateCredits answered in each region: each drops that region's counter. */
function updateCreditsOf(key: KeyModel, spanOf: (e: HistoryEvent) => TimeBracket): Map<string, TimeBracket[]> {
  const events = new Set<HistoryEvent>();
  for (const s of key.sets) if (s.event.op === 'keys.updateCredits') events.add(s.event);
  for (const a of [...key.possibleUp, ...key.possibleDown]) if (a.event.op === 'keys.updateCredits') events.add(a.event);
  const drops = new Map<string, TimeBracket[]>();
  for (const e of events) {
    if (effectUnknown(e)) continue;
    const region = e.region ?? '';
    const list = drops.get(region);
    if (list === undefined) drops.set(region, [spanOf(e)]);
    else list.push(spanOf(e));
  }
  return drops;
}

function byRegion(answers: readonly Read[], drops: ReadonlyMap<string, TimeBracket[]>, ttlMs: number, looseFrom: number): CounterPeriod[] {
  const regions = new Map<string, Read[]>();
  for (const r of answers) {
    const region = r.event.region ?? '';
    const list = regions.get(region);
    if (list === undefined) regions.set(region, [r]);
    else list.push(r);
  }
  return [...regions].flatMap(([region, reads]) => cutPeriods(region, reads, drops.get(region) ?? [], ttlMs, looseFrom));
}

/**
 * Without regions: what the counters that may spend in the period could hold. Counters alive at
 * its start were created up to ttlMs before it (at most `regions`, one per answer that may have
 * created one); at most one per region is created in it, one more per updateCredits near it.
 */
function conservativeBound(
  p: CounterPeriod,
  answers: readonly Read[],
  drops: ReadonlyMap<string, TimeBracket[]>,
  db: DatabaseBound,
  figures: CounterFigures,
): number {
  const { ttlMs, regions } = figures;
  const start = p.start.t.sInv;
  const end = p.start.t.sComp + ttlMs;
  const before = answers.filter((r) => r.t.sInv < start && r.t.sComp > start - ttlMs).length;
  const updates = [...drops.values()].flat().filter((d) => d.sInv < end && d.sComp > start - ttlMs).length;
  const old = Math.min(regions, before);
  const created = Math.min(regions, p.answers.length);
  const parts = [old === 0 ? 0 : old * db.at(start - ttlMs, start), created * db.at(start, end), updates === 0 ? 0 : updates * db.at(start - ttlMs, end)];
  return parts.some((x) => x === INF) ? INF : parts.reduce((n, x) => n + x, 0);
}

/** A period's VALID cost within its bound, and each reported balance within what its counter could hold. */
function checkPeriod(keyId: string, p: CounterPeriod, bound: number, named: boolean, log: ViolationLog): void {
  const grants = p.answers.filter((r) => r.code === 'VALID');
  const spent = grants.reduce((n, r) => n + r.cost, 0);
  const where = named ? `region ${p.region}'s counter` : 'the regional counters';
  const from = named ? 'the database balance it was created from' : 'what the counters that may have served them could hold';
  if (spent > bound) {
    const last = grants[grants.length - 1] as Read;
    log.add('credits.no-over-spend', keyId, last.t.comp, () => ({
      message: `${grants.length} VALID answers worth ${spent} credits came from ${where} in the period starting at #${p.start.event.seq}, beyond ${from}: at most ${bound} credits.`,
      witness: witness(
        [p.start.event],
        grants.slice(0, 2).map((r) => r.event),
        grants.slice(-3).map((r) => r.event),
      ),
    }));
  }
  for (const r of p.answers) {
    if (r.reported === undefined || r.reported === INF) continue;
    const most = bound - (r.code === 'VALID' ? r.cost : 0);
    if (r.reported >= 0 && r.reported <= most) continue;
    log.add('credits.consistent', keyId, r.t.comp, () => ({
      message: `${r.code ?? 'answer'} #${r.event.seq} reports ${r.reported} credits, but ${where} in the period starting at #${p.start.event.seq} holds between 0 and ${Math.max(0, most)} (${from}).`,
      witness: witness([p.start.event], [r.event]),
    }));
  }
}

/**
 * Every key's counters judged against the counter promise: the violations, the over-spend
 * samples (credits-over-spend.ts) and how many periods were judged and could not be placed.
 */
export function judgeCreditCounters(
  history: readonly HistoryEvent[],
  options: InvariantOptions,
  figures: CounterFigures,
): { violations: Violation[]; samples: OverSpendSample[]; periods: { judged: number; loose: number } } {
  const wallSkewMs = options.wallSkewMs ?? DEFAULT_WALL_SKEW_MS;
  const collected = collect(history, wallSkewMs);
  const ownedKeys = ownKeys(history, options.segment?.sharedKeyIds, options.segment !== undefined);
  const map = new ServiceToWall(collected.brackets);
  const log = new ViolationLog();
  const brackets = new Map<HistoryEvent, TimeBracket>();
  const spanOf = (e: HistoryEvent): TimeBracket => {
    let t = brackets.get(e);
    if (t === undefined) brackets.set(e, (t = timeBracket(e, wallSkewMs)));
    return t;
  };
  const samples: OverSpendSample[] = [];
  const periods = { judged: 0, loose: 0 };
  const refillLagMs = options.refillLagMs ?? 0;
  for (const key of collected.keys.values()) {
    if (key.sets.length === 0 || (ownedKeys !== undefined && !ownedKeys.has(key.keyId))) continue;
    const sets = [...key.sets, ...refillSets(key, map, options.refill ?? 'replace', refillLagMs)];
    samples.push(...overSpendSamples(key, sets, figures.ttlMs, figures.regions, spanOf));
    if (figures.ttlMs <= 0) continue;
    const tally = checkKeyCounters(key, sets, figures, spanOf, refillLagMs, log);
    periods.judged += tally.judged;
    periods.loose += tally.loose;
  }
  return { violations: log.violations(), samples, periods };
}
