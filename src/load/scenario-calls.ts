/**
 * Calls a scenario makes itself (bursts, walk-throughs, end-of-run reads) whose answer may never
 * come: a dropped connection, a timeout, a gateway's 502/504 (unknown-outcome.ts). `ctx.api.call`
 * throws on the first and answers the others; these helpers turn both into an outcome that says
 * so, and never reject — so that a burst of calls awaited together cannot leave a rejection
 * unhandled, and a lost answer is counted as unknown instead of ending the run.
 */
import { classifyTransportError } from './transport-error.js';
import type { ApiResponse, Operation, ScenarioContext } from './scenario.js';
import { neverCameReason } from './unknown-outcome.js';

/** The service's answer, or why none came (its effect on the service is then unknown). */
export type CallOutcome = { answered: true; response: ApiResponse } | { answered: false; why: string };

/** Why a call threw: the transport error's kind and message, e.g. `reset: socket hang up`. */
function thrownReason(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return `${classifyTransportError(error)}: ${message}`;
}

/** Calls `op` once; resolves with the service's answer or with why it never came. Never rejects. */
export async function callOutcome(ctx: Pick<ScenarioContext, 'api'>, op: Operation, body: unknown): Promise<CallOutcome> {
  try {
    const response = await ctx.api.call(op, body);
    const why = neverCameReason(response);
    return why === undefined ? { answered: true, response } : { answered: false, why };
  } catch (error) {
    return { answered: false, why: thrownReason(error) };
  }
}

/** Attempts of `readOutcome` before it gives up. */
export const READ_ATTEMPTS = 3;

/**
 * A read that changes nothing (keys.getKey, identities.getIdentity, a cost-0 limit …), asked
 * again when its answer never came, up to `attempts` times. Never rejects; the last outcome is
 * returned. Only for reads: asking a write again could apply it twice.
 */
export async function readOutcome(ctx: Pick<ScenarioContext, 'api'>, op: Operation, body: unknown, attempts = READ_ATTEMPTS): Promise<CallOutcome> {
  let outcome: CallOutcome = { answered: false, why: 'not asked' };
  for (let i = 0; i < attempts; i++) {
    outcome = await callOutcome(ctx, op, body);
    if (outcome.answered) return outcome;
  }
  return outcome;
}

/** Counts outcomes that never came and keeps the first few reasons, for a "not judged" detail. */
export class LostAnswers {
  count = 0;
  readonly reasons = new Map<string, number>();
  note(why: string): void {
    this.count++;
    // The kind of loss, without the per-call detail: "504 from a gateway", "reset: socket hang up".
    this.reasons.set(why, (this.reasons.get(why) ?? 0) + 1);
  }
  /** e.g. `504 from a gateway ×3; reset: socket hang up ×1`. */
  text(): string {
    return [...this.reasons].slice(0, 4).map(([why, n]) => `${why} ×${n}`).join('; ');
  }
}
