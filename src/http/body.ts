/** Reads a request body up to a limit, without buffering more than the limit. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

export const DEFAULT_MAX_BODY_BYTES = 10 * 1024 * 1024;
/** The most of a refused body read and discarded after its 413, so the client can read the answer. */
export const DISCARD_MAX_BYTES = 64 * 1024 * 1024;
/** How long a refused body may take to arrive before the connection is closed anyway. */
export const DISCARD_MAX_MS = 30_000;
/** After a half-close, how long the client has to stop sending before the socket is destroyed. */
const LINGER_MS = 2_000;

export type BodyRead = { ok: true; text: string } | { ok: false; reason: 'too_large' | 'aborted' };

/**
 * What a body read under a byte limit (`readLimited`) is handed. Nothing is called after `end`
 * or `refuse`, and each at most once.
 */
export interface BodySink {
  /** The next piece of the body, while the total is within the limit. */
  chunk(chunk: Buffer): void;
  /** The whole body arrived within the limit. */
  end(): void;
  /** No body: it is over the limit (declared or counted), or the request was cut short. */
  refuse(reason: 'too_large' | 'aborted'): void;
}

/** Per request, kept on the request itself, so that the listeners are shared functions (no closure per request). */
interface LimitedRead {
  /** `DONE` once the read has ended: see `finish`. */
  sink: BodySink;
  maxBytes: number;
  size: number;
  done: boolean;
}

const READ = Symbol('keysim body read');
type ReadingMessage = IncomingMessage & { [READ]?: LimitedRead };

/** What a finished read holds instead of its sink (never called: `done` is checked first). */
const DONE: BodySink = { chunk() {}, end() {}, refuse() {} };

/**
 * Ends the read: the request lives until its answer is written, which with pipelining waits for
 * the answers before it, so it lets go of the sink (the body and what the server keeps per
 * request) at once instead of holding them that long (docs/benchmarks.md#http-simulator).
 */
function finish(read: LimitedRead): BodySink {
  const sink = read.sink;
  read.done = true;
  read.sink = DONE;
  return sink;
}

function onData(this: ReadingMessage, chunk: Buffer): void {
  const read = this[READ] as LimitedRead;
  if (read.done) return;
  read.size += chunk.length;
  if (read.size > read.maxBytes) {
    // Keep draining (discarding) so the client can read the 413 instead of a reset.
    finish(read).refuse('too_large');
    return;
  }
  read.sink.chunk(chunk);
}

function onEnd(this: ReadingMessage): void {
  const read = this[READ] as LimitedRead;
  if (read.done) return;
  finish(read).end();
}

// A request cut short is destroyed with an error, after its 'aborted' event: either one ends the read.
function onAborted(this: ReadingMessage): void {
  const read = this[READ] as LimitedRead;
  if (read.done) return;
  finish(read).refuse('aborted');
}

/**
 * Reads a request body up to `maxBytes`, handing it to `sink` as it arrives, without buffering
 * anything itself. A body declared (Content-Length) or counted over the limit is refused at once;
 * the rest is left flowing, for the caller to discard (`discardRest`) after its 413. The one
 * step under both ways of reading a body: whole (`collectBody`) and as a stream (restore-body.ts).
 */
export function readLimited(req: IncomingMessage, maxBytes: number, sink: BodySink): void {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) {
    req.resume();
    sink.refuse('too_large');
    return;
  }
  (req as ReadingMessage)[READ] = { sink, maxBytes, size: 0, done: false };
  req.on('data', onData);
  req.on('end', onEnd);
  req.on('error', onAborted);
  req.on('aborted', onAborted);
}

/** Reads the body as a promise (see `collectBody`). */
export function readBody(req: IncomingMessage, maxBytes: number): Promise<BodyRead> {
  return new Promise((resolve) => collectBody(req, maxBytes, resolve, undefined));
}

/** Gathers a body whole: most bodies arrive in one chunk, kept as it is; a list only from the second. */
class Collector<C> implements BodySink {
  #first: Buffer | undefined;
  #chunks: Buffer[] | undefined;
  readonly #done: (result: BodyRead, context: C) => void;
  readonly #context: C;

  constructor(done: (result: BodyRead, context: C) => void, context: C) {
    this.#done = done;
    this.#context = context;
  }

