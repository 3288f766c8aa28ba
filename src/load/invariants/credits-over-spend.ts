/**
 * The over-spend measure (docs/consistency.md#measures): how far a key's VALID answers went past
 * its exact balance, per counter period. Per key, after each set of its balance (createKey, a
 * set, a refill), the VALID answers are cut into periods: a period starts at the first VALID
 * answer and lasts `ttlMs` (0: one exact counter, so one period per set); the next starts at the
 * first VALID answer after it ends. The balance a period starts from is the set's value less what
 * the earlier periods granted (never below 0), plus the top-ups since; its over-spend is what it
 * granted beyond that and its own top-ups (0 when it did not). A measure only: the verdict is
 * each regional counter's (credits-promise.ts).
 */
import type { HistoryEvent, TimeBracket } from '../history/index.js';
import { type KeyModel, type SetEvent, INF } from './credits-sets.js';
import type { Amount } from './credits-sums.js';

/** One period's over-spend, and the promise's bound for it: (regions − 1) × the balance it started from. */
export interface OverSpendSample {
  keyId: string;
  overSpend: number;
  bound: number;
}

/**
 * `spanOf` gives an operation's service bracket: the periods run on the service clock, as the
 * counters do; which set an answer follows is read on the wall clock, as the exact checker reads it.
 */
export function overSpendSamples(
  key: KeyModel,
  sets: readonly SetEvent[],
  ttlMs: number,
  regions: number,
  spanOf: (e: HistoryEvent) => TimeBracket,
): OverSpendSample[] {
  const samples: OverSpendSample[] = [];
  const life = ttlMs > 0 ? ttlMs : INF;
  const ordered = [...sets].sort((a, b) => a.lo - b.lo);
  // The amounts on the service clock.
  const onService = (a: Amount): Amount => ({ ...a, inv: spanOf(a.event).sInv, comp: spanOf(a.event).sComp });
  for (const [i, s] of ordered.entries()) {
    if (s.vLo !== s.vHi || s.vHi === INF) continue; // unknown or unlimited: nothing to measure against
    const end = i + 1 < ordered.length ? (ordered[i + 1] as SetEvent).lo : INF;
    const inside = (a: { inv: number; comp: number }) => a.inv > s.hi && a.comp < end;
    const spends = key.sureDown
      .filter(inside)
      .map(onService)
      .sort((a, b) => a.inv - b.inv);
    const ups = key.sureUp.filter(inside).map(onService);
    let db = s.vHi;
    let from = Number.NEGATIVE_INFINITY;
    let next = 0;
    while (next < spends.length) {
      const start = (spends[next] as Amount).inv;
      const stop = start + life;
      db += ups.filter((u) => u.comp >= from && u.comp < start).reduce((n, u) => n + u.amount, 0);
      const upsIn = ups.filter((u) => u.comp >= start && u.comp < stop).reduce((n, u) => n + u.amount, 0);
      let spent = 0;
      // The first spend always joins: a period is never empty.
      do spent += (spends[next++] as Amount).amount;
      while (next < spends.length && (spends[next] as Amount).inv < stop);
      const allowance = db + upsIn;
      samples.push({ keyId: key.keyId, overSpend: Math.max(0, spent - allowance), bound: (regions - 1) * db });
      db = Math.max(0, allowance - spent);
      from = stop;
    }
  }
  return samples;
}
