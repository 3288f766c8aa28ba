/**
 * The request pipeline of the simulator's HTTP server (server.ts), one named step per method:
 * `handle` (Host, the built-in pages, the route, the operator) → `receive` (the body) → the
 * injected faults (fault-path.ts) → `execute` (input, Authorization, schema, the engine) →
 * `answer`. The path is synchronous from the request to the answer when the state answers at
 * once (one process): no promise or closure per step (the body's listeners are shared functions,
 * body.ts, and this object's steps are bound once). Where a step may wait (a worker's IPC, an
 * injected delay) it continues in a promise, whose failure `fail` answers like a synchronous throw.
 */
import type { Socket } from 'node:net';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type BodyRead, collectBody, discardRest, isJsonContentType, lingeringClose } from './body.js';
import { type Problem, fromEngine, invalidInput, problemBody, replyBody, replyText } from './envelope.js';
import { BackendUnavailable, type EngineBackend, type EngineOutcome } from './engine-backend.js';
import { seqHeader } from './journal.js';
import type { Reply, Route, RouteStyle } from './route.js';
import { matchRoute, methodNotAllowed } from './route-match.js';
import { faultPath } from './fault-path.js';
import { hostAllowed, hostNotAllowed } from './host-check.js';
import { validate } from './schema.js';
import { sendJsonStream } from './json-stream.js';
import { REGION_OF, WORKER_HEADER, type WorkerResponse, send } from './answer.js';
import { REGION_HEADER, type RegionPicker } from './regions.js';
import { bearer } from './bearer.js';
import { RefusedInput, type StreamedInput, engineCall, requestInput } from './request-input.js';

/** What the pipeline is built with: server.ts resolves the options' defaults. */
export interface PipelineSettings {
  /** The state, in this process or behind a worker's link (engine-backend.ts). */
  backend: EngineBackend;
  /** The state answers in this process: only then are bodies streamed (route.streamBody). */
  local: boolean;
  sha256: (text: string) => string;
  maxBodyBytes: number;
  restoreMaxBodyBytes: number;
  errorsUrl: string;
  validateResponses: boolean;
  log: (line: string) => void;
  table: Map<string, Route[]>;
  /** GET /openapi.json's body, serialized once. */
  openApiText: string;
  nextRequestId: () => string;
  /** The `x-keysim-worker` header of a `--workers` HTTP worker's answers. */
  workerHeader: string | undefined;
  /** The production profile's regions (regions.ts); undefined on the exact engine. */
  regions: RegionPicker | undefined;
}

/** One request on its way through the pipeline, once its route is known. */
interface Exchange {
  req: IncomingMessage;
  res: ServerResponse;
  requestId: string;
  route: Route;
  style: RouteStyle;
  path: string;
  rawUrl: string;
  queryAt: number;
  /** The region it runs in (production profile); undefined on the exact engine. */
  region: number | undefined;
}

function styleOf(path: string): RouteStyle {
  return path.startsWith('/v1/') ? 'v1' : 'v2';
}

export class RequestPipeline {
  /** The `Host` headers answered (host-check.ts); null answers every one. */
  allowedHosts: ReadonlySet<string> | null = null;
  /** Connections that close after a refused operator call's answer (refuseOperator). */
  private readonly closing = new WeakSet<Socket>();
  /** Injected faults (fault-path.ts), then execute. */
  private readonly received: (x: Exchange, bodyText: string) => void;

  constructor(private readonly s: PipelineSettings) {
    this.received = faultPath<Exchange>(s.backend, {
      execute: (x, bodyText) => this.execute(x, bodyText),
      reject: (x, problem) => this.reject(x, problem),
      fail: (x, error) => this.fail(x.req, x.res, x.requestId, error),
    });
  }

