/**
 * A scenario's own credit checks under the promise set in force (`--consistency`,
 * docs/consistency.md), so that they give the verdict the invariant checkers give: under `exact`
 * nothing changes; under a set whose regions drift (production), the final reads wait until every
 * region has converged, and a count of VALID answers may exceed the credits by what the regions
 * could over-spend — a bound derived from the run (its keys' balances, the regions its answers
 * named), never a blanket tolerance.
 */
import { type PromiseSet, type RateLimitBand, type ScenarioContext, judgesExactly, rateLimitBandOf } from '../../src/index.js';
import { scenarioTime } from './lanes.js';

/** Whether the run judges the target as one exact service (the default). */
export const exactly = (ctx: ScenarioContext): boolean => judgesExactly(ctx.promises);

/**
 * Before the final reads under a drifting promise set: lets the regions' credit counters expire
 * (creditTtlMs; every buffered debit reaches the database within it), moving a simulator's manual
 * clock, else waiting. Under `exact` it returns at once.
 */
export function convergeBeforeFinalReads(ctx: ScenarioContext): Promise<void> {
  return convergeBefore(ctx, 'the final reads');
}

/**
 * The same wait before any step that needs the database to hold every debit made so far (a read
 * it judges exactly, a credit change whose answer it checks): `what` names that step in the log.
 */
export async function convergeBefore(ctx: ScenarioContext, what: string): Promise<void> {
  if (exactly(ctx)) return;
  const ms = ctx.promises.creditTtlMs;
  const time = await scenarioTime(ctx);
  ctx.log(
    `${ctx.promises.name} promises: ${time.moved ? 'moving the service clock' : 'waiting'} ${Math.round(ms / 1000)} s (creditTtlMs) for every region to converge before ${what}`,
  );
  await time.pass(ms);
}

/** The regions a bound counts: those the answers named (x-keysim-region), else the promise set's. */
export function regionsCounted(seen: ReadonlySet<string>, promises: PromiseSet): number {
  return seen.size > 0 ? seen.size : promises.regions;
}

/**
 * The most the regions may over-spend, in verifications, over keys admitting `units` each: per key
 * and per counter period (creditTtlMs) that the load spans, (regions − 1) × the balance the period
 * starts from — at most the key's whole balance, which bounds every period's. 0 under `exact`.
 */
export function overSpendAllowance(units: readonly number[], regions: number, spanMs: number, promises: PromiseSet): number {
  if (judgesExactly(promises) || regions <= 1) return 0;
  const periods = promises.creditTtlMs > 0 ? 1 + Math.floor(spanMs / promises.creditTtlMs) : 1;
  return units.reduce((n, u) => n + (regions - 1) * u * periods, 0);
}

/**
 * A rate-limit window's band under the promise set, the checkers' own (rateLimitBandOf): it may
 * admit up to limit × (1 + rateLimitOverAdmission × regions) + regions × `largestCost` (the largest
 * cost its counter saw: each region may admit one request past its share; 0 leaves that term out),
 * and deny once what it holds plus the request's cost is above rateLimitUnderAdmission × the limit.
 * Under `exact` both are the limit itself.
 */
export type { RateLimitBand };

export function rateLimitBand(limit: number, regions: number, promises: PromiseSet, largestCost = 0): RateLimitBand {
  if (judgesExactly(promises)) return { admitUpTo: limit, denyAbove: limit };
  return rateLimitBandOf(promises, limit, regions, largestCost);
}
