/**
 * Writing answers: status, headers and a JSON text in one `writeHead` and one `end`, and the
 * answer to a request node:http could not parse. What every answer of the server goes through.
 */
import type { ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { errorTypeUrl } from './problems.js';

/** Where a worker's server keeps its `x-keysim-worker` value on each response (none: no header). */
export const WORKER_HEADER = Symbol('keysim worker');
export type WorkerResponse = ServerResponse & { [WORKER_HEADER]?: string };

const JSON_TYPE = 'application/json';
const PROBLEM_TYPE = 'application/problem+json';

/**
 * Writes a JSON answer with all its headers at once (cheaper than setHeader, then writeHead).
 * `body`: the JSON text, or a value to serialise.
 */
export function send(res: ServerResponse, requestId: string, status: number, body: unknown, extraHeaders?: Record<string, string>, problemJson = false): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  const worker = (res as WorkerResponse)[WORKER_HEADER];
  if (extraHeaders === undefined && worker === undefined) {
    // The common answer: a literal of three headers, one shape for every call.
    res.writeHead(status, {
      'content-type': problemJson || status === 429 ? PROBLEM_TYPE : JSON_TYPE,
      'content-length': Buffer.byteLength(text),
      'x-request-id': requestId,
    });
    res.end(text);
    return;
  }
  const headers: Record<string, string | number> = {
    'content-type': problemJson || status === 429 ? PROBLEM_TYPE : JSON_TYPE,
    'content-length': Buffer.byteLength(text),
    'x-request-id': requestId,
  };
  if (extraHeaders !== undefined) Object.assign(headers, extraHeaders);
  if (worker !== undefined) headers['x-keysim-worker'] = worker;
  res.writeHead(status, headers);
  res.end(text);
}

/**
 * A request node:http cannot parse (malformed, or headers beyond its size limit): the error
 * envelope with a request id instead of a dropped socket or an empty 400.
 */
export function answerClientError(error: NodeJS.ErrnoException, socket: Duplex, requestId: string, errorsUrl: string): void {
  const tooLarge = error.code === 'HPE_HEADER_OVERFLOW';
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
}
