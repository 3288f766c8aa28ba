/**
 * A request's input as the engine is handed it: the query or the JSON body (content type and
 * syntax checked, 400), then the engine call with its schema verdict. Both run on every request:
 * nothing is allocated beyond the call itself unless the request is refused.
 */
import { isJsonContentType, jsonSyntaxProblem } from './body.js';
import { type Problem, fromEngine, invalidInput } from './envelope.js';
import type { EngineCall } from './engine-backend.js';
import type { Route } from './route.js';
import { validate } from './schema.js';
import type { FieldError } from '../engine/index.js';

/** A body's verdict when it was parsed and judged as it arrived (route.streamBody). */
export type StreamedInput = { ok: true; value: unknown } | { ok: false; errors: FieldError[] };

/** Why a request's input was refused before any other check; a class so that `instanceof` tells it from any JSON value. */
export class RefusedInput {
  constructor(readonly problem: Problem) {}
}

/** Where the request's query starts in its URL (`queryAt`: the index of `?`, -1 when none). */
export interface RequestText {
  route: Route;
  path: string;
  rawUrl: string;
  queryAt: number;
}

/**
 * The query's parameters, `{}` for an admin call sent without a body, or the parsed JSON body;
 * a body that is not JSON, or not sent as JSON, is refused.
 */
export function requestInput(request: RequestText, contentType: string | undefined, bodyText: string): unknown {
  if (request.route.input === 'query') {
    return Object.fromEntries(new URLSearchParams(request.queryAt === -1 ? '' : request.rawUrl.slice(request.queryAt + 1)));
  }
  if (request.path.startsWith('/_sim/') && bodyText.trim() === '') return {};
  if (!isJsonContentType(contentType)) {
    return new RefusedInput(
      invalidInput('The request body must be JSON sent with "Content-Type: application/json".', [
        { location: 'header.content-type', message: contentType === undefined ? 'is missing: send application/json' : 'must be application/json' },
      ]),
    );
  }
  try {
    return JSON.parse(bodyText) as unknown;
  } catch (error) {
    const problem = jsonSyntaxProblem(error);
    return new RefusedInput(invalidInput(`The request body is not valid JSON: ${problem}.`, [{ location: 'body', message: `is not valid JSON: ${problem}` }]));
  }
}

/**
 * The call the engine runs, or refuses: a missing root key or a schema violation becomes its
 * `rejection` rather than an answer here, because the API rate limit counts a request before its
 * root key or schema is judged (engine-backend.ts).
 */
export function engineCall(route: Route, token: string | undefined, input: unknown, streamed: StreamedInput | undefined): EngineCall {
  const call: EngineCall = { route, token, input: undefined };
  if (route.auth === 'required' && token === undefined) {
    call.rejection = fromEngine({
      code: 'err:service:authentication:missing',
      detail: 'Authentication is required: send your root key as "Authorization: Bearer <ROOT_KEY>".',
    });
    return call;
  }
  const checked = streamed ?? validate(route.request, input, route.input === 'query' ? 'query' : 'body');
  if (checked.ok) {
    call.input = checked.value;
  } else {
    const first = checked.errors[0];
    const summary =
      first === undefined
        ? 'The request is not valid.'
        : `${first.location} ${first.message}${checked.errors.length > 1 ? ` (and ${checked.errors.length - 1} more)` : ''}.`;
    call.rejection = invalidInput(summary, checked.errors);
  }
  return call;
}
