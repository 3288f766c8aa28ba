/**
 * Which answers are the service's, and which outcomes are unknown — one rule for the scenario
 * checks, the history and the invariant checkers (history-format.ts `effectUnknown`).
 *
 * An answer that never came leaves the operation's effect unknown: it may have run or not. That
 * is a transport error or a timeout (no answer at all), and equally an answer that is not the
 * service's: a gateway's 502/503/504 page, a proxy's error page, a body cut short. Behind a
 * reverse proxy these are common (a proxy that times out waiting still forwarded the request,
 * and the service executed it), so they are never evidence against the service.
 *
 * Every answer of the service's v2 API is a JSON object with a `meta` object (`meta.requestId`),
 * success and error alike; that is how its answers are told apart from a gateway's. A 5xx the
 * service sent itself is its answer — a check may judge it — but its effect is unknown too.
 */

/** The service's answer: a JSON object with a `meta` object (the v2 envelope). */
export function isServiceBody(body: unknown): boolean {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return false;
  const meta = (body as { meta?: unknown }).meta;
  return typeof meta === 'object' && meta !== null && !Array.isArray(meta);
}

/**
 * Why an answer is not the service's (so, for a check, it never came): e.g. `502 from a gateway`;
 * undefined when it is the service's.
 */
export function neverCameReason(response: { status: number; body: unknown }): string | undefined {
  if (isServiceBody(response.body)) return undefined;
  const gateway = response.status === 502 || response.status === 503 || response.status === 504;
  return `${response.status} ${gateway ? 'from a gateway' : 'whose body is not the service\u2019s JSON'}`;
}

/** Whether an answer leaves its operation's effect unknown: not the service's, or a 5xx. */
export function answerEffectUnknown(response: { status: number; body: unknown }): boolean {
  return response.status >= 500 || !isServiceBody(response.body);
}
