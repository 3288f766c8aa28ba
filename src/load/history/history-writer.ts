/**
 * Streams a history to its file while the run goes. Memory stays bounded: every record is
 * serialised at once and written through a gzip stream; nothing is kept but the current ≤ 32 KiB
 * chunk and the streams' own buffers, which `record()` reports through its return value (false =
 * above the high-water mark: await `drain()`). The only per-run state is the key-id directory.
 */
import { createWriteStream, type WriteStream } from 'node:fs';
import { type Gzip, constants as zlibConstants, createGzip } from 'node:zlib';
import { HISTORY_FORMAT, HISTORY_VERSION, type HistoryEvent, type HistoryHeader } from './history-format.js';
import { KeyDirectory, historyOutcome, historyRequest } from './history-events.js';
import { OPERATION_SET, validateHistoryEvent } from './history-validate.js';
import type { Operation } from '../scenario/index.js';

/** Lines are gathered into chunks of about this size before they go to gzip. */
const CHUNK_BYTES = 32 * 1024;
/**
 * How often what was recorded is pushed through gzip to the file (a sync flush), ms: a run that is
 * killed loses at most about this much of its history; the rest is a readable prefix.
 */
export const HISTORY_FLUSH_MS = 1_000;

export interface HistoryWriterOptions {
  startedAt?: string;
  run?: HistoryHeader['run'];
  wallSkewMs?: number;
  host?: string;
  combined?: string[];
  /** gzip level 1..9; default 1 (the file is written during the load: speed over size). */
  level?: number;
}

/** One call as the runner sees it, turned into a HistoryEvent by `recordCall`. */
export interface RecordedCall {
  /** From `begin()` at send time; assigned now when absent. */
  seq?: number;
  op: Operation;
  /** The request body as sent (the key plaintext in it is replaced by the key id). */
  body: unknown;
  invokeMs: number;
  completeMs: number;
  serviceInvokeMs?: number;
  serviceCompleteMs?: number;
  /** The answer, or 'unknown' after a timeout or a lost connection. */
  response: { status: number; body: unknown } | 'unknown';
  /** The answer's `x-keysim-region` header, when it carried one. */
  region?: string;
}

/**
 * Streams a history to `history.jsonl.gz`. Synchronous `record()` for the runner's hot path;
 * `close()` flushes and waits until the file is complete.
 */
export class HistoryWriter {
  readonly path: string;
  readonly keys = new KeyDirectory();
  readonly #gzip: Gzip;
  readonly #file: WriteStream;
  readonly #finished: Promise<void>;
  #chunk = '';
  #nextSeq = 0;
  #written = 0;
  #maxBuffered = 0;
  #error: Error | undefined;
  #closed = false;
  /** Events written when the file was last flushed. */
  #flushedAt = 0;
  readonly #flushTimer: NodeJS.Timeout;

