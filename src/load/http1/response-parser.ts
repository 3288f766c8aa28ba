/**
 * An incremental HTTP/1.1 response parser for the load generator's own client: bytes go in as the
 * socket delivers them, in pieces of any size, and each complete response comes out in order with
 * its status, its body and what the connection should do next. It reads only what a load client
 * needs (status, Content-Length, Transfer-Encoding: chunked, Connection, Keep-Alive, Content-Type,
 * Content-Encoding and, when asked, Date) and skips every other header without decoding it, which
 * is most of why it is cheap.
 *
 * Limits hold whatever the chunking: a head is measured from its first byte across reads (TCP may
 * deliver 70 KiB in one read or in 1,460-byte pieces, and the verdict must not depend on it), and
 * a body past MAX_BODY_BYTES is refused as soon as it is known to be (by its Content-Length, or as
 * its chunks or bytes arrive).
 *
 * Interim answers (1xx other than 101) are skipped; 204 and 304 have no body; an answer with
 * neither a length nor chunked coding runs until the server closes (`end()`).
 */
import { HttpProtocolError } from './errors.js';
import { lower } from './header-bytes.js';
import { emptyResponseHead, readResponseHead } from './response-head.js';

/** What the parser found in one complete response. */
export interface ParsedResponse {
  status: number;
  /**
   * The body bytes (chunked coding removed); empty when there is none. After a `push(chunk, true)`
   * it may lie in the caller's read buffer, which is reused: read it during the call, copy it to keep it.
   */
  body: Buffer;
  /** The server said `Connection: close` (or spoke HTTP/1.0 without keep-alive): no more answers come. */
  close: boolean;
  /** The server's `Keep-Alive: timeout=N`, in ms; undefined when it sent none. */
  keepAliveMs: number | undefined;
  /** The Content-Type header's value (the first one), or undefined. */
  contentType: string | undefined;
  /** The Content-Encoding header's value (lower case), or undefined (identity). */
  contentEncoding: string | undefined;
  /** The first `Date` header that parses, Unix ms; undefined when none does (or dates were not asked for). */
  dateMs: number | undefined;
  /** The `x-keysim-region` header's value, or undefined. */
  region: string | undefined;
}

export interface ResponseParserOptions {
  /** Read the `Date` header (the clock-skew probes need it; the load does not). */
  dates?: boolean;
  /** The body limit, bytes (default MAX_BODY_BYTES). */
  maxBodyBytes?: number;
}

/** A head larger than this is refused (a server gone wrong, not a real answer), however it arrives. */
export const MAX_HEAD_BYTES = 64 * 1024;
/** A body larger than this is refused: no answer of the service comes near it. */
export const MAX_BODY_BYTES = 16 * 1024 * 1024;
/** A chunk-size or trailer line longer than this is refused. */
const MAX_LINE_BYTES = 8 * 1024;
const EMPTY = Buffer.alloc(0);
const CRLFCRLF = Buffer.from('\r\n\r\n', 'latin1');

const enum State {
  Head,
  /** Waiting for `#remaining` body bytes (Content-Length). */
  Body,
  ChunkSize,
  ChunkData,
  ChunkDataEnd,
  Trailer,
  /** No length and not chunked: the body is everything until the server closes. */
  UntilClose,
}

function tooLarge(limit: number): HttpProtocolError {
  return new HttpProtocolError(
    `the response body is larger than ${limit} bytes (${Math.round(limit / 1024 / 1024)} MiB), far beyond any answer of the service`,
  );
}

export class ResponseParser {
  #state: State = State.Head;
  /** Unconsumed bytes: a partial head or chunk-size line waits here for the rest. */
  #buf: Buffer = EMPTY;
  #pos = 0;
  /** Body pieces of the response being read (several when it arrives split). */
  #pieces: Buffer[] = [];
  /** How many of #pieces, from the front, are copies of their own (the rest may lie in a borrowed chunk). */
  #ownedPieces = 0;
  #remaining = 0;
  #status = 0;
  #close = false;
  #keepAliveMs: number | undefined;
  #contentType: string | undefined;
  #contentEncoding: string | undefined;
  #dateMs: number | undefined;
  #region: string | undefined;
  /** Body bytes of the response being read so far (chunked and until-close bodies). */
  #bodyBytes = 0;
  #failed = false;
  readonly #dates: boolean;
  /** The head being read, one object reused for every response. */
  readonly #headRead = emptyResponseHead();
  readonly #maxBodyBytes: number;
  readonly #onResponse: (response: ParsedResponse) => boolean;

