/**
 * One keep-alive HTTP/1.1 connection of the load generator, on node:net or node:tls, written to
 * the way autocannon and wrk do: requests are ready-made text, appended to one buffer and written
 * in one go per turn of the event loop (several pipelined requests due at once leave in one
 * write), and answers come back through a callback — no promise, stream or header object per
 * request; over plain TCP the bytes are read into one shared buffer (`onread`), not as a stream.
 * Outstanding requests wait in a FIFO: HTTP/1.1 answers come in request order.
 *
 * The connection opens on the first send and again on the first send after it closed. What ends
 * a connection ends every request outstanding on it, each reported failed once:
 * - the server closes it, or it breaks (reset, refused): the unanswered requests fail with that
 *   error. They are not sent again: a POST may have been executed, and sending it twice would
 *   spend twice (the history records them 'unknown');
 * - an answer says `Connection: close`: that answer is delivered, the requests pipelined behind
 *   it fail (the server will not answer them), and the next send opens a new connection;
 * - no connection within `connectTimeoutMs`, or no byte of an answer for `timeoutMs` while a
 *   request waits (counted from its send or from the last byte received, whichever is later,
 *   like undici's headers and body timeouts): every request on it fails as a timeout;
 * - destroy(): they fail as abandoned.
 * A connection is never sent on once the server has closed it (ended, half-closed, destroyed): the
 * next send opens a new one. A connection idle longer than the server's `Keep-Alive: timeout`
 * (less a margin, at most 30 s) is replaced before the next send rather than raced against the
 * server closing it; without that hint, the idle close of the server is learnt (idle-close.ts):
 * once a connection closed while idle after T ms, connections idle longer than half of T are
 * replaced. Request text whose socket turns out closed before it was written — closed by the
 * server, broken, or found unreadable while the text waited for its turn's write — is written on
 * a new connection instead: those bytes provably never reached the server. Text that was written,
 * even partly, and got no answer is never written again (its outcome is unknown).
 */
import { type Socket, connect as netConnect, isIP } from 'node:net';
import { performance } from 'node:perf_hooks';
import { type ConnectionOptions as TlsConnectionOptions, connect as tlsConnect } from 'node:tls';
import { ConnectionClosedError, ConnectionDestroyedError, HttpProtocolError, RequestTimeoutError } from './errors.js';
import { IdleCloseLearner } from './idle-close.js';
import { type ParsedResponse, ResponseParser } from './response-parser.js';

/** Where the connection goes. */
export interface Endpoint {
  /** Host name or IP address (IPv6 without brackets). */
  host: string;
  port: number;
  /** https: TLS with SNI and certificate verification (unless `tlsOptions` say otherwise). */
  tls: boolean;
  /** Extra TLS options (a private CA for a test server, say); most runs need none. */
  tlsOptions?: TlsConnectionOptions | undefined;
}

export interface ConnectionOptions {
  endpoint: Endpoint;
  /** No byte of an answer for this long while a request waits: the connection is given up. */
  timeoutMs: number;
  connectTimeoutMs: number;
  /** What the connections to one server learn of its idle close, shared between them. */
  idleClose?: IdleCloseLearner | undefined;
  /** Read the answers' `Date` headers (the clock-skew probes). */
  dates?: boolean | undefined;
  /** The body limit, bytes (default: the parser's, 16 MiB). */
  maxBodyBytes?: number | undefined;
}

/**
 * Where answers and failures go; `tag` is what the caller gave send(). Called once per request.
 * An answer's body may lie in the shared read buffer: read it in the call, copy it to keep it.
 */
export interface ExchangeHandlers<T> {
  answered(tag: T, response: ParsedResponse): void;
  failed(tag: T, error: Error): void;
}

/** Our own cap on reusing an idle connection (undici's keep-alive default here). */
const MAX_IDLE_MS = 30_000;
/** Replace an idle connection this long before the server's announced keep-alive timeout (or at half of it, if sooner). */
const IDLE_MARGIN_MS = 1_000;
/** Compact the FIFO's consumed front past this many entries. */
const FIFO_COMPACT = 64;
/**
 * The one buffer every plain-TCP connection reads into (node:net's `onread`): each read is parsed
 * before the next one lands, and what the parser keeps it copies, so the stream machinery and a
 * Buffer per read are skipped (docs/benchmarks.md#load-runner). TLS sockets read as streams.
 */
