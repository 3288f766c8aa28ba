/**
 * The simulator's HTTP binding on node:http. One pipeline for every route:
 * route (404/405) → body within the limit (413) → injected transport faults (latency, dropped
 * connection, 500; service routes only) → JSON content type and syntax (400) →
 * Authorization header (400) → schema (400, every violation) → engine → envelope.
 * Before all that, a server bound to loopback refuses a `Host` it does not serve (421), and the
 * admin surface refuses everyone but the operator (401/403) before it reads anything else.
 * Route handlers never build error bodies: an engine error code maps to status and title in
 * problems.ts, and a thrown exception (a bug) becomes a 500 without crashing the server.
 */
import { createHash } from 'node:crypto';
import type { Socket } from 'node:net';
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import { DEFAULT_MAX_BODY_BYTES, type BodyRead, collectBody, discardRest, isJsonContentType, jsonSyntaxProblem, lingeringClose } from './body.js';
import { DEFAULT_ERRORS_URL } from './problems.js';
import { type Problem, fromEngine, invalidInput, problemBody, replyBody, replyText } from './envelope.js';
import { type EngineBackend, type EngineCall, type EngineOutcome, localBackend } from './engine-backend.js';
import { seqHeader } from './journal.js';
import { openApiDocument } from './openapi.js';
import type { Reply, Route, RouteContext, RouteStyle } from './route.js';
import { ROUTES, routeTable } from './routes.js';
import { matchRoute, methodNotAllowed } from './route-match.js';
import { faultPath } from './fault-path.js';
import { hostAllowed, hostNotAllowed } from './host-check.js';
import { validate } from './schema.js';
import { sendJsonStream } from './json-stream.js';
import { WORKER_HEADER, type WorkerResponse, send } from './answer.js';
import { answerClientError } from './client-error.js';
import { bearer } from './bearer.js';
import { requestIdSource } from './request-id.js';
import { RESTORE_STREAM_MAX_BODY_BYTES } from './restore-body.js';
import { coalesceWrites } from './write-coalescing.js';
import { DEFAULT_KEEP_ALIVE_TIMEOUT_MS, type ServerOptions, requestTimeouts } from './server-options.js';
import type { FieldError } from '../engine/index.js';

function styleOf(path: string): RouteStyle {
  return path.startsWith('/v1/') ? 'v1' : 'v2';
}

export interface SimulatorServer {
  server: Server;
  /** The OpenAPI document served at GET /openapi.json. */
  openApi: unknown;
  /**
   * Accept only these `Host` headers (lower case, e.g. `127.0.0.1:8787`), answering 421 to any
   * other; null accepts every one. Set once the port is known (host-check.ts).
   */
  setAllowedHosts(hosts: readonly string[] | null): void;
}

/**
 * `state`: the state itself (a `RouteContext`, answered in this process) or a backend holding it
 * (engine-backend.ts; a worker's link to the engine owner).
 */