  chunk(chunk: Buffer): void {
    if (this.#first === undefined) this.#first = chunk;
    else (this.#chunks ??= [this.#first]).push(chunk);
  }

  end(): void {
    const first = this.#first;
    const text = this.#chunks !== undefined ? Buffer.concat(this.#chunks).toString('utf8') : first === undefined ? '' : first.toString('utf8');
    this.#first = undefined;
    this.#chunks = undefined;
    this.#done({ ok: true, text }, this.#context);
  }

  refuse(reason: 'too_large' | 'aborted'): void {
    this.#first = undefined;
    this.#chunks = undefined;
    this.#done({ ok: false, reason }, this.#context);
  }
}

/**
 * Reads the body up to `maxBytes` and calls `done` once with the text or why there is none, and
 * `context` (so that a caller needs no closure per request). A callback rather than a promise:
 * the server's per-request path stays synchronous around it.
 */
export function collectBody<C>(req: IncomingMessage, maxBytes: number, done: (result: BodyRead, context: C) => void, context: C): void {
  readLimited(req, maxBytes, new Collector(done, context));
}

/**
 * After a body was refused as too large: the answer goes out while the rest of the body is read
 * and thrown away, so that the client, still sending, reads the 413 instead of a connection reset
 * (closing a socket with unread data makes the kernel answer with RST, which can destroy the
 * answer before the client reads it). Once the body has arrived the connection stays usable.
 * A body that goes on past `maxBytes` or `maxMs` gets a lingering close: the server half-closes
 * after the answer, keeps discarding for a moment, then lets go of the socket.
 */
export function discardRest(req: IncomingMessage, res: ServerResponse, maxBytes = DISCARD_MAX_BYTES, maxMs = DISCARD_MAX_MS): void {
  if (req.complete) return;
  let discarded = 0;
  let closing = false;
  const linger = () => {
    if (closing) return;
    closing = true;
    clearTimeout(timer);
    const close = () => halfCloseThenRelease(req.socket);
    if (res.writableFinished) close();
    else res.once('finish', close);
  };
  const timer = setTimeout(linger, maxMs);
  timer.unref();
  req.on('data', (chunk: Buffer) => {
    discarded += chunk.length;
    if (discarded > maxBytes) linger();
  });
  req.once('end', () => clearTimeout(timer));
  req.once('close', () => clearTimeout(timer));
  req.resume();
}

/**
 * Closes a connection after the answer that ends it, without a reset. node:http lets go of a
 * `connection: close` answer's socket as soon as the answer is out; bytes the client sends after
 * that (the rest of a refused request) make the kernel reset the connection, and a reset throws
 * away what the client has received but not yet read: the answers to the requests it pipelined
 * before. Here the socket half-closes instead (the client reads every answer, then the end),
 * node:http discards the rest of the request as it arrives, and the socket is let go when the
 * client closes its side, or after LINGER_MS.
 */
export function lingeringClose(socket: Socket): void {
  socket.destroySoon = function lingering(this: Socket) {
    halfCloseThenRelease(this);
  };
}

/** Ends our side after what is written (FIN, not a reset) and lets go of the socket LINGER_MS later. */
function halfCloseThenRelease(socket: Socket): void {
  if (socket.writable) socket.end();
  setTimeout(() => socket.destroy(), LINGER_MS).unref();
}

export type JsonParse = { ok: true; value: unknown } | { ok: false; problem: string };

/**
 * Parses a request body. A syntax error is described by what and where (a character offset),
 * never by an excerpt: the runtime's own message quotes the body, which may hold a secret.
 */
export function parseJsonBody(text: string): JsonParse {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (error) {
    return { ok: false, problem: jsonSyntaxProblem(error) };
  }
}

/** What `JSON.parse` threw, described by what and where, without quoting the body. */
export function jsonSyntaxProblem(error: unknown): string {
  const message = error instanceof Error ? error.message : '';
  const located = /^([^"]*?) in JSON at position (\d+)/.exec(message);
  if (located !== null) return `${located[1] ?? 'a syntax error'} at character ${located[2] ?? '?'}`;
  if (message.startsWith('Unexpected end of JSON input')) return 'it ends before the JSON value is complete';
  return 'it has a character that cannot stand where it is';
}

/** `application/json`, with or without parameters such as `; charset=utf-8`. */
export function isJsonContentType(header: string | undefined): boolean {
  if (header === undefined) return false;
  // What nearly every client sends, answered without splitting the header.
  if (header === 'application/json') return true;
  const type = header.split(';', 1)[0]?.trim().toLowerCase();
  return type === 'application/json' || (type !== undefined && type.startsWith('application/') && type.endsWith('+json'));
}
