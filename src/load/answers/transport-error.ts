import type { TransportErrorKind } from '../../report/model.js';

const TIMEOUT = new Set(['KEYSIM_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT', 'ETIMEDOUT']);
const RESET = new Set(['KEYSIM_CONNECTION_CLOSED', 'ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED']);

/**
 * Sorts a failed request into timeout / reset / refused / other by its error's code (and its
 * causes'): keysim's HTTP/1.1 client (http1/errors.ts; the load and set-up clients alike),
 * autocannon and the operating system.
 */
export function classifyTransportError(error: unknown): TransportErrorKind {
  const codes: string[] = [];
  let e: unknown = error;
  for (let depth = 0; depth < 4 && typeof e === 'object' && e !== null; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') codes.push(code);
    e = (e as { cause?: unknown }).cause;
  }
  if (codes.some((c) => TIMEOUT.has(c))) return 'timeout';
  if (codes.some((c) => c === 'ECONNREFUSED')) return 'refused';
  if (codes.some((c) => RESET.has(c))) return 'reset';
  return 'other';
}