export function createSimulatorServer(state: RouteContext | EngineBackend, options: ServerOptions = {}): SimulatorServer {
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const errorsUrl = options.errorsUrl ?? DEFAULT_ERRORS_URL;
  const sha256 = options.sha256 ?? ((text: string) => createHash('sha256').update(text).digest('base64url'));
  const local = 'engine' in state;
  const backend: EngineBackend = local ? localBackend(state, sha256) : state;
  const restoreMaxBodyBytes = options.restoreMaxBodyBytes ?? RESTORE_STREAM_MAX_BODY_BYTES;
  const workerHeader = options.workerId === undefined ? undefined : String(options.workerId);
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const table = routeTable(ROUTES);
  const openApi = openApiDocument(ROUTES, options.version ?? '0.0.0');
  const openApiText = JSON.stringify(openApi);
  const nextRequestId = requestIdSource();

  function sendProblem(res: ServerResponse, style: RouteStyle, requestId: string, problem: Problem, headers?: Record<string, string>, route?: Route): void {
    send(res, requestId, problem.status, problemBody(style, requestId, problem, errorsUrl), headers, style === 'v2' && route?.problemJsonErrors === true);
  }

  function sendReply(res: ServerResponse, route: Route, requestId: string, reply: Reply): void {
    if (options.validateResponses === true && route.response !== undefined) {
      const checked = validate(route.response, reply.data, 'response.data');
      if (!checked.ok) throw new Error(`response of ${route.path} does not match its schema: ${JSON.stringify(checked.errors)}`);
    }
    send(res, requestId, 200, replyText(route, requestId, reply));
  }

  /** A bug, not bad input: log it (never secrets: only the path and the error) and answer 500. */
  function fail(req: IncomingMessage, res: ServerResponse, requestId: string, error: unknown): void {
    log(
      `keysim: unexpected error on ${req.method ?? '?'} ${(req.url ?? '').split('?')[0] ?? ''} (${requestId}): ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
    );
    if (res.headersSent) {
      res.destroy();
      return;
    }
    sendProblem(
      res,
      styleOf(req.url ?? ''),
      requestId,
      fromEngine({ code: 'err:service:application:unexpected_error', detail: 'The simulator failed unexpectedly; the error is in its log.' }),
    );
  }

  let allowedHosts: ReadonlySet<string> | null = null;

  /**
   * One request on its way through the pipeline. The path is synchronous from the request to the
   * answer when the state answers at once (one process): no promise or closure per step (the
   * body's listeners are shared functions, body.ts). Where a step may wait (a worker's IPC, an injected delay) it continues in a
   * promise, whose failure `fail` answers like a synchronous throw.
   */
  interface Exchange {
    req: IncomingMessage;
    res: ServerResponse;
    requestId: string;
    route: Route;
    style: RouteStyle;
    path: string;
    rawUrl: string;
    queryAt: number;
  }

  // From the route on, errors follow the route's conventions (e.g. problem+json on deleteIdentity).
  function reject(x: Exchange, problem: Problem, headers?: Record<string, string>): void {
    sendProblem(x.res, x.style, x.requestId, problem, headers, x.route);
  }

  /** Injected faults (fault-path.ts), then execute. */
  const received = faultPath<Exchange>(backend, {
    execute,
    reject,
    fail: (x, error) => fail(x.req, x.res, x.requestId, error),
  });

  function handle(req: IncomingMessage, res: ServerResponse, requestId: string): void {
    const rawUrl = req.url ?? '/';
    const queryAt = rawUrl.indexOf('?');
    const path = queryAt === -1 ? rawUrl : rawUrl.slice(0, queryAt);
    const method = req.method ?? 'GET';

    // DNS rebinding: a web page whose name resolves to this machine reaches a loopback server with
    // its own name as Host. Nothing here answers a name it does not serve.
    if (allowedHosts !== null && !hostAllowed(allowedHosts, req.headers.host)) {
      req.resume();
      sendProblem(res, styleOf(path), requestId, hostNotAllowed(allowedHosts));
      return;
    }

    if (path === '/_sim/health' || path === '/openapi.json') {
      req.resume();
      if (method !== 'GET' && method !== 'HEAD') {
        // The 405 names GET alone (HEAD is GET without the body) but allows both.
        const { problem } = methodNotAllowed(path, 'GET', method);
        sendProblem(res, 'v2', requestId, problem, { allow: 'GET, HEAD' });
      } else if (path === '/_sim/health') {
        const now = backend.clockNow();
        if (now instanceof Promise)
          now.then((clock) => send(res, requestId, 200, { status: 'ok', clock })).catch((error: unknown) => fail(req, res, requestId, error));
        else send(res, requestId, 200, { status: 'ok', clock: now });
      } else {
        send(res, requestId, 200, openApiText);
      }
      return;
    }
    const style = styleOf(path);
    const route = matchRoute(table, path, method);
    if ('problem' in route) {
      req.resume();
      sendProblem(res, style, requestId, route.problem, route.headers);
      return;
    }
    const x: Exchange = { req, res, requestId, route, style, path, rawUrl, queryAt };

    // The admin surface answers the operator only, before it reads anything the caller sent
    // (a refused caller's body is only discarded, and the connection closes after the answer).
    if (path.startsWith('/_sim/')) {
      const auth = bearer(req.headers.authorization);
      if (!auth.ok) {
        refuseOperator(x, auth.problem);
        return;
      }
      const operator = backend.authorizeOperator(auth.token);
      if (operator instanceof Promise) {
        operator
          .then((problem) => (problem === undefined ? receive(x) : refuseOperator(x, problem)))
          .catch((error: unknown) => fail(req, res, requestId, error));
        return;
      }
      if (operator !== undefined) {
        refuseOperator(x, operator);
        return;
      }
    }
    receive(x);
  }

  /** Connections that close after a refused operator call's answer (refuseOperator). */
  const closing = new WeakSet<Socket>();

  function refuseOperator(x: Exchange, problem: Problem): void {
    // Closed without a reset, which would lose earlier pipelined answers the client has not read.
    closing.add(x.req.socket);
    lingeringClose(x.req.socket);
    reject(x, problem, { connection: 'close' });
  }

  /** Reads the body (none for query routes), then goes on. */
  function receive(x: Exchange): void {
    const { req, route } = x;
    if (route.input === 'query') {
      req.resume();
      received(x, '');
      return;
    }
    if (route.streamBody !== undefined && local && isJsonContentType(req.headers['content-type'])) {
      receiveStreamed(x, route.streamBody);
      return;
    }
    collectBody(req, Math.max(route.maxBodyBytes ?? 0, maxBodyBytes), bodyRead, x);
  }

  /** The body read whole (one function for every request: the exchange comes as the context). */
  function bodyRead(body: BodyRead, x: Exchange): void {
    try {
      if (!body.ok) {
        if (body.reason === 'aborted') return;
        discardRest(x.req, x.res);
        reject(
          x,
          fromEngine({
            code: 'err:service:bad_request:request_body_too_large',
            detail: `The request body is larger than ${Math.max(x.route.maxBodyBytes ?? 0, maxBodyBytes)} bytes.`,
          }),
        );
        return;
      }
      received(x, body.text);
    } catch (error) {
      fail(x.req, x.res, x.requestId, error);
    }
  }

  /**
   * A body read as it arrives (route.streamBody, restore-body.ts) comes with the schema's verdict.
   * Only admin routes stream, and they are never faulted: straight to execute.
   */
  function receiveStreamed(x: Exchange, streamBody: NonNullable<Route['streamBody']>): void {
    streamBody(x.req, restoreMaxBodyBytes, sha256)
      .then((body) => {
        if (body.ok) {
          execute(x, '', body.checked);
        } else if (body.reason === 'syntax') {
          reject(
            x,
            invalidInput(`The request body is not valid JSON: ${body.problem}.`, [{ location: 'body', message: `is not valid JSON: ${body.problem}` }]),
          );
        } else if (body.reason !== 'aborted') {
          discardRest(x.req, x.res);
          reject(
            x,
            fromEngine({
              code: 'err:service:bad_request:request_body_too_large',
              detail: `The request body is larger than ${restoreMaxBodyBytes} bytes (the server's restoreMaxBodyBytes).`,
            }),
          );
        }
      })
      .catch((error: unknown) => fail(x.req, x.res, x.requestId, error));
  }

  /** Content type, JSON, Authorization, schema; then the state runs it (or refuses it). */
  function execute(x: Exchange, bodyText: string, streamed?: { ok: true; value: unknown } | { ok: false; errors: FieldError[] }): void {
    const { req, route } = x;
    let input: unknown;
    if (streamed !== undefined) {
      // Parsed and judged as it arrived.
    } else if (route.input === 'query') {
      input = Object.fromEntries(new URLSearchParams(x.queryAt === -1 ? '' : x.rawUrl.slice(x.queryAt + 1)));
    } else if (x.path.startsWith('/_sim/') && bodyText.trim() === '') {
      input = {};
    } else {
      const contentType = req.headers['content-type'];
      if (!isJsonContentType(contentType)) {
        reject(
          x,
          invalidInput('The request body must be JSON sent with "Content-Type: application/json".', [
            { location: 'header.content-type', message: contentType === undefined ? 'is missing: send application/json' : 'must be application/json' },
          ]),
        );
        return;
      }
      try {
        input = JSON.parse(bodyText) as unknown;
      } catch (error) {
        const problem = jsonSyntaxProblem(error);
        reject(x, invalidInput(`The request body is not valid JSON: ${problem}.`, [{ location: 'body', message: `is not valid JSON: ${problem}` }]));
        return;
      }
    }

    const auth = bearer(req.headers.authorization);
    if (!auth.ok) {
      reject(x, auth.problem);
      return;
    }
    const call: EngineCall = { route, token: auth.token, input: undefined };
    // The API rate limit counts a request before its root key or schema is judged (engine-backend.ts).
    if (route.auth === 'required' && auth.token === undefined) {
      call.rejection = fromEngine({
        code: 'err:service:authentication:missing',
        detail: 'Authentication is required: send your root key as "Authorization: Bearer <ROOT_KEY>".',
      });
    } else {
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
    }
    const seq = seqHeader(req.headers['x-keysim-seq']);
    if (seq !== undefined) call.seq = seq;
    const ran = backend.run(call);
    if (ran instanceof Promise) ran.then((outcome) => answer(x, outcome)).catch((error: unknown) => fail(req, x.res, x.requestId, error));
    else answer(x, ran);
  }

  function answer(x: Exchange, outcome: EngineOutcome): void {
    if (!outcome.ok) {
      reject(x, outcome.problem);
      return;
    }
    if (x.route.streamReply === true) {
      sendJsonStream(x.res, 200, { 'x-request-id': x.requestId }, replyBody(x.route, x.requestId, outcome.reply)).catch((error: unknown) =>
        fail(x.req, x.res, x.requestId, error),
      );
    } else {
      sendReply(x.res, x.route, x.requestId, outcome.reply);
    }
  }

  const keepAliveMs = options.keepAliveTimeoutMs ?? DEFAULT_KEEP_ALIVE_TIMEOUT_MS;
  const server = createServer(requestTimeouts(keepAliveMs), (req, res) => {
    // A request pipelined after a refused operator call: its connection is closing and nothing
    // more is answered on it, so nothing more is run either (its body is discarded).
    if (closing.has(req.socket)) {
      req.resume();
      return;
    }
    const requestId = nextRequestId();
    if (workerHeader !== undefined) (res as WorkerResponse)[WORKER_HEADER] = workerHeader;
    try {
      handle(req, res, requestId);
    } catch (error) {
      fail(req, res, requestId, error);
    }
  });
  server.keepAliveTimeout = keepAliveMs;
  if (options.coalesceWrites !== false) server.on('connection', coalesceWrites);
  server.on('clientError', (error: NodeJS.ErrnoException, socket) => {
    if (!socket.writable) {
      socket.destroy();
      return;
    }
    answerClientError(error, socket, nextRequestId(), errorsUrl);
  });
  return {
    server,
    openApi,
    setAllowedHosts(hosts) {
      allowedHosts = hosts === null ? null : new Set(hosts.map((h) => h.toLowerCase()));
    },
  };
}
