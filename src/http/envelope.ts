/**
 * The wire shape of every answer, in one place: the v2 `{ meta, data }` / `{ meta, error }`
 * envelope and v1's direct objects and `{ error: { code, message } }`. The server sends these;
 * the journal replay (replay.ts) builds the same bodies to compare answers.
 */
import type { EngineError, FieldError } from '../engine/index.js';
import { PROBLEMS, errorTypeUrl, v1ErrorCode } from './problems.js';
import type { Reply, Route, RouteStyle } from './route.js';

/** An error as the wire shows it: engine errors and the transport's own (404 route, 405). */
export interface Problem {
  status: number;
  title: string;
  /** `err:service:<category>:<name>` */
  identifier: string;
  detail: string;
  errors?: FieldError[];
}

export function fromEngine(error: EngineError): Problem {
  const { status, title } = PROBLEMS[error.code];
  return error.errors === undefined
    ? { status, title, identifier: error.code, detail: error.detail }
    : { status, title, identifier: error.code, detail: error.detail, errors: error.errors };
}

export function invalidInput(detail: string, errors: FieldError[]): Problem {
  return fromEngine({ code: 'err:service:application:invalid_input', detail, errors });
}

/** The body of an error answer in the route style's shape. */
export function problemBody(style: RouteStyle, requestId: string, problem: Problem, errorsUrl: string): unknown {
  if (style === 'v1') return { error: { code: v1ErrorCode(problem.status), message: problem.detail, requestId } };
  const error: Record<string, unknown> = {
    title: problem.title,
    detail: problem.detail,
    status: problem.status,
    type: errorTypeUrl(problem.identifier, errorsUrl),
  };
  // 400 answers always carry the list of violations, possibly empty.
  if (problem.status === 400 || problem.errors !== undefined) error.errors = problem.errors ?? [];
  return { meta: { requestId }, error };
}

/** The body of a successful answer. */
export function replyBody(route: Route, requestId: string, reply: Reply): unknown {
  if (route.style === 'v1') return reply.data ?? {};
  const body: Record<string, unknown> = { meta: { requestId } };
  if (reply.data !== undefined) body.data = reply.data;
  if (reply.pagination !== undefined) body.pagination = reply.pagination;
  return body;
}

/**
 * The text of a successful answer: exactly `JSON.stringify(replyBody(route, requestId, reply))`,
 * with the envelope's constant parts written as text instead of built as objects and serialised
 * on every answer. `requestId` must need no escaping in JSON (the server's ids are `req_`, letters
 * and digits).
 */
export function replyText(route: Route, requestId: string, reply: Reply): string {
  if (route.style === 'v1') return JSON.stringify(reply.data ?? {});
  let text = `{"meta":{"requestId":"${requestId}"}`;
  if (reply.data !== undefined) {
    const data = route.dataText === undefined ? (JSON.stringify(reply.data) as string | undefined) : route.dataText(reply.data);
    // Values JSON has no text for (a function, a symbol) are left out, as in an object.
    if (data !== undefined) text += `,"data":${data}`;
  }
  if (reply.pagination !== undefined) text += `,"pagination":${JSON.stringify(reply.pagination)}`;
  return `${text}}`;
}
