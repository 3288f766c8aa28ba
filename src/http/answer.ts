/**
 * Writing answers: status, headers and a JSON text in one `writeHead` and one `end`. What every
 * answer of the server goes through (a request node:http cannot parse: client-error.ts).
 */
import type { ServerResponse } from 'node:http';

/** Where a worker's server keeps its `x-keysim-worker` value on each response (none: no header). */
export const WORKER_HEADER = Symbol('keysim worker');
/** Where the production profile keeps the region a request runs in (regions.ts), for `x-keysim-region`. */
export const REGION_OF = Symbol('keysim region');
export type WorkerResponse = ServerResponse & { [WORKER_HEADER]?: string; [REGION_OF]?: string };

const JSON_TYPE = 'application/json';
const PROBLEM_TYPE = 'application/problem+json';

/**
 * Writes a JSON answer with all its headers at once (cheaper than setHeader, then writeHead).
 * `body`: the JSON text, or a value to serialise.
 */
export function send(res: ServerResponse, requestId: string, status: number, body: unknown, extraHeaders?: Record<string, string>, problemJson = false): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  const worker = (res as WorkerResponse)[WORKER_HEADER];
  const region = (res as WorkerResponse)[REGION_OF];
  if (extraHeaders === undefined && worker === undefined && region === undefined) {
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
  if (region !== undefined) headers['x-keysim-region'] = region;
  res.writeHead(status, headers);
  res.end(text);
}
