/**
 * keysim's HTTP/1.1 client for everything that is not the measured load: the pre-flight check,
 * target detection, fixtures, end-of-run checks, clock-skew probes and cleanup. It runs on the
 * load generator's own connection (connection.ts), so both accept the same answers (the same
 * 64 KiB head and 16 MiB body limits, the same TLS trust), never send on a connection the server
 * closed, and learn the server's idle close the same way; it sends `Accept-Encoding: identity`.
 *
 * A request is never sent twice behind a lost answer — a POST may have spent credits — except
 * when the caller says a retry cannot harm (`retry: true`: a read), and then once, on a new
 * connection, after the connection broke (reset or closed; not after a timeout).
 */
import type { ConnectionOptions as TlsConnectionOptions } from 'node:tls';
import { performance } from 'node:perf_hooks';
import { ACCEPT_IDENTITY } from './answer-body.js';
import { Http1Connection } from './connection.js';
import { IdleCloseLearner } from './idle-close.js';
import { endpointOf } from './request-text.js';
import type { ParsedResponse } from './response-parser.js';

export interface Http1ClientOptions {
  timeoutMs: number;
  connectTimeoutMs?: number;
  /** Connections at most (requests beyond wait for one). Default 16. */
  connections?: number;
  /** PEM certificates of the CA(s) to trust (--ca). */
  ca?: string | undefined;
  /** Extra TLS options (tests: a host name lookup). */
  tlsOptions?: TlsConnectionOptions | undefined;
  /** Read the answers' Date headers. */
  dates?: boolean;
  /** The body limit, bytes (default 16 MiB, the load client's). */
  maxBodyBytes?: number;
}

export interface ClientRequest {
  method: 'GET' | 'POST';
  /** Path and query, starting with "/" (the base URL's path is put before it). */
  path: string;
  headers?: Record<string, string>;
  /** A JSON text (sent with content-type application/json). */
  body?: string;
  /** A retry cannot harm (a read): retried once on a new connection when the connection broke. */
  retry?: boolean;
}

/** An answer, its body copied out of the read buffer (still content-coded, as sent). */
export type ClientAnswer = Omit<ParsedResponse, 'close' | 'keepAliveMs'>;

interface Exchange {
  resolve(answer: ClientAnswer): void;
  reject(error: Error): void;
}

/** Breaks of the connection after which a read is worth one more try (not timeouts: the server is slow, not gone). */
const RETRYABLE = new Set(['KEYSIM_CONNECTION_CLOSED', 'ECONNRESET', 'EPIPE']);

export class Http1Client {
  readonly #url: URL;
  readonly #pathPrefix: string;
  readonly #connections: Array<Http1Connection<Exchange>> = [];
  readonly #idle: Array<Http1Connection<Exchange>> = [];
  readonly #waiting: Array<(connection: Http1Connection<Exchange>) => void> = [];
  readonly #max: number;
  readonly #make: () => Http1Connection<Exchange>;
  #closed = false;

  /** `baseUrl`: http(s), its path put before every request's. */
  constructor(baseUrl: string, options: Http1ClientOptions) {
    this.#url = new URL(baseUrl);
    this.#pathPrefix = this.#url.pathname.replace(/\/+$/, '');
    this.#max = Math.max(1, options.connections ?? 16);
    const tlsOptions =
      options.ca === undefined && options.tlsOptions === undefined
        ? undefined
        : { ...options.tlsOptions, ...(options.ca === undefined ? {} : { ca: options.ca }) };
    const endpoint = { ...endpointOf(this.#url), tlsOptions };
    const idleClose = new IdleCloseLearner();
    const connectionOptions = {
      endpoint,
      timeoutMs: options.timeoutMs,
      connectTimeoutMs: options.connectTimeoutMs ?? Math.min(options.timeoutMs, 10_000),
      idleClose,
      dates: options.dates === true,
      maxBodyBytes: options.maxBodyBytes,
    };
    const handlers = {
      answered: (exchange: Exchange, r: ParsedResponse) =>
        exchange.resolve({
          status: r.status,
          body: Buffer.from(r.body),
          contentType: r.contentType,
          contentEncoding: r.contentEncoding,
          dateMs: r.dateMs,
          region: r.region,
        }),
      failed: (exchange: Exchange, error: Error) => exchange.reject(error),
    };
    this.#make = () => new Http1Connection<Exchange>(connectionOptions, handlers);
  }

  /** Sends one request and waits for its answer; rejects with the connection's error. */
  async request(req: ClientRequest): Promise<ClientAnswer> {
    try {
      return await this.#once(req);
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      if (req.retry !== true || this.#closed || typeof code !== 'string' || !RETRYABLE.has(code)) throw error;
      // A read whose connection broke: once more, on a new connection (the broken one is gone).
      return this.#once(req);
    }
  }

  /** Closes every connection; requests still waiting fail as abandoned. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const connection of this.#connections) connection.destroy();
    this.#connections.length = 0;
    this.#idle.length = 0;
  }

  async #once(req: ClientRequest): Promise<ClientAnswer> {
    const connection = await this.#acquire();
    try {
      return await new Promise<ClientAnswer>((resolve, reject) => connection.send({ resolve, reject }, this.#text(req), performance.now()));
    } finally {
      this.#release(connection);
    }
  }

  #text(req: ClientRequest): string {
    let head = `${req.method} ${this.#pathPrefix}${req.path} HTTP/1.1\r\nhost: ${this.#url.host}\r\nconnection: keep-alive\r\n${ACCEPT_IDENTITY}`;
    for (const [name, value] of Object.entries(req.headers ?? {})) {
      if (/[\r\n\0]/.test(name) || /[\r\n\0]/.test(value))
        throw new TypeError(`The header ${JSON.stringify(name)} contains a line break or NUL, which cannot go in an HTTP header.`);
      head += `${name}: ${value}\r\n`;
    }
    if (req.body === undefined) return `${head}\r\n`;
    return `${head}content-type: application/json\r\ncontent-length: ${Buffer.byteLength(req.body)}\r\n\r\n${req.body}`;
  }

  #acquire(): Promise<Http1Connection<Exchange>> {
    if (this.#closed) return Promise.reject(new Error('The HTTP client was closed.'));
    const idle = this.#idle.pop();
    if (idle !== undefined) return Promise.resolve(idle);
    if (this.#connections.length < this.#max) {
      const connection = this.#make();
      this.#connections.push(connection);
      return Promise.resolve(connection);
    }
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  #release(connection: Http1Connection<Exchange>): void {
    if (this.#closed) return;
    const next = this.#waiting.shift();
    if (next !== undefined) next(connection);
    else this.#idle.push(connection);
  }
}