  /**
   * `onResponse` is called for each complete response, in order; returning false stops the parser
   * (the connection was given up inside the call: what is left is not read).
   */
  constructor(onResponse: (response: ParsedResponse) => boolean, options: ResponseParserOptions = {}) {
    this.#onResponse = onResponse;
    this.#dates = options.dates === true;
    this.#maxBodyBytes = options.maxBodyBytes ?? MAX_BODY_BYTES;
  }

  /** The bytes read so far belong to a response not yet complete. */
  get midResponse(): boolean {
    return this.#state !== State.Head || this.#pos < this.#buf.length;
  }

  /**
   * Feeds bytes; throws HttpProtocolError for bytes that are not an HTTP/1.x response. `borrowed`:
   * the chunk lies in a read buffer the caller reuses once this returns (the connection reads
   * into one buffer, docs/benchmarks.md#load-runner), so what the parser keeps of it for the next
   * push (a partial head or line, the pieces of a body not yet complete) is copied.
   */
  push(chunk: Buffer, borrowed = false): void {
    if (this.#failed) return;
    if (this.#pos < this.#buf.length) {
      this.#buf = Buffer.concat([this.#buf.subarray(this.#pos), chunk]);
    } else {
      this.#buf = chunk;
    }
    this.#pos = 0;
    try {
      this.#run();
    } catch (error) {
      this.#failed = true;
      throw error;
    }
    if (borrowed) this.#own();
  }

  /** Copies what is left of a borrowed chunk, and the body pieces taken from it. */
  #own(): void {
    if (this.#failed) return;
    if (this.#pos < this.#buf.length) {
      this.#buf = Buffer.from(this.#buf.subarray(this.#pos));
    } else {
      this.#buf = EMPTY;
    }
    this.#pos = 0;
    const pieces = this.#pieces;
    for (let i = this.#ownedPieces; i < pieces.length; i++) pieces[i] = Buffer.from(pieces[i] as Buffer);
    this.#ownedPieces = pieces.length;
  }

  /**
   * The server closed. A body that runs until the close is complete now; returns false when the
   * close cut a response short (or no response was under way: true).
   */
  end(): boolean {
    if (this.#failed) return !this.midResponse;
    if (this.#state === State.UntilClose) {
      this.#emit();
      return true;
    }
    return !this.midResponse;
  }

  #run(): void {
    for (;;) {
      const buf = this.#buf;
      const available = buf.length - this.#pos;
      switch (this.#state) {
        case State.Head: {
          if (available === 0) return;
          const end = buf.indexOf(CRLFCRLF, this.#pos);
          if (end < 0) {
            if (available > MAX_HEAD_BYTES) throw new HttpProtocolError(`the response head is longer than ${MAX_HEAD_BYTES} bytes`);
            return;
          }
          if (end + 4 - this.#pos > MAX_HEAD_BYTES) throw new HttpProtocolError(`the response head is longer than ${MAX_HEAD_BYTES} bytes`);
          const start = this.#pos;
          this.#pos = end + 4;
          if (!this.#head(buf, start, end)) return;
          break;
        }
        case State.Body: {
          if (!this.#take(buf, available)) return;
          if (!this.#emit()) return;
          break;
        }
        case State.ChunkSize: {
          const lineEnd = this.#line(buf);
          if (lineEnd < 0) return;
          let size = 0;
          let digits = 0;
          let i = this.#pos;
          for (; i < lineEnd; i++) {
            const c = lower(buf[i] as number);
            const d = c >= 0x30 && c <= 0x39 ? c - 0x30 : c >= 0x61 && c <= 0x66 ? c - 0x61 + 10 : -1;
            if (d < 0) break;
            size = size * 16 + d;
            digits++;
          }
          // What may follow the digits: spaces and chunk extensions (";name=value"), which mean nothing here.
          const next = buf[i];
          if (digits === 0 || digits > 12 || (i < lineEnd && next !== 0x3b && next !== 0x20 && next !== 0x09)) {
            throw new HttpProtocolError(`a chunk size is not hexadecimal: "${buf.toString('latin1', this.#pos, lineEnd)}"`);
          }
          this.#pos = lineEnd + 2;
          if (size === 0) {
            this.#state = State.Trailer;
          } else {
            this.#bodyBytes += size;
            if (this.#bodyBytes > this.#maxBodyBytes) throw tooLarge(this.#maxBodyBytes);
            this.#remaining = size;
            this.#state = State.ChunkData;
          }
          break;
        }
        case State.ChunkData: {
          if (!this.#take(buf, available)) return;
          this.#state = State.ChunkDataEnd;
          break;
        }
        case State.ChunkDataEnd: {
          if (available < 2) return;
          if (buf[this.#pos] !== 0x0d || buf[this.#pos + 1] !== 0x0a) throw new HttpProtocolError('a chunk is not followed by CRLF');
          this.#pos += 2;
          this.#state = State.ChunkSize;
          break;
        }
        case State.Trailer: {
          const lineEnd = this.#line(buf);
          if (lineEnd < 0) return;
          const empty = lineEnd === this.#pos;
          this.#pos = lineEnd + 2;
          // Trailer fields are skipped; the empty line ends the response.
          if (empty && !this.#emit()) return;
          break;
        }
        case State.UntilClose: {
          if (available === 0) return;
          this.#bodyBytes += available;
          if (this.#bodyBytes > this.#maxBodyBytes) throw tooLarge(this.#maxBodyBytes);
          this.#pieces.push(this.#pos === 0 ? buf : buf.subarray(this.#pos));
          this.#pos = buf.length;
          return;
        }
      }
    }
  }

  /**
   * Takes what is here of the `#remaining` bytes of a body or chunk (without a copy) and tells
   * whether they are all in now.
   */
  #take(buf: Buffer, available: number): boolean {
    if (available === 0) return false;
    const take = Math.min(available, this.#remaining);
    this.#pieces.push(buf.subarray(this.#pos, this.#pos + take));
    this.#pos += take;
    this.#remaining -= take;
    return this.#remaining === 0;
  }

  /** The index of the CRLF ending the line at #pos, or -1 when it has not all arrived. */
  #line(buf: Buffer): number {
    const end = buf.indexOf(0x0a, this.#pos);
    if (end < 0) {
      if (buf.length - this.#pos > MAX_LINE_BYTES) throw new HttpProtocolError(`a chunk-size or trailer line is longer than ${MAX_LINE_BYTES} bytes`);
      return -1;
    }
    if (end === this.#pos || buf[end - 1] !== 0x0d) throw new HttpProtocolError('a line of a chunked body does not end with CRLF');
    return end - 1;
  }

  /** Reads the head in buf[start, end) (end = its blank line); returns false when the parser was stopped. */
  #head(buf: Buffer, start: number, end: number): boolean {
    const { status, contentLength, chunked, close, keepAliveMs, contentType, contentEncoding, dateMs, region } = readResponseHead(
      buf,
      start,
      end,
      this.#dates,
      this.#headRead,
    );
    if (status < 200 && status !== 101) {
      // An interim answer (100 Continue, 103 Early Hints): the real one follows.
      return true;
    }
    this.#status = status;
    this.#close = close;
    this.#keepAliveMs = keepAliveMs;
    this.#contentType = contentType;
    this.#contentEncoding = contentEncoding;
    this.#dateMs = dateMs;
    this.#region = region;
    this.#bodyBytes = 0;
    if (status === 204 || status === 304 || status === 101) return this.#emit();
    if (chunked) {
      this.#state = State.ChunkSize;
      return true;
    }
    if (contentLength >= 0) {
      if (contentLength === 0) return this.#emit();
      if (contentLength > this.#maxBodyBytes) throw tooLarge(this.#maxBodyBytes);
      // The common case: the whole body is already here, and is read without a copy.
      if (this.#buf.length - this.#pos >= contentLength) {
        this.#pieces.push(this.#buf.subarray(this.#pos, this.#pos + contentLength));
        this.#pos += contentLength;
        return this.#emit();
      }
      this.#remaining = contentLength;
      this.#state = State.Body;
      return true;
    }
    this.#state = State.UntilClose;
    this.#close = true;
    return true;
  }

  /** Hands the response out and gets ready for the next; false when the callee stopped the parser. */
  #emit(): boolean {
    const pieces = this.#pieces;
    const body = pieces.length === 0 ? EMPTY : pieces.length === 1 ? (pieces[0] as Buffer) : Buffer.concat(pieces);
    pieces.length = 0;
    this.#ownedPieces = 0;
    this.#state = State.Head;
    const response: ParsedResponse = {
      status: this.#status,
      body,
      close: this.#close,
      keepAliveMs: this.#keepAliveMs,
      contentType: this.#contentType,
      contentEncoding: this.#contentEncoding,
      dateMs: this.#dateMs,
      region: this.#region,
    };
    const go = this.#onResponse(response);
    if (!go) this.#failed = true;
    return go;
  }
}
