/**
 * Each invariant's verdict under the promise set in force (docs/consistency.md). The exact
 * checkers run first; under a set that promises less than one linearizable service, an invariant
 * they found broken is judged again with the promised bounds, derived from the run itself:
 *
 * - credits.no-over-spend, credits.consistent: per regional counter (credits-promise.ts), what
 *   one counter grants never beyond the database balance it was created from;
 * - credits.refill, credits.no-under-serve: a refill may be unseen up to `refillLagMs` after its
 *   boundary (and leaves a balance ≥ its amount alone); another region's counter may miss a set
 *   or a top-up for `creditTtlMs`, and a debit may reach the database `creditReplayMs` late;
 * - ratelimit.no-over-admission: admitted cost up to limit × (1 + rateLimitOverAdmission × regions)
 *   + regions × the largest cost of the counter;
 * - ratelimit.no-false-denial: a denial is legal once the window could hold rateLimitUnderAdmission
 *   × limit, or after a legal denial in the same region, counter and window (a region stays strict).
 *
 * Regions are those the history's events name (`region`, from the x-keysim-region header), else
 * the set's `regions`. What the second judgement still finds is `violated`; what only the exact
 * one found is `within-promise`, with its measured size.
 */
import type { HistoryEvent } from '../history/index.js';
import { type PromiseSet, admissionTerms, judgesExactly, promiseSetText } from '../promises/index.js';
import { judgeCreditInvariants } from './credits.js';
import { judgeCreditCounters } from './credits-promise.js';
import type { OverSpendSample } from './credits-over-spend.js';
import { judgeRateLimitInvariants } from './ratelimit.js';
import type { InvariantFindings, InvariantId, InvariantOptions, PromisesInForce, VerdictState, Violation } from './types.js';

/** The regions the bounds count: those the history names, else the set's. */
export function regionsOf(history: readonly HistoryEvent[], set: PromiseSet): Pick<PromisesInForce, 'regions' | 'regionsFrom'> {
  const named = new Set<string>();
  for (const event of history) if (event.region !== undefined) named.add(event.region);
  return named.size > 0 ? { regions: named.size, regionsFrom: 'history' } : { regions: set.regions, regionsFrom: 'promise set' };
}

/** The period that went furthest past its bound, if any over-spent. */
function worstOverSpend(samples: readonly OverSpendSample[]): OverSpendSample | undefined {
  let worst: OverSpendSample | undefined;
  for (const s of samples) if (s.overSpend > 0 && (worst === undefined || s.overSpend - s.bound > worst.overSpend - worst.bound)) worst = s;
  return worst;
}

/** One invariant's state and measured size under the set. */
export interface PromiseJudgement {
  state: VerdictState;
  measured?: string;
  /** The violations of the promise set for this invariant (replacing the exact checkers'). */
  violations: Violation[];
}

function pct(share: number): string {
  return `${Math.round(share * 1000) / 10} %`;
}

