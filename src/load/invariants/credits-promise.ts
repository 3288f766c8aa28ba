/**
 * Credits under a promise set with regional counters (docs/consistency.md#credits): each region
 * spends from its own counter, created from the database balance and living `creditTtlMs` (traffic
 * does not extend it); debits reach the database later. So within one TTL period a key may grant
 * more than its balance, by at most (regions − 1) × the balance the period started from, and a
 * reported balance is never negative nor above that starting balance (plus top-ups).
 *
 * The bound is derived from the run: per key, after each set of its balance (createKey, a set, a
 * refill), periods start at the first VALID answer and last `creditTtlMs`; the next starts at the
 * first VALID answer after it ends. The database balance at a period's start is the set's value
 * less what the earlier periods granted (never below 0), plus the top-ups in between. Answers that
 * cannot be placed after one set (concurrent with a change of the balance, or after an unknown or
 * unlimited one) are left out, as the exact checker leaves out what it cannot bound.
 */
import { type HistoryEvent, DEFAULT_WALL_SKEW_MS } from '../history/index.js';
import type { InvariantOptions, Violation } from './types.js';
import { collect } from './credits-collect.js';
import { type KeyModel, type SetEvent, INF, ServiceToWall, refillSets } from './credits-sets.js';
import type { Amount } from './credits-sums.js';
import { ViolationLog, witness } from './violation-log.js';
import { ownKeys } from './segment-scope.js';

/** The largest over-spend of any period against its bound, for the verdict's measured size. */
export interface OverSpendMeasure {
  overSpend: number;
  bound: number;
}

/** One key's periods judged against the counter promise; returns the largest over-spend seen (undefined: none). */
export function checkKeyCounters(key: KeyModel, sets: readonly SetEvent[], ttlMs: number, regions: number, log: ViolationLog): OverSpendMeasure | undefined {
  let worst: OverSpendMeasure | undefined;
  const ordered = [...sets].sort((a, b) => a.lo - b.lo);
  for (const [i, s] of ordered.entries()) {
    if (s.vLo !== s.vHi || s.vHi === INF) continue; // unknown or unlimited: nothing to bound
    const end = i + 1 < ordered.length ? (ordered[i + 1] as SetEvent).lo : INF;
    const inside = (a: { inv: number; comp: number }) => a.inv > s.hi && a.comp < end;
    const spends = key.sureDown.filter(inside).sort((a, b) => a.comp - b.comp);
    const ups = key.sureUp.filter(inside);
    const reads = key.reads.filter((r) => inside(r.t) && r.reported !== undefined && r.reported !== INF);
    let db = s.vHi;
    let from = s.hi;
    let next = 0;
    while (next < spends.length) {
      const start = (spends[next] as Amount).inv;
      const stop = start + ttlMs;
      const upsBefore = ups.filter((u) => u.comp > from && u.comp < start).reduce((n, u) => n + u.amount, 0);
      db += upsBefore;
      const upsIn = ups.filter((u) => u.inv >= start && u.inv < stop).reduce((n, u) => n + u.amount, 0);
      const period: Amount[] = [];
      while (next < spends.length && (spends[next] as Amount).inv < stop) period.push(spends[next++] as Amount);
      const spent = period.reduce((n, a) => n + a.amount, 0);
      const allowance = db + upsIn;
      const overSpend = Math.max(0, spent - allowance);
      const bound = (regions - 1) * db;
      if (overSpend > 0 && (worst === undefined || overSpend - worst.bound > worst.overSpend - worst.bound)) worst = { overSpend, bound };
      if (overSpend > bound) {
        log.add('credits.no-over-spend', key.keyId, (period[period.length - 1] as Amount).comp, () => ({
          message:
            `${period.length} VALID answers worth ${spent} credits came within one ${ttlMs / 1000} s counter period after ${s.label}, which started from a balance of ${db}` +
            `${upsIn > 0 ? ` (plus ${upsIn} topped up)` : ''}: an over-spend of ${overSpend} credits, beyond the promised bound (${regions} − 1 regions) × ${db} = ${bound}.`,
          witness: witness(
            [s.event],
            period.slice(0, 2).map((a) => a.event),
            period.slice(-3).map((a) => a.event),
          ),
        }));
      }
      for (const r of reads) {
        if (r.t.inv < start || r.t.inv >= stop) continue;
        const reported = r.reported as number;
        if (reported >= 0 && reported <= allowance) continue;
        log.add('credits.consistent', key.keyId, r.t.comp, () => ({
          message: `${r.code ?? 'getKey'} #${r.event.seq} reports ${reported} credits, but a regional counter of the period starting at #${(period[0] as Amount).event.seq} holds between 0 and ${allowance} (the balance it was created from${upsIn > 0 ? ', with top-ups' : ''}).`,
          witness: witness([s.event], [(period[0] as Amount).event], [r.event]),
        }));
      }
      db = Math.max(0, allowance - spent);
      from = stop;
    }
  }
  return worst;
}

/**
 * Every key's periods judged against the counter promise (`ttlMs`, `regions`): the violations of
 * the promise and the largest over-spend seen against its bound.
 */
export function judgeCreditCounters(
  history: readonly HistoryEvent[],
  options: InvariantOptions,
  ttlMs: number,
  regions: number,
): { violations: Violation[]; worst: OverSpendMeasure | undefined } {
  const collected = collect(history, options.wallSkewMs ?? DEFAULT_WALL_SKEW_MS);
  const ownedKeys = ownKeys(history, options.segment?.sharedKeyIds, options.segment !== undefined);
  const map = new ServiceToWall(collected.brackets);
  const log = new ViolationLog();
  let worst: OverSpendMeasure | undefined;
  for (const key of collected.keys.values()) {
    if (key.sets.length === 0 || (ownedKeys !== undefined && !ownedKeys.has(key.keyId))) continue;
    const sets = [...key.sets, ...refillSets(key, map, options.refill ?? 'replace', options.refillLagMs ?? 0)];
    const measure = checkKeyCounters(key, sets, ttlMs, regions, log);
    if (measure !== undefined && (worst === undefined || measure.overSpend - measure.bound > worst.overSpend - worst.bound)) worst = measure;
  }
  return { violations: log.violations(), worst };
}