const READ_BUFFER = Buffer.allocUnsafe(64 * 1024);

/** The server has closed (or we destroyed) this socket: its FIN was read, or it cannot be written. */
function closedByServer(socket: Socket): boolean {
  return socket.destroyed || socket.readableEnded || socket.writableEnded || !socket.writable;
}

export class Http1Connection<T> {
  readonly #options: ConnectionOptions;
  readonly #handlers: ExchangeHandlers<T>;
  readonly #idleClose: IdleCloseLearner;
  #socket: Socket | undefined;
  #connected = false;
  #openedMs = 0;
  #lastDataMs = 0;
  #idleLimitMs = MAX_IDLE_MS;
  /** The socket's error, kept for the close that follows it. */
  #error: Error | undefined;
  /** Outstanding requests, oldest at #head, and when each was sent. */
  #tags: T[] = [];
  #sentMs: number[] = [];
  #head = 0;
  /** Request text not yet written (flushed once per turn of the event loop). */
  #out = '';
  /** How many of the outstanding requests, from the back, are in #out (not yet written). */
  #unwritten = 0;
  #flushQueued = false;
  /** How long the connection had been idle when its current request reused it (for the idle-close learner). */
  #reusedIdleMs: number | undefined;
  /**
   * Request text held until a TLS connection's certificate was checked ('secureConnect'): written
   * before it, node's TLS layer sends it as soon as the handshake ends, before the certificate is
   * judged, so a server nobody vouches for would get the first requests.
   */
  #beforeSecure = '';
  #timer: NodeJS.Timeout | undefined;

  constructor(options: ConnectionOptions, handlers: ExchangeHandlers<T>) {
    this.#options = options;
    this.#handlers = handlers;
    this.#idleClose = options.idleClose ?? new IdleCloseLearner();
  }

  /** Requests sent and not yet answered or failed. */
  get inFlight(): number {
    return this.#tags.length - this.#head;
  }