  /** node:http's request listener. */
  readonly onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    // A request pipelined after a refused operator call: its connection is closing and nothing
    // more is answered on it, so nothing more is run either (its body is discarded).
    if (this.closing.has(req.socket)) {
      req.resume();
      return;
    }
    const requestId = this.s.nextRequestId();
    if (this.s.workerHeader !== undefined) (res as WorkerResponse)[WORKER_HEADER] = this.s.workerHeader;
    try {
      let region: number | undefined;
      if (this.s.regions !== undefined) {
        const picked = this.s.regions.pick(req);
        if (typeof picked !== 'number') {
          // Nothing ran in any region: this one answer names none.
          req.resume();
          this.sendProblem(res, styleOf(req.url ?? '/'), requestId, picked);
          return;
        }
        region = picked;
        (res as WorkerResponse)[REGION_OF] = String(region);
      }
      this.handle(req, res, requestId, region);
    } catch (error) {
      this.fail(req, res, requestId, error);
    }
  };

  /** Host, the built-in pages, the route (404/405), the operator; then the body. */
  private handle(req: IncomingMessage, res: ServerResponse, requestId: string, region: number | undefined): void {
    const rawUrl = req.url ?? '/';
    const queryAt = rawUrl.indexOf('?');
    const path = queryAt === -1 ? rawUrl : rawUrl.slice(0, queryAt);
    const method = req.method ?? 'GET';

    // DNS rebinding: a web page whose name resolves to this machine reaches a loopback server with
    // its own name as Host. Nothing here answers a name it does not serve.
    if (this.allowedHosts !== null && !hostAllowed(this.allowedHosts, req.headers.host)) {
      req.resume();
      this.sendProblem(res, styleOf(path), requestId, hostNotAllowed(this.allowedHosts));
      return;
    }
    if (path === '/_sim/health' || path === '/openapi.json') {
      req.resume();
      this.answerBuiltIn(req, res, requestId, path, method);
      return;
    }
    const style = styleOf(path);
    const route = matchRoute(this.s.table, path, method);
    if ('problem' in route) {
      req.resume();
      this.sendProblem(res, style, requestId, route.problem, route.headers);
      return;
    }
    const x: Exchange = { req, res, requestId, route, style, path, rawUrl, queryAt, region };
    if (path.startsWith('/_sim/')) this.admitOperator(x);
    else this.receive(x);
  }

  /** GET /_sim/health and GET /openapi.json: answered without a route, a body or a root key. */
  private answerBuiltIn(req: IncomingMessage, res: ServerResponse, requestId: string, path: string, method: string): void {
    if (method !== 'GET' && method !== 'HEAD') {
      // The 405 names GET alone (HEAD is GET without the body) but allows both.
      const { problem } = methodNotAllowed(path, 'GET', method);
      this.sendProblem(res, 'v2', requestId, problem, { allow: 'GET, HEAD' });
    } else if (path === '/_sim/health') {
      const now = this.s.backend.clockNow();
      if (now instanceof Promise)
        now
          .then((clock) => send(res, requestId, 200, this.health(clock)))
          .catch((error: unknown) =>
            error instanceof BackendUnavailable
              ? send(res, requestId, 503, { status: 'unavailable', detail: error.problem.detail })
              : this.fail(req, res, requestId, error),
          );
      else send(res, requestId, 200, this.health(now));
    } else {
      send(res, requestId, 200, this.s.openApiText);
    }
  }

  /** `/_sim/health`'s body: the production profile and its regions named, when it is the one served. */
  private health(clock: number): unknown {
    const regions = this.s.regions;
    return regions === undefined ? { status: 'ok', clock } : { status: 'ok', clock, profile: 'production', regions: regions.regions };
  }

  /**
   * The admin surface answers the operator only, before it reads anything the caller sent
   * (a refused caller's body is only discarded, and the connection closes after the answer).
   */
  private admitOperator(x: Exchange): void {
    const auth = bearer(x.req.headers.authorization);
    if (!auth.ok) {
      this.refuseOperator(x, auth.problem);
      return;
    }
    const operator = this.s.backend.authorizeOperator(auth.token);
    if (operator instanceof Promise) {
      operator
        .then((problem) => (problem === undefined ? this.receive(x) : this.refuseOperator(x, problem)))
        .catch((error: unknown) => this.fail(x.req, x.res, x.requestId, error));
      return;
    }
    if (operator !== undefined) {
      this.refuseOperator(x, operator);
      return;
    }
    this.receive(x);
  }

  private refuseOperator(x: Exchange, problem: Problem): void {
    // Closed without a reset, which would lose earlier pipelined answers the client has not read.
    this.closing.add(x.req.socket);
    lingeringClose(x.req.socket);
    this.reject(x, problem, { connection: 'close' });
  }

  /** Reads the body (none for query routes), then goes on. */
  private receive(x: Exchange): void {
    const { req, route } = x;
    if (route.input === 'query') {
      req.resume();
      this.received(x, '');
      return;
    }
    if (route.streamBody !== undefined && this.s.local && isJsonContentType(req.headers['content-type'])) {
      this.receiveStreamed(x, route.streamBody);
      return;
    }
    collectBody(req, Math.max(route.maxBodyBytes ?? 0, this.s.maxBodyBytes), this.bodyRead, x);
  }

  /** The body read whole (one function for every request: the exchange comes as the context). */
  private readonly bodyRead = (body: BodyRead, x: Exchange): void => {
    try {
      if (!body.ok) {
        if (body.reason === 'aborted') return;
        discardRest(x.req, x.res);
        this.reject(
          x,
          fromEngine({
            code: 'err:service:bad_request:request_body_too_large',
            detail: `The request body is larger than ${Math.max(x.route.maxBodyBytes ?? 0, this.s.maxBodyBytes)} bytes.`,
          }),
        );
        return;
      }
      this.received(x, body.text);
    } catch (error) {
      this.fail(x.req, x.res, x.requestId, error);
    }
  };

  /**
   * A body read as it arrives (route.streamBody, restore-body.ts) comes with the schema's verdict.
   * Only admin routes stream, and they are never faulted: straight to execute.
   */
  private receiveStreamed(x: Exchange, streamBody: NonNullable<Route['streamBody']>): void {
    const limit = this.s.restoreMaxBodyBytes;
    streamBody(x.req, limit, this.s.sha256)
      .then((body) => {
        if (body.ok) {
          this.execute(x, '', body.checked);
        } else if (body.reason === 'syntax') {
          this.reject(
            x,
            invalidInput(`The request body is not valid JSON: ${body.problem}.`, [{ location: 'body', message: `is not valid JSON: ${body.problem}` }]),
          );
        } else if (body.reason !== 'aborted') {
          discardRest(x.req, x.res);
          this.reject(
            x,
            fromEngine({
              code: 'err:service:bad_request:request_body_too_large',
              detail: `The request body is larger than ${limit} bytes (the server's restoreMaxBodyBytes).`,
            }),
          );
        }
      })
      .catch((error: unknown) => this.fail(x.req, x.res, x.requestId, error));
  }

  /** Content type, JSON, Authorization, schema; then the state runs it (or refuses it). */
  private execute(x: Exchange, bodyText: string, streamed?: StreamedInput): void {
    const { req } = x;
    // A streamed body was parsed and judged as it arrived.
    const input = streamed === undefined ? requestInput(x, req.headers['content-type'], bodyText) : undefined;
    if (input instanceof RefusedInput) {
      this.reject(x, input.problem);
      return;
    }
    const auth = bearer(req.headers.authorization);
    if (!auth.ok) {
      this.reject(x, auth.problem);
      return;
    }
    const call = engineCall(x.route, auth.token, input, streamed);
    const seq = seqHeader(req.headers['x-keysim-seq']);
    if (seq !== undefined) call.seq = seq;
    if (x.region !== undefined) call.region = x.region;
    const ran = this.s.backend.run(call);
    if (ran instanceof Promise) ran.then((outcome) => this.answer(x, outcome)).catch((error: unknown) => this.fail(req, x.res, x.requestId, error));
    else this.answer(x, ran);
  }

  private answer(x: Exchange, outcome: EngineOutcome): void {
    if (!outcome.ok) {
      this.reject(x, outcome.problem);
      return;
    }
    if (x.route.streamReply === true) {
      const headers: Record<string, string> = { 'x-request-id': x.requestId };
      if (x.region !== undefined) headers[REGION_HEADER] = String(x.region);
      sendJsonStream(x.res, 200, headers, replyBody(x.route, x.requestId, outcome.reply)).catch((error: unknown) =>
        this.fail(x.req, x.res, x.requestId, error),
      );
    } else {
      this.sendReply(x.res, x.route, x.requestId, outcome.reply);
    }
  }

  // From the route on, errors follow the route's conventions (e.g. problem+json on deleteIdentity).
  private reject(x: Exchange, problem: Problem, headers?: Record<string, string>): void {
    this.sendProblem(x.res, x.style, x.requestId, problem, headers, x.route);
  }

  private sendProblem(res: ServerResponse, style: RouteStyle, requestId: string, problem: Problem, headers?: Record<string, string>, route?: Route): void {
    send(
      res,
      requestId,
      problem.status,
      problemBody(style, requestId, problem, this.s.errorsUrl),
      headers,
      style === 'v2' && route?.problemJsonErrors === true,
    );
  }

  private sendReply(res: ServerResponse, route: Route, requestId: string, reply: Reply): void {
    if (this.s.validateResponses && route.response !== undefined) {
      const checked = validate(route.response, reply.data, 'response.data');
      if (!checked.ok) throw new Error(`response of ${route.path} does not match its schema: ${JSON.stringify(checked.errors)}`);
    }
    send(res, requestId, 200, replyText(route, requestId, reply));
  }

  /** A bug, not bad input: log it (never secrets: only the path and the error) and answer 500. */
  private fail(req: IncomingMessage, res: ServerResponse, requestId: string, error: unknown): void {
    this.s.log(
      `keysim: unexpected error on ${req.method ?? '?'} ${(req.url ?? '').split('?')[0] ?? ''} (${requestId}): ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
    );
    if (res.headersSent) {
      res.destroy();
      return;
    }
    this.sendProblem(
      res,
      styleOf(req.url ?? ''),
      requestId,
      fromEngine({ code: 'err:service:application:unexpected_error', detail: 'The simulator failed unexpectedly; the error is in its log.' }),
    );
  }
}