/** The verdicts under `set` of the invariants the exact findings broke; the others keep `exact`. Also the over-spend samples it measured. */
export function judgeUnderPromises(
  history: readonly HistoryEvent[],
  options: InvariantOptions,
  set: PromiseSet,
  exact: readonly InvariantFindings[],
): { judgements: Map<InvariantId, PromiseJudgement>; inForce: PromisesInForce; overSpend: OverSpendSample[] } {
  const { regions, regionsFrom } = regionsOf(history, set);
  const inForce: PromisesInForce = { name: set.name, text: promiseSetText(set), regions, regionsFrom };
  const judgements = new Map<InvariantId, PromiseJudgement>();
  const counterFigures = { ttlMs: set.creditTtlMs, replayMs: set.creditReplayMs, regions };
  // Judged exactly: one exact counter per key, which no region may over-spend.
  if (judgesExactly(set)) return { judgements, inForce, overSpend: judgeCreditCounters(history, options, { ...counterFigures, regions: 1 }).samples };
  const broken = new Set(exact.flatMap((f) => f.violations.map((v) => v.invariant)));
  const of = (findings: InvariantFindings, id: InvariantId) => findings.violations.filter((v) => v.invariant === id);
  const settle = (id: InvariantId, violations: Violation[], measured: string | undefined) =>
    judgements.set(id, { state: violations.length > 0 ? 'violated' : 'within-promise', violations, ...(measured === undefined ? {} : { measured }) });

  if (broken.has('credits.refill') || broken.has('credits.no-under-serve')) {
    // Regional counters see a set or a top-up up to a counter's life late, a debit reaches the database late.
    const regionalLag = set.creditTtlMs > 0 ? { regionalLag: { counterMs: set.creditTtlMs, replayMs: set.creditReplayMs } } : {};
    const lagged = judgeCreditInvariants(history, { ...options, refill: 'production', refillLagMs: set.refillLagMs, ...regionalLag });
    const lag = `refills seen up to ${set.refillLagMs / 1000} s after their boundary accepted${set.creditTtlMs > 0 ? `, other changes up to ${set.creditTtlMs / 1000} s in another region` : ''}`;
    if (broken.has('credits.refill')) settle('credits.refill', of(lagged, 'credits.refill'), lag);
    if (broken.has('credits.no-under-serve')) settle('credits.no-under-serve', of(lagged, 'credits.no-under-serve'), lag);
  }
  const counters = judgeCreditCounters(history, { ...options, refillLagMs: set.refillLagMs }, counterFigures);
  if (broken.has('credits.no-over-spend') || broken.has('credits.consistent')) {
    const overSpent = counters.violations.filter((v) => v.invariant === 'credits.no-over-spend');
    // The key's figure against the promise's words first, then what the verdict judged: each regional counter.
    const w = worstOverSpend(counters.samples);
    const { judged, loose } = counters.periods;
    const measured =
      (w === undefined
        ? `no period over-spent (bound (${regions} − 1) × the period's starting balance)`
        : `over-spend ${w.overSpend} credits ${w.overSpend <= w.bound ? '≤' : '>'} bound ${w.bound} ((${regions} − 1) regions × the balance at the period's start)`) +
      `; judged per regional counter: ${judged} periods${loose > 0 ? ` (${loose} not placed)` : ''}, ${overSpent.length === 0 ? 'each within' : 'not all within'} the balance it was created from`;
    if (broken.has('credits.no-over-spend')) settle('credits.no-over-spend', overSpent, measured);
    if (broken.has('credits.consistent'))
      settle(
        'credits.consistent',
        counters.violations.filter((v) => v.invariant === 'credits.consistent'),
        'reported balances within each regional counter',
      );
  }
  if (broken.has('ratelimit.no-over-admission')) {
    // One request's cost per region on top of the share: what a region admits before it publishes (docs/consistency.md#the-rate-limit-band).
    const { scale, costSlack: slack } = admissionTerms(set, regions);
    const band = set.rateLimitOverAdmission * regions;
    const banded = judgeRateLimitInvariants(history, { ...options, limitScale: scale, limitCostSlack: slack });
    const over = Math.max(0, ...exact.map((f) => f.overAdmission ?? 0));
    const measured = `over-admission ${pct(over)} ${over <= band ? '≤' : '>'} ${pct(band)} (${pct(set.rateLimitOverAdmission)} × ${regions} regions)${slack > 0 ? ` + ${slack} × the largest request cost` : ''}`;
    settle('ratelimit.no-over-admission', of(banded, 'ratelimit.no-over-admission'), measured);
  }
  if (broken.has('ratelimit.no-false-denial')) {
    const banded = judgeRateLimitInvariants(history, { ...options, limitScale: set.rateLimitUnderAdmission, strictAfterDenial: true });
    settle(
      'ratelimit.no-false-denial',
      of(banded, 'ratelimit.no-false-denial'),
      `denials once ${pct(set.rateLimitUnderAdmission)} of the limit could be used accepted, and after a region's denial until its window ends`,
    );
  }
  return { judgements, inForce, overSpend: counters.samples };
}
