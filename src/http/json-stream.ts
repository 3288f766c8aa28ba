/**
 * Sends a large JSON answer in pieces instead of one string. A snapshot of a million keys is
 * hundreds of MB of JSON: as one string it can pass V8's limit on a string's length (about
 * 512 MiB, a RangeError) and it doubles the memory of the answer. Here the top levels of the
 * value are walked, each record is serialised on its own, and the text goes out in chunks of
 * about a megabyte, waiting for the socket to drain between them.
 *
 * The text is exactly JSON.stringify(value) for plain JSON data (objects, arrays, strings,
 * numbers, booleans, null; undefined properties left out, as JSON.stringify does).
 */
import type { ServerResponse } from 'node:http';

const CHUNK_CHARS = 1 << 20;
/** Objects and arrays this many levels down are serialised whole (records sit at level 3: envelope → data → list → record). */
const WALK_DEPTH = 3;

/** The JSON text of `value` in pieces whose concatenation is JSON.stringify(value). */
export function* jsonPieces(value: unknown, depth = 0): Generator<string> {
  if (depth >= WALK_DEPTH || typeof value !== 'object' || value === null || typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    yield JSON.stringify(value) ?? 'null';
    return;
  }
  if (Array.isArray(value)) {
    yield '[';
    for (let i = 0; i < value.length; i++) {
      if (i > 0) yield ',';
      yield* jsonPieces(value[i], depth + 1);
    }
    yield ']';
    return;
  }
  yield '{';
  let first = true;
  for (const [key, item] of Object.entries(value)) {
    if (item === undefined || typeof item === 'function' || typeof item === 'symbol') continue;
    yield `${first ? '' : ','}${JSON.stringify(key)}:`;
    first = false;
    yield* jsonPieces(item, depth + 1);
  }
  yield '}';
}

function drainedOrClosed(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

/**
 * Writes `value` as a JSON answer with chunked transfer encoding. Resolves once the answer is
 * out, or when the client went away (nothing more is written then).
 */
export async function sendJsonStream(res: ServerResponse, status: number, headers: Record<string, string>, value: unknown): Promise<void> {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  let buffered = '';
  for (const piece of jsonPieces(value)) {
    buffered += piece;
    if (buffered.length < CHUNK_CHARS) continue;
    if (res.destroyed) return;
    const drained = res.write(buffered);
    buffered = '';
    if (!drained) await drainedOrClosed(res);
  }
  if (!res.destroyed) res.end(buffered);
}
