/**
 * Calls a scenario makes itself (bursts, walk-throughs, end-of-run reads) whose answer may never
 * come: a dropped connection, a timeout, a gateway's 502/504 (unknown-outcome.ts). `ctx.api.call`
 * throws on the first and answers the others; these helpers turn both into an outcome that says
 * so — so that a burst of calls awaited together cannot leave a rejection unhandled, and a lost
 * answer is counted as unknown instead of ending the run.
 *
 * Only a lost answer becomes an outcome: a transport error, or an answer that is not the
 * service's. Anything else thrown — a bug (a TypeError), a call keysim refuses itself (an unknown
 * operation), a history that cannot be written — still rejects, so that it is never hidden as a
 * lost answer and judged "not judged".
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { NotServiceAnswerError } from '../http1/index.js';
import { classifyTransportError } from '../answers/index.js';
import type { ApiResponse, Operation, ScenarioContext } from './scenario.js';
import { neverCameReason } from '../answers/index.js';

/** The service's answer, or why none came (its effect on the service is then unknown). */
export type CallOutcome = { answered: true; response: ApiResponse } | { answered: false; why: string };

/** Why a call threw: the transport error's kind and message, e.g. `reset: socket hang up`. */
function thrownReason(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return `${classifyTransportError(error)}: ${message}`;
}

/** The codes of keysim's HTTP/1.1 client (http1/errors.ts) for an answer that could not be read or was abandoned. */
const CLIENT_LOSS_CODES: ReadonlySet<string> = new Set(['KEYSIM_BAD_RESPONSE', 'KEYSIM_DESTROYED']);

/**
 * Whether an error thrown by `ctx.api.call` says that the answer never came: a transport error
 * (a timeout, a reset, a refused or failed connection: an error of the operating system or of
 * keysim's client, by its code, its causes' included) or an answer that is not the service's
 * (NotServiceAnswerError). A TypeError, a refused operation or any other error is not.
 */
export function isLostAnswerError(error: unknown): boolean {
  if (classifyTransportError(error) !== 'other') return true;
  let e: unknown = error;
  for (let depth = 0; depth < 4 && typeof e === 'object' && e !== null; depth++) {
    if (e instanceof NotServiceAnswerError) return true;
    const { code, syscall } = e as { code?: unknown; syscall?: unknown };
    if (typeof code === 'string' && CLIENT_LOSS_CODES.has(code)) return true;
    // An error of a socket call (getaddrinfo, connect, read …): EHOSTUNREACH, ENOTFOUND, ENETDOWN …
    if (typeof code === 'string' && typeof syscall === 'string') return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

/**
 * Calls `op` once; resolves with the service's answer or with why it never came. Rejects only
 * with an error that is not a lost answer (isLostAnswerError): a bug must not pass for one.
 */
export async function callOutcome(ctx: Pick<ScenarioContext, 'api'>, op: Operation, body: unknown): Promise<CallOutcome> {
  try {
    const response = await ctx.api.call(op, body);
    const why = neverCameReason(response);
    return why === undefined ? { answered: true, response } : { answered: false, why };
  } catch (error) {
    if (!isLostAnswerError(error)) throw error;
    return { answered: false, why: thrownReason(error) };
  }
}

/**
 * Attempts of `readOutcome` before it gives up. A proxy that times out a slow answer one time in
 * ten lost three in a row about once in a thousand reads, often enough to stop a run's setup now
 * and then; five, spaced out, make that about once in a hundred thousand.
 */
export const READ_ATTEMPTS = 5;
/** The pause before the second attempt, doubled before each next one (50, 100, 200, 400 ms). */
const READ_RETRY_PAUSE_MS = 50;

/**
 * A read that changes nothing (keys.getKey, identities.getIdentity, a cost-0 limit …), asked
 * again when its answer never came, up to `attempts` times with a growing pause between them (a
 * struggling target or proxy gets a moment); the last outcome is returned. Rejects as callOutcome
 * does (never for a lost answer). Only for reads: asking a write again could apply it twice.
 */
export async function readOutcome(ctx: Pick<ScenarioContext, 'api'>, op: Operation, body: unknown, attempts = READ_ATTEMPTS): Promise<CallOutcome> {
  let outcome: CallOutcome = { answered: false, why: 'not asked' };
  for (let i = 0; i < attempts; i++) {
    if (i > 0) await sleep(READ_RETRY_PAUSE_MS * 2 ** (i - 1));
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
    return [...this.reasons]
      .slice(0, 4)
      .map(([why, n]) => `${why} ×${n}`)
      .join('; ');
  }
}
