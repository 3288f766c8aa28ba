/**
 * The load generator's requests as ready-made HTTP/1.1 text. Everything but the sequence header,
 * the length and the body is the same for every request of an operation, so that part is built
 * once per operation and kind of authorization and reused: a request costs one string
 * concatenation.
 */
import { ACCEPT_IDENTITY } from './answer-body.js';
import type { Endpoint } from './connection.js';

/** Where a target URL's requests go: host, port and TLS, from the URL's scheme. */
export function endpointOf(url: URL): Endpoint {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new TypeError(
      `The target URL must start with http:// or https://, got "${url.protocol}//…". Give the service's base URL, e.g. https://api.example.com.`,
    );
  }
  const tls = url.protocol === 'https:';
  // URL keeps IPv6 addresses in brackets; sockets want them bare.
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  return { host, port: url.port === '' ? (tls ? 443 : 80) : Number(url.port), tls };
}

export class RequestText {
  readonly #pathPrefix: string;
  readonly #hostLine: string;
  readonly #authorization: string;
  readonly #heads = new Map<string, string>();

  /** `url` may carry a base path: every request path goes under it. */
  constructor(url: URL, rootKey: string) {
    if (/[\r\n\0]/.test(rootKey))
      throw new TypeError('The root key contains a line break or NUL, which cannot go in an HTTP header: check the key you were given.');
    this.#pathPrefix = `${url.pathname.replace(/\/+$/, '')}/v2/`;
    this.#hostLine = `host: ${url.host}\r\n`;
    this.#authorization = `authorization: Bearer ${rootKey}\r\n`;
  }

  /**
   * One POST of `op` with the JSON `body` text; `seq` goes in the named header when given;
   * `anonymous` leaves the authorization out.
   */
  post(op: string, anonymous: boolean, seqHeader: string, seq: number | undefined, body: string): string {
    const key = anonymous ? `-${op}` : op;
    let head = this.#heads.get(key);
    if (head === undefined) {
      head = `POST ${this.#pathPrefix}${op} HTTP/1.1\r\n${this.#hostLine}connection: keep-alive\r\n${ACCEPT_IDENTITY}content-type: application/json\r\n${anonymous ? '' : this.#authorization}`;
      this.#heads.set(key, head);
    }
    const seqLine = seq === undefined ? '' : `${seqHeader}: ${seq}\r\n`;
    return `${head}${seqLine}content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
  }
}