  private constructor(path: string, gzip: Gzip, file: WriteStream) {
    this.path = path;
    this.#gzip = gzip;
    this.#file = file;
    this.#finished = new Promise<void>((resolve) => {
      file.once('close', () => resolve());
    });
    const fail = (error: Error) => {
      this.#error ??= error;
    };
    gzip.on('error', fail);
    file.on('error', fail);
    gzip.pipe(file);
    this.#flushTimer = setInterval(() => this.#flushToFile(), HISTORY_FLUSH_MS);
    this.#flushTimer.unref();
  }

  /** Pushes what was recorded since the last time through gzip (a sync flush: the file ends on a whole block). */
  #flushToFile(): void {
    if (this.#closed || this.#error !== undefined || this.#written === this.#flushedAt) return;
    this.#flushedAt = this.#written;
    this.#flushChunk();
    this.#gzip.flush(zlibConstants.Z_SYNC_FLUSH);
  }

  /** Creates (or truncates) the file and writes the header. Rejects if the file cannot be opened. */
  static async create(path: string, options: HistoryWriterOptions = {}): Promise<HistoryWriter> {
    const file = createWriteStream(path);
    await new Promise<void>((resolve, reject) => {
      file.once('open', () => resolve());
      file.once('error', reject);
    });
    const gzip = createGzip({ level: options.level ?? zlibConstants.Z_BEST_SPEED });
    const writer = new HistoryWriter(path, gzip, file);
    const header: HistoryHeader = { format: HISTORY_FORMAT, version: HISTORY_VERSION, startedAt: options.startedAt ?? new Date().toISOString() };
    if (options.run !== undefined) header.run = options.run;
    if (options.wallSkewMs !== undefined) header.wallSkewMs = options.wallSkewMs;
    if (options.host !== undefined) header.host = options.host;
    if (options.combined !== undefined) header.combined = options.combined;
    writer.#append(JSON.stringify(header));
    // The header reaches the file at once: a run killed at any time leaves a file that says what it is.
    writer.#flushChunk();
    gzip.flush(zlibConstants.Z_SYNC_FLUSH);
    return writer;
  }

  /** The next sequence number: call it when the request is sent. */
  begin(): number {
    return this.#nextSeq++;
  }

  /** Events written so far. */
  get written(): number {
    return this.#written;
  }

  /** Bytes accepted but not yet in the file: the current chunk plus the streams' buffers. */
  get bufferedBytes(): number {
    return this.#chunk.length + this.#gzip.writableLength + this.#file.writableLength;
  }

  /** The largest `bufferedBytes` seen after a record (for the memory test and benchmarks). */
  get maxBufferedBytes(): number {
    return this.#maxBuffered;
  }

  /**
   * Whether writing the file failed (a full disk): `record()` throws from then on, and `close()`
   * rejects with the cause.
   */
  get failed(): boolean {
    return this.#error !== undefined;
  }

  /**
   * Whether the caller should `await drain()` before recording much more: gzip holds more than its
   * high-water mark (the file stream's own buffer is bounded by the pipe between them).
   */
  get needsDrain(): boolean {
    return this.#gzip.writableNeedDrain;
  }

  /**
   * Writes one event. Returns false when the buffers are above the high-water mark: the caller
   * should await `drain()` (the event is written either way). Throws after a write error.
   */
  record(event: HistoryEvent): boolean {
    // Rebuilt from the whitelist, so the line holds the known fields only.
    return this.#write(validateHistoryEvent(event));
  }

  #write(event: HistoryEvent): boolean {
    if (this.#closed) throw new Error(`The history ${this.path} is closed.`);
    if (this.#error !== undefined) throw new Error(`Writing the history ${this.path} failed: ${this.#error.message}`);
    this.#append(JSON.stringify(event));
    this.#written++;
    const buffered = this.bufferedBytes;
    if (buffered > this.#maxBuffered) this.#maxBuffered = buffered;
    return !this.needsDrain;
  }

  /**
   * Turns a request and its answer into an event (learning key ids on the way) and records it.
   * The event is built from the whitelist here, so only its times need checking (the hot path).
   */
  recordCall(call: RecordedCall): boolean {
    const { serviceInvokeMs: sInv, serviceCompleteMs: sComp } = call;
    const timesOk =
      Number.isFinite(call.invokeMs) &&
      Number.isFinite(call.completeMs) &&
      call.completeMs >= call.invokeMs &&
      (sInv === undefined || Number.isFinite(sInv)) &&
      (sComp === undefined || Number.isFinite(sComp)) &&
      (sInv === undefined || sComp === undefined || sComp >= sInv);
    if (!timesOk || !OPERATION_SET.has(call.op)) {
      throw new TypeError(`Not a valid call to record: ${call.op}, wall ${call.invokeMs} … ${call.completeMs} ms, service ${sInv} … ${sComp} ms.`);
    }
    if (call.response !== 'unknown') this.keys.observe(call.op, call.body, call.response.status, call.response.body);
    const event: HistoryEvent = {
      seq: call.seq ?? this.begin(),
      op: call.op,
      invokeMs: call.invokeMs,
      completeMs: call.completeMs,
      request: historyRequest(call.op, call.body, (plaintext) => this.keys.keyIdOf(plaintext)),
      outcome: call.response === 'unknown' ? 'unknown' : historyOutcome(call.op, call.response.status, call.response.body),
    };
    if (call.serviceInvokeMs !== undefined) event.serviceInvokeMs = call.serviceInvokeMs;
    if (call.serviceCompleteMs !== undefined) event.serviceCompleteMs = call.serviceCompleteMs;
    if (call.region !== undefined) event.region = call.region;
    return this.#write(event);
  }

  /** Resolves when the buffers are below the high-water mark again (at once if they are). */
  async drain(): Promise<void> {
    if (this.#chunk.length > 0) this.#flushChunk();
    const gzip = this.#gzip;
    while (gzip.writableNeedDrain && this.#error === undefined) {
      await new Promise<void>((resolve) => {
        const done = () => {
          gzip.off('drain', done);
          gzip.off('error', done);
          resolve();
        };
        gzip.on('drain', done);
        gzip.on('error', done);
      });
    }
    if (this.#error !== undefined) throw new Error(`Writing the history ${this.path} failed: ${this.#error.message}`);
  }

  /** Flushes everything and closes the file; rejects if anything could not be written. */
  async close(): Promise<void> {
    if (this.#closed) return this.#finished;
    this.#closed = true;
    clearInterval(this.#flushTimer);
    this.#flushChunk();
    this.#gzip.end();
    await this.#finished;
    if (this.#error !== undefined) throw new Error(`Writing the history ${this.path} failed: ${this.#error.message}`);
  }

  #append(line: string): void {
    this.#chunk += `${line}\n`;
    if (this.#chunk.length >= CHUNK_BYTES) this.#flushChunk();
  }

  #flushChunk(): void {
    if (this.#chunk.length === 0) return;
    const chunk = this.#chunk;
    this.#chunk = '';
    this.#gzip.write(chunk);
  }
}
