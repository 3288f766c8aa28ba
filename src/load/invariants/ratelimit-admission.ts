/**
 * No over-admission: the lower-bound half of the rate-limit checker (see ratelimit.ts).
 *
 * The service decides the requests of one counter one after another. Take any set S of requests
 * surely admitted in window k of a counter (duration d, previous window's surely admitted cost
 * P). The last of S to be decided saw the others' cost in `current` and at least
 * floor(P · remaining / d) of the previous window, where remaining = (k + 1)·d − its service time.
 * So, with t an upper bound on that last decision's service time:
 *
 *   cost(S) + floor(P · ((k + 1)·d − t) / d) ≤ the limit of that last request
 *
 * Three sets S are judged, each with a sound t:
 *  - all sure admissions of the window, with no weight (the fixed-window bound);
 *  - X and the sure admissions that completed before X was sent: X is surely last, t = sComp(X),
 *    the limit is X's;
 *  - the sure admissions whose latest possible service time is ≤ sComp(X): whichever of them came
 *    last, it came by sComp(X); the limit is the largest among them. This one counts requests
 *    admitted concurrently, so a burst admitted just after a window edge, on top of a burst just
 *    before it, is caught even when no answer arrived before another request was sent. How much
 *    weight it can prove depends on how tight sComp is: the service clock's bracket on the
 *    simulator, else the answer's arrival plus the clock skew (measured on a live target).
 *
 * Unknown outcomes and decisions that may fall in several windows or under several limits are
 * never part of S: every term is a lower bound on what the service counted.
 */
import type { HistoryEvent } from '../history/index.js';
import type { Bucket, Counter, Item } from './ratelimit-counters.js';
import { iso } from '../../engine/iso.js';
import { windowText } from './ratelimit-counters.js';
import { type ViolationLog, witness } from './violation-log.js';

const INVARIANT = 'ratelimit.no-over-admission';

/**
 * floor(previous · remaining / duration), with the remaining time rounded down to whole ms (the
 * service's clock counts whole ms, and a smaller remainder only lowers the bound), computed in
 * integers as the engine does so that rounding can never raise it.
 */
export function previousWeightAtLeast(previous: number, windowEnd: number, latestMs: number, durationMs: number): number {
  const remaining = windowEnd - Math.ceil(latestMs);
  if (previous <= 0 || remaining <= 0) return 0;
  const product = previous * remaining;
  if (Number.isSafeInteger(product) && Number.isSafeInteger(durationMs)) return (product - (product % durationMs)) / durationMs;
  return Math.floor(product / durationMs);
}

/** The last few events of the previous window, for a witness. */
function previousWitness(previous: Bucket | undefined): HistoryEvent[] {
  return (previous?.sure ?? []).slice(-2).map((i) => i.event);
}

/** Judges every window of every counter; returns how many admissions were checked. */
export function judgeOverAdmission(counters: Iterable<Counter>, log: ViolationLog): number {
  let checked = 0;
  for (const counter of counters) {
    const d = counter.durationMs;
    for (const [k, bucket] of counter.buckets) {
      if (bucket.sure.length === 0) continue;
      checked += bucket.sure.length;
      if (bucket.sureTotal > bucket.maxSureLimit) {
        const sure = bucket.sure;
        log.add(INVARIANT, counter.subject, (sure[sure.length - 1] as Item).comp, () => ({
          message: `${sure.length} requests with a total cost of ${bucket.sureTotal} were admitted in ${windowText(counter, k)}, but the effective limit is ${bucket.maxSureLimit}${sure.some((i) => i.source !== undefined) ? ' (an override)' : ''}.`,
          witness: witness(
            [sure.find((i) => i.source !== undefined)?.source],
            sure.slice(0, 2).map((i) => i.event),
            sure.slice(-3).map((i) => i.event),
          ),
        }));
      }
      if (d === undefined) continue;
      const previousBucket = counter.buckets.get(k - 1);
      const previous = previousBucket?.sureTotal ?? 0;
      const windowEnd = (k + 1) * d;
      for (const x of bucket.sure) {
        const latest = Math.min(x.sComp, windowEnd - 1);
        const weight = previousWeightAtLeast(previous, windowEnd, latest, d);
        const before = bucket.sureCompLT(x.inv);
        if (before + weight + x.cost > x.limit) {
          log.add(INVARIANT, counter.subject, x.comp, () => ({
            message:
              `#${x.event.seq} was admitted (cost ${x.cost}) in ${windowText(counter, k)} although requests admitted earlier in that window cost at least ${before}` +
              `${weight > 0 ? ` and the previous window still weighed at least ${weight} (of ${previous} admitted there)` : ''}: ${before + weight + x.cost} > limit ${x.limit}.`,
            witness: witness(
              [x.source],
              [x.event],
              previousWitness(previousBucket),
              bucket.sure
                .filter((i) => i.comp < x.inv)
                .slice(-3)
                .map((i) => i.event),
            ),
          }));
          continue;
        }
        if (weight === 0) continue; // without weight, the window's total above is the stronger bound
        const by = bucket.sureBySCompLE(x.sComp);
        if (by.cost + weight <= by.maxLimit) continue;
        log.add(INVARIANT, counter.subject, x.sComp, () => {
          const set = bucket.sureBySComp.slice(0, by.count);
          return {
            message:
              `${by.count} requests with a total cost of ${by.cost} were admitted in ${windowText(counter, k)}, concurrently or not, all decided by ${iso(latest)} at the latest, ` +
              `when the previous window's ${previous} still weighed at least ${weight}: ${by.cost} + ${weight} > limit ${by.maxLimit}. ` +
              'A sliding window cannot admit them all; a fixed window would.',
            witness: witness(
              [set.find((i) => i.source !== undefined)?.source],
              previousWitness(previousBucket),
              set.slice(0, 2).map((i) => i.event),
              set.slice(-2).map((i) => i.event),
            ),
          };
        });
      }
    }
  }
  return checked;
}
