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
import { createHash, randomBytes } from 'node:crypto';
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import { DEFAULT_MAX_BODY_BYTES, discardRest, isJsonContentType, parseJsonBody, readBody } from './body.js';
import { DEFAULT_ERRORS_URL, errorTypeUrl } from './problems.js';
import { type Problem, fromEngine, invalidInput, problemBody, replyBody } from './envelope.js';
import { type EngineBackend, type EngineOutcome, localBackend } from './engine-backend.js';
import { seqHeader } from './journal.js';
import { openApiDocument } from './openapi.js';
import type { Reply, Route, RouteContext, RouteStyle } from './route.js';
import { ROUTES, routeTable } from './routes.js';
import { SERVICE_ROUTES, operationName } from './operations.js';
import { type FaultDecision, faultDelay } from './faults.js';
import { hostAllowed } from './host-check.js';
import { validate } from './schema.js';
import { sendJsonStream } from './json-stream.js';
import { RESTORE_STREAM_MAX_BODY_BYTES } from './restore-body.js';
import type { FieldError } from '../engine/index.js';

export interface ServerOptions {
  /** SHA-256, to key the API rate limit by root key without keeping it; default node:crypto's. */
  sha256?: (text: string) => string;
  /** Largest accepted body; default 10 MiB. */
  maxBodyBytes?: number;
  /**
   * Largest `/_sim/restore` body, read as it arrives (restore-body.ts); default 1 GiB. With
   * `--workers` a restore body is read whole, up to 256 MiB.
   */
  restoreMaxBodyBytes?: number;
  /** Base of the error `type` URLs. */
  errorsUrl?: string;
  /** Check every answer against its response schema (tests turn this on; a mismatch is a 500). */
  validateResponses?: boolean;
  /** Version shown in the OpenAPI document. */
  version?: string;
  /** Where unexpected errors are logged; default stderr. */
  log?: (line: string) => void;
  /**
   * Set in the HTTP workers of `--workers N` (cluster.ts): every answer names its worker in an
   * `x-keysim-worker` header, so that a client (and the tests) can see the load was spread.
   */
  workerId?: number;
}

function styleOf(path: string): RouteStyle {
  return path.startsWith('/v1/') ? 'v1' : 'v2';
}

/** Writes a JSON answer with all its headers at once (cheaper than setHeader, then writeHead). */
function send(res: ServerResponse, requestId: string, status: number, body: unknown, extraHeaders?: Record<string, string>, problemJson = false): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  const headers: Record<string, string | number> = {
    'content-type': problemJson || status === 429 ? 'application/problem+json' : 'application/json',
    'content-length': Buffer.byteLength(text),
    'x-request-id': requestId,
  };
  if (extraHeaders !== undefined) Object.assign(headers, extraHeaders);
  const worker = (res as WorkerResponse)[WORKER_HEADER];
  if (worker !== undefined) headers['x-keysim-worker'] = worker;
  res.writeHead(status, headers);
  res.end(text);
}

/** Where a worker's server keeps its `x-keysim-worker` value on each response (none: no header). */
const WORKER_HEADER = Symbol('keysim worker');
type WorkerResponse = ServerResponse & { [WORKER_HEADER]?: string };

/** Parses `Authorization`: absent → undefined; `Bearer <token>` → the token; anything else → a problem. */
function bearer(header: string | undefined): { ok: true; token: string | undefined } | { ok: false; problem: Problem } {
  if (header === undefined) return { ok: true, token: undefined };
  // The scheme is case-insensitive (RFC 9110 §11.1).
  const match = /^Bearer +(\S+) *$/i.exec(header);
  if (match === null) {
    return {
      ok: false,
      problem: fromEngine({
        code: 'err:service:authentication:malformed',
        detail: 'The Authorization header must be "Bearer <ROOT_KEY>".',
      }),
    };
  }
  return { ok: true, token: match[1] };
}

