/**
 * The options of the simulator's HTTP server (server.ts) and their defaults: the body limits, the
 * answers' checks, write coalescing, and the keep-alive timeout that decides whether the server
 * outlives a reverse proxy's idle upstream connections.
 */
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
  /**
   * Hand the small answers a connection writes during one turn of the event loop to the kernel
   * together (write-coalescing.ts); default true. False writes each answer as node:http does.
   */
  coalesceWrites?: boolean;
  /**
   * How long an idle keep-alive connection is kept open, ms; default 75 s
   * (DEFAULT_KEEP_ALIVE_TIMEOUT_MS). Answers say it in `Keep-Alive: timeout=N`.
   */
  keepAliveTimeoutMs?: number;
  /** Where unexpected errors are logged; default stderr. */
  log?: (line: string) => void;
  /**
   * Set in the HTTP workers of `--workers N` (cluster.ts): every answer names its worker in an
   * `x-keysim-worker` header, so that a client (and the tests) can see the load was spread.
   */
  workerId?: number;
}

/**
 * The idle keep-alive timeout, ms. A reverse proxy reuses its upstream connections for as long as
 * its own idle timeout (nginx `keepalive_timeout` 60 s, an AWS ALB 60 s); a server that closes
 * an idle connection first races the proxy's next request on it, and the proxy answers that
 * request 502. Node's default (5 s) loses that race; 75 s outlives those proxies.
 */
export const DEFAULT_KEEP_ALIVE_TIMEOUT_MS = 75_000;
/** The longest keep-alive timeout accepted, ms: an hour. */
export const MAX_KEEP_ALIVE_TIMEOUT_MS = 3_600_000;
/** node:http's own request timeout (the whole request), kept unless the headers timeout needs more. */
const NODE_REQUEST_TIMEOUT_MS = 300_000;

/**
 * node:http's header and request timeouts for a keep-alive timeout. The headers timeout is kept
 * above the keep-alive timeout, as is advised for node:http behind a load balancer, so that a
 * request arriving on a connection at the end of its idle time is not cut off by the shorter of
 * the two; node:http requires the request timeout above both.
 */
export function requestTimeouts(keepAliveMs: number): { headersTimeout: number; requestTimeout: number } {
  const headersTimeout = keepAliveMs + 1_000;
  return { headersTimeout, requestTimeout: Math.max(NODE_REQUEST_TIMEOUT_MS, headersTimeout) };
}
