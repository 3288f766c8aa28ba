/**
 * The simulator's HTTP binding on node:http. One pipeline for every route (request-pipeline.ts):
 * route (404/405) → body within the limit (413) → injected transport faults (latency, dropped
 * connection, 500; service routes only) → JSON content type and syntax (400) →
 * Authorization header (400) → schema (400, every violation) → engine → envelope.
 * Before all that, a server bound to loopback refuses a `Host` it does not serve (421), and the
 * admin surface refuses everyone but the operator (401/403) before it reads anything else.
 * Route handlers never build error bodies: an engine error code maps to status and title in
 * problems.ts, and a thrown exception (a bug) becomes a 500 without crashing the server.
 */
import { createHash } from 'node:crypto';
import { type Server, createServer } from 'node:http';
import { DEFAULT_MAX_BODY_BYTES } from './body.js';
import { DEFAULT_ERRORS_URL } from './problems.js';
import { type EngineBackend, localBackend } from './engine-backend.js';
import { openApiDocument } from './openapi.js';
import type { RouteContext } from './route.js';
import { ROUTES, routeTable } from './routes.js';
import { answerClientError } from './client-error.js';
import { requestIdSource } from './request-id.js';
import { RESTORE_STREAM_MAX_BODY_BYTES } from './restore-body.js';
import { coalesceWrites } from './write-coalescing.js';
import { DEFAULT_KEEP_ALIVE_TIMEOUT_MS, type ServerOptions, requestTimeouts } from './server-options.js';
import { type PipelineSettings, RequestPipeline } from './request-pipeline.js';
import { RegionPicker } from './regions.js';

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

/** The options with their defaults, as the pipeline uses them. */
function pipelineSettings(state: RouteContext | EngineBackend, options: ServerOptions, openApiText: string): PipelineSettings {
  const sha256 = options.sha256 ?? ((text: string) => createHash('sha256').update(text).digest('base64url'));
  const local = 'engine' in state;
  return {
    backend: local ? localBackend(state, sha256) : state,
    local,
    sha256,
    maxBodyBytes: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
    restoreMaxBodyBytes: options.restoreMaxBodyBytes ?? RESTORE_STREAM_MAX_BODY_BYTES,
    errorsUrl: options.errorsUrl ?? DEFAULT_ERRORS_URL,
    validateResponses: options.validateResponses === true,
    log: options.log ?? ((line: string) => process.stderr.write(`${line}\n`)),
    table: routeTable(ROUTES),
    openApiText,
    nextRequestId: requestIdSource(),
    workerHeader: options.workerId === undefined ? undefined : String(options.workerId),
    regions: local && state.regions !== undefined ? new RegionPicker(state.regions.profile.regionCount) : undefined,
  };
}

/**
 * `state`: the state itself (a `RouteContext`, answered in this process) or a backend holding it
 * (engine-backend.ts; a worker's link to the engine owner).
 */
export function createSimulatorServer(state: RouteContext | EngineBackend, options: ServerOptions = {}): SimulatorServer {
  const openApi = openApiDocument(ROUTES, options.version ?? '0.0.0');
  const settings = pipelineSettings(state, options, JSON.stringify(openApi));
  const pipeline = new RequestPipeline(settings);
  const keepAliveMs = options.keepAliveTimeoutMs ?? DEFAULT_KEEP_ALIVE_TIMEOUT_MS;
  const server = createServer(requestTimeouts(keepAliveMs), pipeline.onRequest);
  server.keepAliveTimeout = keepAliveMs;
  if (options.coalesceWrites !== false) server.on('connection', coalesceWrites);
  server.on('clientError', (error: NodeJS.ErrnoException, socket) => {
    if (!socket.writable) {
      socket.destroy();
      return;
    }
    answerClientError(error, socket, settings.nextRequestId(), settings.errorsUrl);
  });
  return {
    server,
    openApi,
    setAllowedHosts(hosts) {
      pipeline.allowedHosts = hosts === null ? null : new Set(hosts.map((h) => h.toLowerCase()));
    },
  };
}
