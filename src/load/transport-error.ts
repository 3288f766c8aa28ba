import type { TransportErrorKind } from '../report/model.js';

/** Sorts a failed request into timeout / reset / refused / other by undici's and the OS's codes. */
export function classifyTransportError(error: unknown): TransportErrorKind {
  const codes: string[] = [];
  let e: unknown = error;
  for (let depth = 0; depth < 4 && typeof e === 'object' && e !== null; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') codes.push(code);
    e = (e as { cause?: unknown }).cause;
  }
  if (codes.some((c) => c === 'UND_ERR_HEADERS_TIMEOUT' || c === 'UND_ERR_BODY_TIMEOUT' || c === 'UND_ERR_CONNECT_TIMEOUT' || c === 'ETIMEDOUT')) return 'timeout';
  if (codes.some((c) => c === 'ECONNREFUSED')) return 'refused';
  if (codes.some((c) => c === 'ECONNRESET' || c === 'UND_ERR_SOCKET' || c === 'EPIPE' || c === 'UND_ERR_CLOSED')) return 'reset';
  return 'other';
}
