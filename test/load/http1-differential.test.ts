/**
 * keysim's own HTTP/1.1 client (src/load/http1/) against undici, on one real node:http server on
 * 127.0.0.1. The same sequence of requests — GET and POST (the two methods the client sends),
 * bodies of every size, large request and answer headers, Content-Length and chunked answers,
 * gzip it did not ask for, statuses without a body, keep-alive reuse and a server that closes a
 * connection after every N requests — must give the same status, the same headers that matter
 * (Content-Type, Content-Encoding, Date) and the same body bytes through both, and reach the
 * server as the same requests over the same number of connections.
 *
 * And why keysim has its own client: a request whose answer is lost is never sent again. undici
 * sends a lone POST once too, but it pipelines a POST only when told the request is idempotent,
 * and then sends again the requests pipelined behind a lost answer — a verification the server
 * already executed, executed twice. keysim's connection, which pipelines POSTs, sends each once.
 */
import { createHash } from 'node:crypto';
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { gzipSync } from 'node:zlib';
import { Client } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { type ClientAnswer, Http1Client } from '../../src/load/http1/client.js';
import { Http1Connection } from '../../src/load/http1/connection.js';
import { RequestText, endpointOf } from '../../src/load/http1/request-text.js';

/** Answers per connection before the server closes it (`Connection: close` on the last one). */
const REQUESTS_PER_CONNECTION = 5;
const FIXED_DATE = 'Wed, 01 Mar 2028 00:00:00 GMT';
/** Large, but under the 16 KiB of headers node:http and undici accept by default. */
const LARGE_HEADER = 'h'.repeat(10_000);

/** What the server saw of one request: what both clients must send alike. */
interface Seen {
  method: string;
  path: string;
  contentType: string | null;
  bodyBytes: number;
  bodySha256: string;
  testHeaders: Record<string, string>;
}

/** One answer as a client gave it, reduced to what a caller of either client can rely on. */
interface Outcome {
  status: number;
  contentType: string | null;
  contentEncoding: string | null;
  dateMs: number | null;
  body: string;
}

/** A deterministic body of `size` bytes, different for each seed (multi-byte UTF-8 in it). */
function bytesOf(size: number, seed: number): Buffer {
  const unit = Buffer.from(`{${seed}:é€😀}`, 'utf8');
  const out = Buffer.alloc(size);
  for (let i = 0; i < size; i++) out[i] = unit[i % unit.length] as number;
  return out;
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

let server: Server;
let baseUrl: string;
const seen: Seen[] = [];
let connectionsOpened = 0;
/** Executions per operation id (`x-op`), for the lost-answer tests. */
const executed = new Map<string, number>();

function answer(req: IncomingMessage, res: ServerResponse, body: Buffer): void {
  const url = new URL(req.url ?? '/', 'http://localhost');
  const n = Number(url.searchParams.get('n') ?? '0');
  const op = req.headers['x-op'];
  if (typeof op === 'string') executed.set(op, (executed.get(op) ?? 0) + 1);
  // The load generator's request text puts its operations under /v2/.
  switch (url.pathname.replace(/^\/v2\//, '/')) {
    case '/echo': {
      const text = JSON.stringify(seen.at(-1));
      res.writeHead(n === 0 ? 200 : n, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
      return;
    }
    case '/fixed': // Content-Length framing, n bytes
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': n }).end(bytesOf(n, n));
      return;
    case '/chunked': {
      // No length: node:http sends chunked, one chunk per write, each in a later turn; a trailer at the end.
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8', trailer: 'x-digest' });
      const data = bytesOf(n, n + 1);
      const piece = Math.max(1, Math.ceil(n / 7));
      let at = 0;
      const next = () => {
        if (at >= data.length) {
          res.addTrailers({ 'x-digest': sha256(data) });
          res.end();
          return;
        }
        res.write(data.subarray(at, at + piece));
        at += piece;
        setImmediate(next);
      };
      next();
      return;
    }
    case '/status': // a status with a JSON body (none for 204 and 304)
      if (n === 204 || n === 304) res.writeHead(n).end();
      else res.writeHead(n, { 'content-type': 'application/json' }).end(`{"status":${n}}`);
      return;
    case '/large-header':
      res.writeHead(200, { 'content-type': 'application/json', 'x-large': LARGE_HEADER, 'content-length': 2 }).end('{}');
      return;
    case '/gzip': {
      const zipped = gzipSync(JSON.stringify({ gzip: true, body: body.length }));
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'GZIP', 'content-length': zipped.length }).end(zipped);
      return;
    }
    case '/dated':
      res.setHeader('date', FIXED_DATE);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"dated":true}');
      return;
    case '/empty':
      res.writeHead(200, { 'content-length': 0 }).end();
      return;
    case '/lose': // executed, then the connection is destroyed before any answer
      req.socket.destroy();
      return;
    case '/lose-pair': {
      // Executed; once two requests pipelined on one connection are, it is destroyed with both
      // unanswered. A request executed before, sent again, is answered.
      if ((executed.get(String(op)) ?? 0) > 1) {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': 16 }).end('{"again":"true"}');
        return;
      }
      const unanswered = (pairs.get(req.socket) ?? 0) + 1;
      pairs.set(req.socket, unanswered);
      if (unanswered === 2) req.socket.destroy();
      return;
    }
    case '/count': {
      const text = JSON.stringify(Object.fromEntries(executed));
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
      return;
    }
    default:
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"no such path"}');
  }
}
/** Requests of /lose-pair executed and unanswered, per connection. */
const pairs = new WeakMap<Socket, number>();