/**
 * Request ids `req_<random per server><counter>`: unique per server run and unguessable across
 * runs, at the cost of a counter increment (a UUID per request was a measurable share of the
 * simulator's CPU per request).
 */
function requestIdSource(): () => string {
  const prefix = `req_${randomBytes(8).toString('hex')}`;
  let counter = 0;
  return () => `${prefix}${(counter++).toString(36).padStart(6, '0')}`;
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
  // Only the service's own routes can be faulted; the admin surface never is.
  const faultable = new Map<Route, string>(SERVICE_ROUTES.map((route) => [route, operationName(route.path)]));

  function sendProblem(res: ServerResponse, style: RouteStyle, requestId: string, problem: Problem, headers: Record<string, string> = {}, route?: Route): void {
    send(res, requestId, problem.status, problemBody(style, requestId, problem, errorsUrl), headers, style === 'v2' && route?.problemJsonErrors === true);
  }

  function sendReply(res: ServerResponse, route: Route, requestId: string, reply: Reply): void {
    if (options.validateResponses === true && route.response !== undefined) {
      const checked = validate(route.response, reply.data, 'response.data');
      if (!checked.ok) throw new Error(`response of ${route.path} does not match its schema: ${JSON.stringify(checked.errors)}`);
    }
    send(res, requestId, 200, replyBody(route, requestId, reply));
  }

  let allowedHosts: ReadonlySet<string> | null = null;

  async function handle(req: IncomingMessage, res: ServerResponse, requestId: string): Promise<void> {
    const rawUrl = req.url ?? '/';
    const queryAt = rawUrl.indexOf('?');
    const path = queryAt === -1 ? rawUrl : rawUrl.slice(0, queryAt);
    const method = req.method ?? 'GET';

    // DNS rebinding: a web page whose name resolves to this machine reaches a loopback server with
    // its own name as Host. Nothing here answers a name it does not serve.
    if (allowedHosts !== null && !hostAllowed(allowedHosts, req.headers.host)) {
      req.resume();
      sendProblem(res, styleOf(path), requestId, {
        status: 421,
        title: 'Misdirected Request',
        identifier: 'err:service:bad_request:host_not_allowed',
        detail: `This simulator listens on loopback and answers only the Host headers ${[...allowedHosts].join(', ')}; send one of them (a request naming another host is refused, as a DNS-rebinding page would send).`,
      });
      return;
    }

    if (path === '/_sim/health' || path === '/openapi.json') {
      req.resume();
      if (method !== 'GET' && method !== 'HEAD') {
        sendProblem(
          res,
          'v2',
          requestId,
          { status: 405, title: 'Method Not Allowed', identifier: 'err:service:application:method_not_allowed', detail: `${path} accepts GET, not ${method}.` },
          { allow: 'GET, HEAD' },
        );
      } else if (path === '/_sim/health') {
        const now = backend.clockNow();
        send(res, requestId, 200, { status: 'ok', clock: now instanceof Promise ? await now : now });
      } else {
        send(res, requestId, 200, openApiText);
      }
      return;
    }
    const style = styleOf(path);
    const candidates = table.get(path);
    if (candidates === undefined) {
      req.resume();
      sendProblem(res, style, requestId, {
        status: 404,
        title: 'Not Found',
        identifier: 'err:service:application:route_not_found',
        detail: `No operation at ${method} ${path.slice(0, 200)}. The operations are listed in GET /openapi.json.`,
      });
      return;
    }
    const route = candidates.find((r) => r.method === method);
    if (route === undefined) {
      req.resume();
      const allowed = candidates.map((r) => r.method).join(', ');
      sendProblem(
        res,
        style,
        requestId,
        { status: 405, title: 'Method Not Allowed', identifier: 'err:service:application:method_not_allowed', detail: `${path} accepts ${allowed}, not ${method}.` },
        { allow: allowed },
      );
      return;
    }

    // From here on errors follow the route's conventions (e.g. problem+json on deleteIdentity).
    const reject = (problem: Problem, headers: Record<string, string> = {}) => sendProblem(res, style, requestId, problem, headers, route);

    // The admin surface answers the operator only, before it reads anything the caller sent
    // (a refused caller's body is not read: the connection closes after the answer).
    if (path.startsWith('/_sim/')) {
      const auth = bearer(req.headers.authorization);
      const operator = auth.ok ? backend.authorizeOperator(auth.token) : undefined;
      const problem = !auth.ok ? auth.problem : operator instanceof Promise ? await operator : operator;
      if (problem !== undefined) {
        res.on('finish', () => req.destroy());
        reject(problem, { connection: 'close' });
        return;
      }
    }

    let bodyText = '';
    // A body read as it arrived comes with the schema's verdict (route.streamBody, restore-body.ts).
    let streamed: { ok: true; value: unknown } | { ok: false; errors: FieldError[] } | undefined;
    if (route.input === 'query') {
      req.resume();
    } else if (route.streamBody !== undefined && local && isJsonContentType(req.headers['content-type'])) {
      const body = await route.streamBody(req, restoreMaxBodyBytes, sha256);
      if (!body.ok) {
        if (body.reason === 'aborted') return;
        if (body.reason !== 'syntax') {
          discardRest(req, res);
          reject(fromEngine({ code: 'err:service:bad_request:request_body_too_large', detail: `The request body is larger than ${restoreMaxBodyBytes} bytes (the server's restoreMaxBodyBytes).` }));
        } else {
          reject(invalidInput(`The request body is not valid JSON: ${body.problem}.`, [{ location: 'body', message: `is not valid JSON: ${body.problem}` }]));
        }
        return;
      }
      streamed = body.checked;
    } else {
      const bodyLimit = Math.max(route.maxBodyBytes ?? 0, maxBodyBytes);
      const body = await readBody(req, bodyLimit);
      if (!body.ok) {
        if (body.reason === 'aborted') return;
        discardRest(req, res);
        reject(fromEngine({ code: 'err:service:bad_request:request_body_too_large', detail: `The request body is larger than ${bodyLimit} bytes.` }));
        return;
      }
      bodyText = body.text;
    }

    // Injected faults (faults.ts): wait, then drop the connection or answer 500 without executing.
    if (backend.faultsActive) {
      const operation = faultable.get(route);
      const decided = operation === undefined ? null : backend.decideFault(operation);
      const decision: FaultDecision | null = decided instanceof Promise ? await decided : decided;
      if (decision !== null) {
        if (decision.delayMs > 0) await faultDelay(decision.delayMs);
        if (decision.outcome === 'drop') {
          res.destroy();
          return;
        }
        if (decision.outcome === 'error') {
          reject(fromEngine({ code: 'err:service:application:unexpected_error', detail: 'An injected fault (errorRate, /_sim/faults.set): the request was not executed.' }));
          return;
        }
      }
    }

    let input: unknown;
    if (streamed !== undefined) {
      // Parsed and judged as it arrived.
    } else if (route.input === 'query') {
      input = Object.fromEntries(new URLSearchParams(queryAt === -1 ? '' : rawUrl.slice(queryAt + 1)));
    } else {
      const adminEmpty = path.startsWith('/_sim/') && bodyText.trim() === '';
      if (adminEmpty) {
        input = {};
      } else {
        if (!isJsonContentType(req.headers['content-type'])) {
          reject(invalidInput('The request body must be JSON sent with "Content-Type: application/json".', [
              { location: 'header.content-type', message: req.headers['content-type'] === undefined ? 'is missing: send application/json' : 'must be application/json' },
            ]));
          return;
        }
        const parsed = parseJsonBody(bodyText);
        if (!parsed.ok) {
          reject(invalidInput(`The request body is not valid JSON: ${parsed.problem}.`, [{ location: 'body', message: `is not valid JSON: ${parsed.problem}` }]));
          return;
        }
        input = parsed.value;
      }
    }

    const auth = bearer(req.headers.authorization);
    if (!auth.ok) {
      reject(auth.problem);
      return;
    }
    // The API rate limit counts a request before its root key or schema is judged (engine-backend.ts).
    let rejection: Problem | undefined;
    let checkedValue: unknown;
    if (route.auth === 'required' && auth.token === undefined) {
      rejection = fromEngine({ code: 'err:service:authentication:missing', detail: 'Authentication is required: send your root key as "Authorization: Bearer <ROOT_KEY>".' });
    } else {
      const checked = streamed ?? validate(route.request, input, route.input === 'query' ? 'query' : 'body');
      if (checked.ok) {
        checkedValue = checked.value;
      } else {
        const first = checked.errors[0];
        const summary = first === undefined ? 'The request is not valid.' : `${first.location} ${first.message}${checked.errors.length > 1 ? ` (and ${checked.errors.length - 1} more)` : ''}.`;
        rejection = invalidInput(summary, checked.errors);
      }
    }

    const seq = seqHeader(req.headers['x-keysim-seq']);
    const ran = backend.run({ route, token: auth.token, input: checkedValue, ...(rejection === undefined ? {} : { rejection }), ...(seq === undefined ? {} : { seq }) });
    const outcome: EngineOutcome = ran instanceof Promise ? await ran : ran;
    if (!outcome.ok) {
      reject(outcome.problem);
      return;
    }
    if (route.streamReply === true) await sendJsonStream(res, 200, { 'x-request-id': requestId }, replyBody(route, requestId, outcome.reply));
    else sendReply(res, route, requestId, outcome.reply);
  }

  const server = createServer((req, res) => {
    const requestId = nextRequestId();
    if (workerHeader !== undefined) (res as WorkerResponse)[WORKER_HEADER] = workerHeader;
    handle(req, res, requestId).catch((error: unknown) => {
      // A bug, not bad input: log it (never secrets: only the path and the error) and answer 500.
      log(`keysim: unexpected error on ${req.method ?? '?'} ${(req.url ?? '').split('?')[0] ?? ''} (${requestId}): ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
      if (res.headersSent) {
        res.destroy();
        return;
      }
      sendProblem(res, styleOf(req.url ?? ''), requestId, fromEngine({ code: 'err:service:application:unexpected_error', detail: 'The simulator failed unexpectedly; the error is in its log.' }));
    });
  });
  // A request node:http cannot parse (malformed, or headers beyond its size limit): answer the
  // error envelope with a request id instead of dropping the socket or sending an empty 400.
  server.on('clientError', (error: NodeJS.ErrnoException, socket) => {
    if (!socket.writable) {
      socket.destroy();
      return;
    }
    const tooLarge = error.code === 'HPE_HEADER_OVERFLOW';
    const requestId = nextRequestId();
    const status = tooLarge ? 431 : 400;
    const title = tooLarge ? 'Request Header Fields Too Large' : 'Bad Request';
    const body = JSON.stringify({
      meta: { requestId },
      error: {
        title,
        detail: tooLarge ? 'The request line or headers are larger than the server accepts.' : 'The request could not be parsed as HTTP.',
        status,
        type: errorTypeUrl(tooLarge ? 'err:service:bad_request:request_headers_too_large' : 'err:service:application:invalid_input', errorsUrl),
        errors: [],
      },
    });
    socket.end(
      `HTTP/1.1 ${status} ${title}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nx-request-id: ${requestId}\r\nconnection: close\r\n\r\n${body}`,
    );
  });
  return {
    server,
    openApi,
    setAllowedHosts(hosts) {
      allowedHosts = hosts === null ? null : new Set(hosts.map((h) => h.toLowerCase()));
    },
  };
}
