/**
 * The failures of the load generator's HTTP/1.1 client, each with a `code` that
 * classifyTransportError (transport-error.ts) sorts into the report's kinds. Errors from the
 * operating system (ECONNREFUSED, ECONNRESET, …) come through unchanged with their own codes.
 */

/** The server's bytes are not an HTTP/1.1 response the client can read ('other'). */
export class HttpProtocolError extends Error {
  readonly code = 'KEYSIM_BAD_RESPONSE';

  constructor(what: string) {
    super(`The target's answer could not be read: ${what}. Is the target an HTTP/1.1 server?`);
    this.name = 'HttpProtocolError';
  }
}

/** The connection closed with requests on it unanswered ('reset'). */
export class ConnectionClosedError extends Error {
  readonly code = 'KEYSIM_CONNECTION_CLOSED';

  constructor(why: string) {
    super(`The connection closed before the answer came: ${why}.`);
    this.name = 'ConnectionClosedError';
  }
}

/** No answer (or no progress of one) for the request timeout, or no connection in time ('timeout'). */
export class RequestTimeoutError extends Error {
  readonly code = 'KEYSIM_TIMEOUT';

  constructor(what: string, timeoutMs: number) {
    super(`${what} within ${timeoutMs} ms (the run's --timeout); the connection was closed.`);
    this.name = 'RequestTimeoutError';
  }
}

/** The client itself gave the connection up (a stop past its grace, or close()) ('other'). */
export class ConnectionDestroyedError extends Error {
  readonly code = 'KEYSIM_DESTROYED';

  constructor() {
    super('The request was abandoned: the load generator closed its connections (the run was stopped or ended).');
    this.name = 'ConnectionDestroyedError';
  }
}