beforeAll(async () => {
  server = createServer({ maxHeaderSize: 32 * 1024 }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const testHeaders = Object.fromEntries(
        Object.entries(req.headers)
          .filter(([name]) => name.startsWith('x-test-'))
          .map(([name, v]) => [name, String(v)]),
      );
      seen.push({
        method: req.method ?? '',
        path: req.url ?? '',
        contentType: req.headers['content-type'] ?? null,
        bodyBytes: body.length,
        bodySha256: sha256(body),
        testHeaders,
      });
      answer(req, res, body);
    });
  });
  server.maxRequestsPerSocket = REQUESTS_PER_CONNECTION;
  // Long enough that no idle close falls between two requests of a test, however slow the machine.
  server.keepAliveTimeout = 120_000;
  server.on('connection', () => connectionsOpened++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});
beforeEach(() => {
  seen.length = 0;
  executed.clear();
  connectionsOpened = 0;
});

interface Step {
  method: 'GET' | 'POST';
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

/** The sequence both clients send, one request after the other. */
function sequence(): Step[] {
  const json = (size: number, seed: number) => JSON.stringify({ seed, pad: bytesOf(size, seed).toString('utf8') });
  return [
    { method: 'GET', path: '/echo' },
    { method: 'POST', path: '/echo', body: '{"a":1}' },
    { method: 'POST', path: '/echo?n=201', body: json(300_000, 2), headers: { 'x-test-kind': 'large body' } },
    { method: 'GET', path: '/echo', headers: { 'x-test-large': LARGE_HEADER } },
    { method: 'POST', path: '/echo?n=429', body: '{}', headers: { 'x-test-a': 'one', 'x-test-b': 'two, three' } },
    { method: 'GET', path: '/fixed?n=0' },
    { method: 'GET', path: '/fixed?n=1' },
    { method: 'POST', path: '/fixed?n=1048576', body: '{"big":true}' },
    { method: 'GET', path: '/chunked?n=5' },
    { method: 'POST', path: '/chunked?n=700000', body: json(20_000, 9) },
    { method: 'GET', path: '/status?n=204' },
    { method: 'POST', path: '/status?n=204', body: '{}' },
    { method: 'GET', path: '/status?n=404' },
    { method: 'POST', path: '/status?n=500', body: '{"fail":true}' },
    { method: 'GET', path: '/status?n=503' },
    { method: 'GET', path: '/large-header' },
    { method: 'POST', path: '/gzip', body: '{"zip":1}' },
    { method: 'GET', path: '/dated' },
    { method: 'POST', path: '/empty', body: '' },
    { method: 'GET', path: '/no-such-path' },
    { method: 'POST', path: '/echo', body: json(10, 21), headers: { 'x-test-last': 'yes' } },
  ];
}

function outcomeOf(a: ClientAnswer): Outcome {
  return {
    status: a.status,
    contentType: a.contentType ?? null,
    contentEncoding: a.contentEncoding ?? null,
    dateMs: a.dateMs ?? null,
    body: a.body.toString('base64'),
  };
}

async function throughKeysim(steps: readonly Step[]): Promise<Outcome[]> {
  const client = new Http1Client(baseUrl, { timeoutMs: 60_000, connections: 1, dates: true });
  try {
    const out: Outcome[] = [];
    for (const s of steps) {
      const answer = await client.request({
        method: s.method,
        path: s.path,
        ...(s.headers === undefined ? {} : { headers: s.headers }),
        ...(s.body === undefined ? {} : { body: s.body }),
      });
      out.push(outcomeOf(answer));
    }
    return out;
  } finally {
    await client.close();
  }
}

/** One header's value as one string (undici gives repeated headers as an array), or null. */
function header(headers: Record<string, string | string[] | undefined>, name: string): string | null {
  const value = headers[name];
  return value === undefined ? null : Array.isArray(value) ? (value[0] ?? null) : value;
}

async function throughUndici(steps: readonly Step[]): Promise<Outcome[]> {
  // One connection, like keysim's client above: the connection count is comparable.
  const client = new Client(baseUrl, { headersTimeout: 60_000, bodyTimeout: 60_000 });
  try {
    const out: Outcome[] = [];
    for (const s of steps) {
      // keysim's client labels a body as JSON; undici is told the same.
      const headers = { ...s.headers, ...(s.body === undefined ? {} : { 'content-type': 'application/json' }) };
      const r = await client.request({ method: s.method, path: s.path, headers, ...(s.body === undefined ? {} : { body: s.body }) });
      const body = Buffer.from(await r.body.arrayBuffer());
      const date = header(r.headers, 'date');
      out.push({
        status: r.statusCode,
        contentType: header(r.headers, 'content-type'),
        contentEncoding: header(r.headers, 'content-encoding')?.toLowerCase() ?? null,
        dateMs: date === null || Number.isNaN(Date.parse(date)) ? null : Date.parse(date),
        body: body.toString('base64'),
      });
    }
    return out;
  } finally {
    await client.close();
  }
}

describe('keysim’s HTTP/1.1 client and undici, the same requests to one node:http server', () => {
  test('the same statuses, headers that matter and body bytes; the same requests on the same number of connections', async () => {
    const steps = sequence();
    const keysim = await throughKeysim(steps);
    const keysimSeen = seen.splice(0);
    const keysimConnections = connectionsOpened;
    connectionsOpened = 0;
    const undici = await throughUndici(steps);
    const undiciSeen = seen.splice(0);

    for (let i = 0; i < steps.length; i++) {
      const step = steps[i] as Step;
      const where = `${step.method} ${step.path}`;
      const k = keysim[i] as Outcome;
      const u = undici[i] as Outcome;
      // The Date of every answer but the fixed one is the second it was sent: compared where fixed.
      expect({ ...k, dateMs: null }, where).toEqual({ ...u, dateMs: null });
      if (step.path === '/dated') expect([k.dateMs, u.dateMs], where).toEqual([Date.parse(FIXED_DATE), Date.parse(FIXED_DATE)]);
    }
    expect(keysimSeen).toEqual(undiciSeen);
    expect(keysimSeen).toHaveLength(steps.length);

    // The answers are what the server wrote, not merely alike: a few of them by value.
    const body = (o: Outcome | undefined) => Buffer.from(o?.body ?? '', 'base64');
    expect(keysim.map((o) => o.status)).toEqual([200, 200, 201, 200, 429, 200, 200, 200, 200, 200, 204, 204, 404, 500, 503, 200, 200, 200, 200, 404, 200]);
    expect(JSON.parse(body(keysim[2]).toString()) as Seen).toMatchObject({
      method: 'POST',
      contentType: 'application/json',
      testHeaders: { 'x-test-kind': 'large body' },
    });
    expect(JSON.parse(body(keysim[3]).toString()) as Seen).toMatchObject({ method: 'GET', bodyBytes: 0, testHeaders: { 'x-test-large': LARGE_HEADER } });
    expect(body(keysim[7]).equals(bytesOf(1_048_576, 1_048_576))).toBe(true);
    expect(body(keysim[9]).equals(bytesOf(700_000, 700_001))).toBe(true);
    expect(keysim[10]?.body).toBe('');
    expect(keysim[16]?.contentEncoding).toBe('gzip');

    // Keep-alive: each connection carried the server's REQUESTS_PER_CONNECTION, then a new one was opened.
    const expected = Math.ceil(steps.length / REQUESTS_PER_CONNECTION);
    expect([keysimConnections, connectionsOpened]).toEqual([expected, expected]);
  });
});

/** Sends `s` through keysim's client and says how it ended: the answer's status, or the error's code. */
async function keysimOutcome(client: Http1Client, s: { method: 'GET' | 'POST'; path: string; op: string; retry?: boolean }): Promise<string | number> {
  try {
    const answer = await client.request({
      method: s.method,
      path: s.path,
      headers: { 'x-op': s.op },
      ...(s.method === 'POST' ? { body: '{}' } : {}),
      ...(s.retry === undefined ? {} : { retry: s.retry }),
    });
    return answer.status;
  } catch (error) {
    return String((error as { code?: unknown }).code);
  }
}

async function executedCounts(): Promise<Record<string, number>> {
  const client = new Client(baseUrl);
  try {
    const r = await client.request({ method: 'GET', path: '/count' });
    return (await r.body.json()) as Record<string, number>;
  } finally {
    await client.close();
  }
}

/** How each client reports a connection that closed under a request. */
const LOST = ['KEYSIM_CONNECTION_CLOSED', 'ECONNRESET', 'EPIPE'];
const UNDICI_LOST = ['UND_ERR_SOCKET', 'ECONNRESET', 'EPIPE'];

describe('a request whose answer is lost', () => {
  test('a lone POST that the server executed, then dropped, is sent once by keysim’s client (and by undici): the server sees it once', async () => {
    const client = new Http1Client(baseUrl, { timeoutMs: 60_000, connections: 1 });
    try {
      expect(LOST).toContain(await keysimOutcome(client, { method: 'POST', path: '/lose', op: 'keysim-post' }));
      // Any second send would have gone out on this client's one connection before this request.
      expect(await keysimOutcome(client, { method: 'GET', path: '/echo', op: 'keysim-after' })).toBe(200);
      // A read the caller marks harmless to repeat is sent again, once: the rule is the caller's.
      expect(LOST).toContain(await keysimOutcome(client, { method: 'GET', path: '/lose', op: 'keysim-read', retry: true }));
    } finally {
      await client.close();
    }

    const undici = new Client(baseUrl);
    try {
      const failed = await undici
        .request({ method: 'POST', path: '/lose', headers: { 'x-op': 'undici-post', 'content-type': 'application/json' }, body: '{}' })
        .then(
          () => 'answered',
          (error: { code?: string }) => error.code,
        );
      expect(UNDICI_LOST).toContain(failed);
      expect((await undici.request({ method: 'GET', path: '/echo' })).statusCode).toBe(200);
    } finally {
      await undici.close();
    }
    expect(await executedCounts()).toEqual({ 'keysim-post': 1, 'keysim-after': 1, 'keysim-read': 2, 'undici-post': 1 });
  });

  test('two POSTs pipelined on one connection, both executed and the connection dropped: keysim’s connection sends each once, undici sends the second again', async () => {
    // keysim: the load generator's connection, both requests written in one turn (pipelined).
    const url = new URL(baseUrl);
    const text = new RequestText(url, 'root_test_key');
    const connection = new Http1Connection<(outcome: string | number) => void>(
      { endpoint: endpointOf(url), timeoutMs: 60_000, connectTimeoutMs: 30_000 },
      { answered: (done, r) => done(r.status), failed: (done, error) => done(String((error as { code?: unknown }).code)) },
    );
    // The request text carries a number in a header of our choice: the operation id is 1, 2, 3.
    const send = (op: number, path: string) =>
      new Promise<string | number>((done) => connection.send(done, text.post(path, false, 'x-op', op, '{}'), performance.now()));
    try {
      const pair = await Promise.all([send(1, 'lose-pair'), send(2, 'lose-pair')]);
      expect(LOST).toContain(pair[0]);
      expect(LOST).toContain(pair[1]);
      // On a new connection of the same object: a second send of either would have gone before this one.
      expect(await send(3, 'echo')).toBe(200);
    } finally {
      connection.destroy();
    }

    // undici pipelines a POST only when told it is idempotent (and not blocking); so told, it
    // sends the request behind the lost answer again on a new connection.
    const undici = new Client(baseUrl, { pipelining: 2 });
    try {
      const post = (op: string) =>
        undici
          .request({
            method: 'POST',
            path: '/lose-pair',
            headers: { 'x-op': op, 'content-type': 'application/json' },
            body: '{}',
            idempotent: true,
            blocking: false,
          })
          .then(
            async (r) => {
              await r.body.dump();
              return r.statusCode;
            },
            (error: { code?: string }) => String(error.code),
          );
      const [a, b] = await Promise.all([post('undici-a'), post('undici-b')]);
      expect(UNDICI_LOST).toContain(a);
      expect(b).toBe(200);
    } finally {
      await undici.close();
    }
    expect(await executedCounts()).toEqual({ '1': 1, '2': 1, '3': 1, 'undici-a': 1, 'undici-b': 2 });
  });
});
