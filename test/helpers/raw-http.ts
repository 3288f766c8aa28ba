/**
 * Raw HTTP/1.1 on one socket, for the tests that must control the bytes on the wire: pipelined
 * requests written in the pieces the test chooses, and the answers cut out of the byte stream as
 * they come (content-length or chunked bodies), with their exact bytes kept.
 * Every request says `host: localhost`: start the simulator with `checkHost: false`.
 */
import { type Socket, connect } from 'node:net';

export interface RawAnswer {
  status: number;
  /** Lower-case names; a repeated header keeps its last value. */
  headers: Record<string, string>;
  /** The body, de-chunked. */
  body: Buffer;
  /** The answer's bytes exactly as they arrived: status line, headers, body (chunk framing included). */
  raw: Buffer;
}

/** One request's bytes. A body gets a content-length unless `headers` already sets one. */
export function rawRequest(method: string, path: string, headers: Record<string, string> = {}, body?: string | Buffer): Buffer {
  const bytes = body === undefined ? undefined : Buffer.isBuffer(body) ? body : Buffer.from(body);
  const lines = [`${method} ${path} HTTP/1.1`];
  const all: Record<string, string> = { host: 'localhost', ...headers };
  if (bytes !== undefined && !Object.keys(all).some((name) => name.toLowerCase() === 'content-length')) all['content-length'] = String(bytes.length);
  for (const [name, value] of Object.entries(all)) lines.push(`${name}: ${value}`);
  return Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), bytes ?? Buffer.alloc(0)]);
}

/** A JSON POST with a bearer token (null: no Authorization header). */
export function rawPost(path: string, body: unknown, token: string | null, extra: Record<string, string> = {}): Buffer {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...extra };
  if (token !== null) headers.authorization = `Bearer ${token}`;
  return rawRequest('POST', path, headers, typeof body === 'string' ? body : JSON.stringify(body));
}

const CRLF = Buffer.from('\r\n');
const HEAD_END = Buffer.from('\r\n\r\n');

/** The end of a chunked body starting at `from` and the body itself, or undefined while incomplete. */
function chunkedEnd(bytes: Buffer, from: number): { end: number; body: Buffer } | undefined {
  const parts: Buffer[] = [];
  let at = from;
  for (;;) {
    const lineEnd = bytes.indexOf(CRLF, at);
    if (lineEnd === -1) return undefined;
    const size = Number.parseInt(bytes.subarray(at, lineEnd).toString('latin1').split(';')[0] ?? '', 16);
    if (!Number.isInteger(size) || size < 0) throw new Error(`bad chunk size line: ${bytes.subarray(at, lineEnd).toString('latin1')}`);
    if (size === 0) {
      // No trailers from this server: the last chunk is `0\r\n\r\n`.
      if (bytes.length < lineEnd + 4) return undefined;
      return { end: lineEnd + 4, body: Buffer.concat(parts) };
    }
    const dataEnd = lineEnd + 2 + size;
    if (bytes.length < dataEnd + 2) return undefined;
    parts.push(bytes.subarray(lineEnd + 2, dataEnd));
    at = dataEnd + 2;
  }
}

/** Cuts the complete answers off the front of `bytes`; what is left is an incomplete answer (or nothing). */
export function parseAnswers(bytes: Buffer): { answers: RawAnswer[]; rest: Buffer } {
  const answers: RawAnswer[] = [];
  let at = 0;
  for (;;) {
    const headEnd = bytes.indexOf(HEAD_END, at);
    if (headEnd === -1) break;
    const [statusLine = '', ...headerLines] = bytes.subarray(at, headEnd).toString('latin1').split('\r\n');
    const status = Number(/^HTTP\/1\.1 (\d{3}) /.exec(statusLine)?.[1]);
    if (!Number.isInteger(status)) throw new Error(`not an HTTP/1.1 status line: ${statusLine}`);
    const headers: Record<string, string> = {};
    for (const line of headerLines) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    const bodyAt = headEnd + 4;
    let end: number;
    let body: Buffer;
    if (headers['transfer-encoding'] === 'chunked') {
      const chunked = chunkedEnd(bytes, bodyAt);
      if (chunked === undefined) break;
      ({ end, body } = chunked);
    } else {
      end = bodyAt + Number(headers['content-length'] ?? 0);
      if (bytes.length < end) break;
      body = bytes.subarray(bodyAt, end);
    }
    answers.push({ status, headers, body: Buffer.from(body), raw: Buffer.from(bytes.subarray(at, end)) });
    at = end;
  }
  return { answers, rest: bytes.subarray(at) };
}

export interface Exchange {
  answers: RawAnswer[];
  /** Every byte received, in order. */
  bytes: Buffer;
  /** The server ended or closed the connection (before the test's own close). */
  closedByServer: boolean;
  /** An error the client socket saw (e.g. ECONNRESET after the last answer), if any. */
  error?: NodeJS.ErrnoException;
}

/** Opens a connection to `url` (http://host:port). */
export function openSocket(url: string): Promise<Socket> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => {
      socket.off('error', reject);
      resolve(socket);
    });
    socket.once('error', reject);
  });
}

/**
 * Writes `pieces` one after the other (each its own `write`, a turn of the event loop apart
 * when `spread`) and reads until `expected` answers arrived or the server closed; then closes.
 */
export async function exchange(url: string, pieces: Buffer[], expected: number, options: { spread?: boolean } = {}): Promise<Exchange> {
  const socket = await openSocket(url);
  const received: Buffer[] = [];
  return new Promise((resolve) => {
    let error: NodeJS.ErrnoException | undefined;
    let settled = false;
    const finish = (closedByServer: boolean) => {
      if (settled) return;
      settled = true;
      socket.destroy();
      const bytes = Buffer.concat(received);
      resolve({ answers: parseAnswers(bytes).answers, bytes, closedByServer, ...(error === undefined ? {} : { error }) });
    };
    socket.on('data', (data: Buffer) => {
      received.push(data);
      if (parseAnswers(Buffer.concat(received)).answers.length >= expected) finish(false);
    });
    socket.on('error', (e: NodeJS.ErrnoException) => {
      error = e;
    });
    socket.on('end', () => finish(true));
    socket.on('close', () => finish(true));
    void (async () => {
      for (const piece of pieces) {
        if (socket.destroyed) return;
        socket.write(piece);
        if (options.spread === true) await new Promise((r) => setTimeout(r, 1));
      }
    })();
  });
}
