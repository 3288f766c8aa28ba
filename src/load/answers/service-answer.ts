/**
 * Whether an answer is the service's — the one rule every reader of answers applies: the load
 * models (open-model-answers.ts, closed-model.ts), the pre-flight check (reachability.ts), the
 * dead-target watch (dead-target.ts), the clock-skew probes (clock-skew.ts), and the scenario
 * checks and the history (unknown-outcome.ts).
 *
 * The service answers every request, success or error, with a JSON object in its envelope
 * (src/http/envelope.ts, docs/errors.md):
 * - v2 (`/v2/…`) and the simulator's admin surface (`/_sim/…`): an object with a `meta` object
 *   (`{ "meta": { "requestId" }, "data" }` or `{ "meta", "error" }`);
 * - v1 (`/v1/…`): the object itself on success, `{ "error": { "code", "message" } }` on error — so
 *   any JSON object (v1's successes have no envelope to recognise them by).
 * Whatever its status, such an answer is the service speaking: a 200 its success, a 404 its "not
 * found", a 5xx its own failure (whose effect is unknown, but which is its answer).
 *
 * Anything else is not the service's answer: a body that is not JSON, not an object, JSON without
 * the envelope, no body at all. Something in front of the service answered instead — a reverse
 * proxy, a gateway, a firewall — and it says nothing of what the service did: the outcome is
 * unknown, never a pass and never a violation ("an answer that never came"). Two kinds are told
 * apart, because they say different things about the target:
 * - a gateway's 502, 503 or 504: the service behind it did not answer (down or too slow); only
 *   these count towards a dead target;
 * - anything else (a proxy's 200 HTML page, a firewall's 403, nginx's own 429 page, a plain-text
 *   404): something is there and answering. A 404 or 405 of this kind says that the path leads
 *   nowhere: route-miss.ts makes it a failed check.
 */

/** How the service shapes its answers at a path: see the top of the file. */
export type ApiStyle = 'v1' | 'v2';

/** The style of a request path (relative to the target's base URL): v1 under `/v1/`, else v2. */
export function styleOfPath(path: string): ApiStyle {
  return path.startsWith('/v1/') ? 'v1' : 'v2';
}

/** The statuses a gateway answers when the service behind it did not. */
export const GATEWAY_STATUSES: ReadonlyMap<number, string> = new Map([
  [502, 'Bad Gateway'],
  [503, 'Service Unavailable'],
  [504, 'Gateway Timeout'],
]);

export function isGatewayStatus(status: number): boolean {
  return GATEWAY_STATUSES.has(status);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Whether a parsed body is in the service's envelope for `style` (v2: an object with a `meta` object). */
export function isServiceBody(body: unknown, style: ApiStyle = 'v2'): boolean {
  if (!isObject(body)) return false;
  return style === 'v1' || isObject(body.meta);
}

/** The service answered, or what answered instead and why it is not the service. */
export type AnswerJudgement = { service: true } | { service: false; gateway: boolean; reason: string };

/**
 * Judges an answer whose body is parsed (undefined when it was not JSON): the service's, or not —
 * then `gateway` when it is a 502/503/504, and a `reason` such as "502 from a gateway".
 */
export function judgeAnswer(status: number, body: unknown, style: ApiStyle = 'v2'): AnswerJudgement {
  if (isServiceBody(body, style)) return { service: true };
  const gateway = isGatewayStatus(status);
  return { service: false, gateway, reason: `${status} ${gateway ? 'from a gateway' : 'whose body is not the service\u2019s JSON'}` };
}

/** A body read from bytes: the service's answer with its parsed body, or not and why. */
export type ReadAnswer = { service: true; body: unknown } | { service: false; gateway: boolean; reason: string; why: string };

/**
 * Reads an answer's (decoded) body bytes and judges it: `why` says what is wrong with the body
 * for a message ("not a JSON object", "JSON without the service's envelope"…).
 */
export function readServiceAnswer(status: number, bytes: Buffer, style: ApiStyle = 'v2'): ReadAnswer {
  let body: unknown;
  let why: string;
  if (!startsLikeJsonObject(bytes)) {
    why = bytes.length === 0 ? 'no body' : 'not a JSON object';
  } else {
    try {
      body = JSON.parse(bytes.toString('utf8')) as unknown;
      if (isServiceBody(body, style)) return { service: true, body };
      why = `JSON without the service's envelope (${style === 'v2' ? 'no "meta" object' : 'not an object'})`;
    } catch (error) {
      why = `JSON that does not parse: ${error instanceof Error ? error.message : String(error)}`;
    }
  }
  const judged = judgeAnswer(status, undefined, style) as { service: false; gateway: boolean; reason: string };
  return { ...judged, why };
}

/** Whether bytes start like a JSON object, skipping leading white space (no parse for a page). */
export function startsLikeJsonObject(body: Buffer): boolean {
  for (let i = 0; i < body.length; i++) {
    const c = body[i] as number;
    if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) continue;
    return c === 0x7b;
  }
  return false;
}
