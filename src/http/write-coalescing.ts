/**
 * Pipelined answers in one write. node:http writes each answer to its socket as soon as the one
 * before it has been handed to the kernel, so ten pipelined requests cost ten `writev` system
 * calls, and on loopback each of them also wakes the client. Here the small writes a connection
 * makes during one turn of the event loop are kept and handed to the kernel together, once, at
 * the end of that turn (a `setImmediate` shared by every connection), so a batch of pipelined
 * answers costs one `writev` (docs/benchmarks.md#http-simulator).
 *
 * A kept write is reported done at once, so node:http goes on to the next answer in the same turn
 * instead of waiting for the kernel; the bytes and their order are unchanged. What keeps that
 * honest:
 * - only small writes are kept, and only while the connection has nothing in flight; a large or
 *   blocked write first flushes what is kept and then goes the normal way, with the stream's own
 *   back-pressure (a streamed snapshot is never held in memory here). The in-flight rule is what
 *   stops a client that pipelines without reading: its answers then wait in the stream, node:http
 *   sees them wait and stops parsing;
 * - ending or destroying the connection hands what is kept to the kernel first, so an answer is
 *   never cut off by the close that follows it (a keep-alive or socket timeout, server.close(),
 *   a refused caller's close all go through `_destroy` or `_final`);
 * - a failed or throwing write destroys the connection with its error, as a failed write would.
 * Kept bytes are not in `writableLength`/`bufferSize` (they count as written): at most 64 KiB a
 * connection, until the end of the turn. One difference stays: a `destroy()` right after an
 * answer's 'finish' closes the handle while the kept batch may still be on its way to the kernel,
 * which happens only if the kernel's send buffer cannot take the batch whole at that moment
 * (node:http alone would have waited for the write before 'finish'). In the `--workers` processes
 * each worker's server sets this up on the connections the owner hands it ('connection').
 */
import { Socket } from 'node:net';

/**
 * Writes up to this size are kept for the end of the turn; larger ones go at once. Sizes are a
 * chunk's `.length`: a string's UTF-16 length under-counts its UTF-8 bytes by up to 3× (never a
 * latin1 one's, node:http's headers), which leaves the bounds bounds, and counting the bytes
 * would cost a pass over every answer.
 */
const SMALL_WRITE_BYTES = 16 * 1024;
/** The most one connection keeps before it hands the lot to the kernel. */
const MAX_KEPT_BYTES = 64 * 1024;

type Callback = (error?: Error | null) => void;
interface Entry {
  chunk: Buffer | string;
  encoding: BufferEncoding;
}

/** The stream methods net.Socket implements, which the per-connection overrides wrap. */
interface SocketInternals {
  _write(chunk: Buffer | string, encoding: BufferEncoding, callback: Callback): void;
  _writev(entries: Entry[], callback: Callback): void;
  _final(callback: Callback): void;
  _destroy(error: Error | null, callback: Callback): void;
}
type InternalSocket = Socket & SocketInternals;

const NET = Socket.prototype as unknown as SocketInternals;

/** What one connection keeps. */
interface Kept {
  socket: InternalSocket;
  entries: Entry[];
  bytes: number;
  /** Real writes handed to the kernel and not yet completed. */
  inFlight: number;
  scheduled: boolean;
}

/** The most one connection has kept at once, for the tests: what this module holds beyond the stream's accounting. */
export const keptHighWater = { bytes: 0 };

/** Connections with something kept, flushed together at the end of the turn. */
const due: Kept[] = [];
let immediateSet = false;

function flushDue(): void {
  immediateSet = false;
  // flush never throws (a write that throws destroys its own connection), so every one due goes.
  for (let i = 0; i < due.length; i++) flush(due[i] as Kept);
  due.length = 0;
}

function schedule(kept: Kept): void {
  if (kept.scheduled) return;
  kept.scheduled = true;
  due.push(kept);
  if (!immediateSet) {
    immediateSet = true;
    setImmediate(flushDue);
  }
}

/** Hands what is kept to the kernel in one write. */
function flush(kept: Kept): void {
  kept.scheduled = false;
  const entries = kept.entries;
  if (entries.length === 0) return;
  kept.entries = [];
  kept.bytes = 0;
  const socket = kept.socket;
  // From _destroy too, `destroyed` already set: the handle is still open until NET._destroy.
  kept.inFlight++;
  const done: Callback = (error) => {
    kept.inFlight--;
    if (error) socket.destroy(error);
  };
  try {
    if (entries.length === 1) {
      const only = entries[0] as Entry;
      NET._write.call(socket, only.chunk, only.encoding, done);
    } else {
      NET._writev.call(socket, entries, done);
    }
  } catch (error) {
    // Their writers were told these bytes went out: a write that throws ends the connection, as
    // one that fails does (and, from the shared flush, spares the other connections due). A write
    // throws before it is dispatched, so `done` has not run.
    done(error instanceof Error ? error : new Error(String(error)));
  }
}

/** Makes `socket` keep its small writes for the end of the turn (see above). */
export function coalesceWrites(socket: Socket): void {
  const s = socket as InternalSocket;
  const kept: Kept = { socket: s, entries: [], bytes: 0, inFlight: 0, scheduled: false };
  const keepable = (bytes: number) => kept.inFlight === 0 && bytes <= SMALL_WRITE_BYTES && kept.bytes + bytes <= MAX_KEPT_BYTES && !s.connecting;
  const keep = (bytes: number, callback: Callback) => {
    kept.bytes += bytes;
    if (kept.bytes > keptHighWater.bytes) keptHighWater.bytes = kept.bytes;
    schedule(kept);
    callback();
  };

  s._write = (chunk: Buffer | string, encoding: BufferEncoding, callback: Callback) => {
    const bytes = chunk.length;
    if (keepable(bytes)) {
      kept.entries.push({ chunk, encoding });
      keep(bytes, callback);
      return;
    }
    flush(kept);
    NET._write.call(s, chunk, encoding, callback);
  };
  s._writev = (entries: Entry[], callback: Callback) => {
    let bytes = 0;
    for (const entry of entries) bytes += entry.chunk.length;
    if (keepable(bytes)) {
      for (const entry of entries) kept.entries.push({ chunk: entry.chunk, encoding: entry.encoding });
      keep(bytes, callback);
      return;
    }
    flush(kept);
    NET._writev.call(s, entries, callback);
  };
  // The end of the stream (FIN) and a close come after what is kept.
  s._final = (callback) => {
    flush(kept);
    NET._final.call(s, callback);
  };
  s._destroy = (error, callback) => {
    flush(kept);
    NET._destroy.call(s, error, callback);
  };
}