  /**
   * Sends one request: `text` is its whole HTTP/1.1 message. It leaves with whatever else is sent
   * in the same turn of the event loop. Never calls a handler synchronously.
   */
  send(tag: T, text: string, nowMs: number): void {
    this.enqueue(tag, text, nowMs);
    if (!this.#flushQueued) {
      this.#flushQueued = true;
      queueMicrotask(this.#flush);
    }
  }

  /**
   * Like send(), but the request waits until the caller calls flush() (in the same turn): a caller
   * that sends several requests at once writes them together without a microtask per connection.
   */
  enqueue(tag: T, text: string, nowMs: number): void {
    const socket = this.#socket;
    if (socket !== undefined && closedByServer(socket)) {
      // The server closed it (its FIN is read, the close event not yet handled): nothing may go on it.
      this.#teardown(socket, new ConnectionClosedError('the server closed the connection'));
    } else if (
      socket !== undefined &&
      this.inFlight === 0 &&
      this.#connected &&
      nowMs - this.#lastDataMs > Math.min(this.#idleLimitMs, this.#idleClose.limitMs)
    ) {
      // Idle past the server's keep-alive: it may be closing it right now. Nothing is outstanding.
      this.#teardown(socket, undefined);
    }
    if (this.#socket === undefined) this.#open(nowMs);
    else if (this.inFlight === 0 && this.#connected) this.#reusedIdleMs = nowMs - this.#lastDataMs;
    this.#tags.push(tag);
    this.#sentMs.push(nowMs);
    this.#out += text;
    this.#unwritten++;
    if (this.#timer === undefined) this.#arm(this.#connected ? this.#options.timeoutMs : Math.min(this.#options.timeoutMs, this.#options.connectTimeoutMs));
  }

  /** Writes what was sent or enqueued and not yet written, in one write. */
  flush(): void {
    const text = this.#out;
    if (text === '') return;
    this.#out = '';
    const unwritten = this.#unwritten;
    this.#unwritten = 0;
    const socket = this.#socket;
    if (socket === undefined) return;
    if (closedByServer(socket) && this.#connected) {
      // Closed between the send and the write: the unwritten requests never left, so they go on a
      // new connection; those written before are lost with the old one (never sent twice).
      const tags = this.#detach(socket);
      const written = tags.slice(0, tags.length - unwritten);
      const sentMs = performance.now();
      this.#open(sentMs);
      for (const tag of tags.slice(tags.length - unwritten)) {
        this.#tags.push(tag);
        this.#sentMs.push(sentMs);
      }
      this.#arm(Math.min(this.#options.timeoutMs, this.#options.connectTimeoutMs));
      // A new socket is not connected yet: for TLS the text waits for the certificate check.
      if (this.#options.endpoint.tls) this.#beforeSecure += text;
      else (this.#socket as Socket | undefined)?.write(text);
      this.#fail(written, new ConnectionClosedError('the server closed the connection'));
      return;
    }
    socket.write(text);
  }

  /** Closes the connection now; every outstanding request fails as abandoned. */
  destroy(): void {
    if (this.#socket !== undefined) this.#teardown(this.#socket, new ConnectionDestroyedError());
  }

  readonly #flush = (): void => {
    this.#flushQueued = false;
    this.flush();
  };

  #open(nowMs: number): void {
    const { endpoint } = this.#options;
    const received = (chunk: Buffer, borrowed: boolean): void => {
      if (this.#socket !== socket) return;
      this.#lastDataMs = performance.now();
      try {
        parser.push(chunk, borrowed);
      } catch (error) {
        this.#teardown(socket, error instanceof Error ? error : new HttpProtocolError(String(error)));
      }
    };
    const socket: Socket = endpoint.tls
      ? tlsConnect({
          host: endpoint.host,
          port: endpoint.port,
          ALPNProtocols: ['http/1.1'],
          ...(isIP(endpoint.host) === 0 ? { servername: endpoint.host } : {}),
          ...endpoint.tlsOptions,
        })
      : netConnect({
          host: endpoint.host,
          port: endpoint.port,
          onread: {
            buffer: READ_BUFFER,
            callback: (bytes: number, buffer: Uint8Array): boolean => {
              received((buffer as Buffer).subarray(0, bytes), true);
              return true;
            },
          },
        });
    socket.setNoDelay(true);
    this.#socket = socket;
    this.#connected = false;
    this.#error = undefined;
    this.#openedMs = nowMs;
    this.#lastDataMs = nowMs;
    this.#idleLimitMs = MAX_IDLE_MS;
    const parser = new ResponseParser((response) => this.#answer(socket, response), {
      dates: this.#options.dates === true,
      ...(this.#options.maxBodyBytes === undefined ? {} : { maxBodyBytes: this.#options.maxBodyBytes }),
    });
    socket.once(endpoint.tls ? 'secureConnect' : 'connect', () => {
      if (this.#socket !== socket) return;
      this.#connected = true;
      // The certificate was checked (a rejected one destroys the socket before this event).
      const held = this.#beforeSecure;
      this.#beforeSecure = '';
      if (held !== '') socket.write(held);
    });
    if (endpoint.tls) socket.on('data', (chunk: Buffer) => received(chunk, false));
    socket.on('end', () => {
      if (this.#socket !== socket) return;
      // Closed by the server while nothing was outstanding: how long it keeps an idle connection.
      if (this.inFlight === 0 && this.#connected && !parser.midResponse) this.#idleClose.closedIdle(performance.now() - this.#lastDataMs);
      // A body that runs until the close is complete now.
      parser.end();
    });
    socket.on('error', (error: Error) => {
      this.#error ??= error;
    });
    socket.on('close', () => {
      if (this.#socket !== socket) return;
      this.#teardown(socket, this.#error ?? new ConnectionClosedError('the server closed the connection'));
    });
  }

  /** One complete answer from the parser: it answers the oldest outstanding request. */
  #answer(socket: Socket, response: ParsedResponse): boolean {
    if (this.#socket !== socket) return false;
    if (this.inFlight === 0) {
      this.#teardown(socket, new HttpProtocolError('an answer came with no request outstanding'));
      return false;
    }
    const tag = this.#tags[this.#head] as T;
    this.#tags[this.#head] = undefined as T;
    this.#head++;
    if (this.#head === this.#tags.length) {
      this.#tags.length = 0;
      this.#sentMs.length = 0;
      this.#head = 0;
    } else if (this.#head > FIFO_COMPACT) {
      this.#tags.splice(0, this.#head);
      this.#sentMs.splice(0, this.#head);
      this.#head = 0;
    }
    if (response.keepAliveMs !== undefined) {
      this.#idleLimitMs = Math.max(0, Math.min(MAX_IDLE_MS, response.keepAliveMs - IDLE_MARGIN_MS, response.keepAliveMs / 2));
      this.#idleClose.hinted(response.keepAliveMs);
    } else if (this.#reusedIdleMs !== undefined) {
      // An idle connection reused and answered: evidence that the server keeps connections that long.
      this.#idleClose.reused(this.#reusedIdleMs);
    }
    this.#reusedIdleMs = undefined;
    if (response.close) {
      // The server answers nothing more here: detach first, so a send made by the handler opens a new connection.
      const rest = this.#detach(socket);
      this.#handlers.answered(tag, response);
      this.#fail(rest, new ConnectionClosedError('the server answered an earlier request with Connection: close'));
      return false;
    }
    this.#handlers.answered(tag, response);
    return this.#socket === socket;
  }

  #teardown(socket: Socket, error: Error | undefined): void {
    if (this.#socket !== socket) return;
    const wasConnected = this.#connected;
    const text = this.#out;
    const unwritten = this.#unwritten;
    const rest = this.#detach(socket);
    if (error === undefined) return;
    // Requests sent this turn but not yet written (e.g. by the handler of an answer read in the
    // same chunk as the bytes that broke the connection) never left: they go on a new connection.
    // Not when the connection never came up (refused, a failed handshake): the next one would
    // fail alike; nor when we destroyed it (a stop).
    if (unwritten > 0 && wasConnected && !(error instanceof ConnectionDestroyedError)) {
      const nowMs = performance.now();
      this.#open(nowMs);
      for (const tag of rest.slice(rest.length - unwritten)) {
        this.#tags.push(tag);
        this.#sentMs.push(nowMs);
      }
      // The flush queued by send() (or the caller's flush() after enqueue()) writes it there.
      this.#out = text;
      this.#unwritten = unwritten;
      this.#arm(Math.min(this.#options.timeoutMs, this.#options.connectTimeoutMs));
      this.#fail(rest.slice(0, rest.length - unwritten), error);
      return;
    }
    this.#fail(rest, error);
  }

  /** Forgets the socket (destroying it) and hands back the requests that were outstanding on it. */
  #detach(socket: Socket): T[] {
    const rest = this.#tags.slice(this.#head);
    this.#tags = [];
    this.#sentMs = [];
    this.#head = 0;
    this.#socket = undefined;
    this.#connected = false;
    this.#out = '';
    this.#unwritten = 0;
    this.#beforeSecure = '';
    this.#reusedIdleMs = undefined;
    if (this.#timer !== undefined) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
    socket.destroy();
    return rest;
  }

  #fail(tags: readonly T[], error: Error): void {
    for (const tag of tags) this.#handlers.failed(tag, error);
  }

  #arm(ms: number): void {
    this.#timer = setTimeout(this.#onTimer, Math.max(1, Math.ceil(ms)));
    this.#timer.unref();
  }

  /** The timer runs while requests are outstanding; it is re-armed for the oldest one's deadline. */
  readonly #onTimer = (): void => {
    this.#timer = undefined;
    const socket = this.#socket;
    if (socket === undefined || this.inFlight === 0) return;
    const now = performance.now();
    const { timeoutMs, connectTimeoutMs } = this.#options;
    if (!this.#connected) {
      const connectLeft = this.#openedMs + connectTimeoutMs - now;
      if (connectLeft <= 0) {
        this.#teardown(socket, new RequestTimeoutError(`No connection to ${this.#options.endpoint.host}:${this.#options.endpoint.port}`, connectTimeoutMs));
        return;
      }
      this.#arm(connectLeft);
      return;
    }
    const since = Math.max(this.#sentMs[this.#head] as number, this.#lastDataMs);
    const left = since + timeoutMs - now;
    if (left <= 0) {
      this.#teardown(socket, new RequestTimeoutError('No answer', timeoutMs));
      return;
    }
    this.#arm(left);
  };
}
