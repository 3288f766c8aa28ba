/**
 * Which outcomes are unknown — one rule for the scenario checks, the history and the invariant
 * checkers (history-format.ts `effectUnknown`), on the one rule of what the service's answer is
 * (service-answer.ts).
 *
 * An answer that never came leaves the operation's effect unknown: it may have run or not. That
 * is a transport error or a timeout (no answer at all), and equally an answer that is not the
 * service's: a gateway's 502/503/504 page, a proxy's error page, a body cut short. Behind a
 * reverse proxy these are common (a proxy that times out waiting still forwarded the request,
 * and the service executed it), so they are never evidence against the service. A 5xx the
 * service sent itself is its answer — a check may judge it — but its effect is unknown too.
 */
import { isServiceBody, judgeAnswer } from './service-answer.js';

export { isServiceBody };

/**
 * Why an answer is not the service's (so, for a check, it never came): e.g. `502 from a gateway`;
 * undefined when it is the service's.
 */
export function neverCameReason(response: { status: number; body: unknown }): string | undefined {
  const judged = judgeAnswer(response.status, response.body);
  return judged.service ? undefined : judged.reason;
}

/** Whether an answer leaves its operation's effect unknown: not the service's, or a 5xx. */
export function answerEffectUnknown(response: { status: number; body: unknown }): boolean {
  return response.status >= 500 || !isServiceBody(response.body);
}
