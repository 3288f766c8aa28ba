/**
 * The load client's connection against real servers on 127.0.0.1 (node:http, raw node:net that
 * writes answers as the test wants them, node:tls): bodies of both framings, answers cut into
 * single bytes, pipelined answers in one write, keep-alive reuse and replacement, a server that
 * closes mid-pipeline or says Connection: close, timeouts, a refused port, https with SNI.
 */
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { type AddressInfo, type Server, type Socket, createServer } from 'node:net';
import { performance } from 'node:perf_hooks';
import { createServer as createTlsServer } from 'node:tls';
import { afterEach, describe, expect, test } from 'vitest';
import { Http1Connection } from '../../../src/load/http1/connection.js';
import { RequestText, endpointOf } from '../../../src/load/http1/request-text.js';
import { classifyTransportError } from '../../../src/load/answers/transport-error.js';
import type { TransportErrorKind } from '../../../src/report/model.js';
import { unusedPort } from '../../helpers/load.js';
import { TEST_TLS_CERT, TEST_TLS_KEY, TEST_TLS_NAME } from '../../helpers/tls-fixture.js';

type Outcome = { status: number; body: string } | { kind: TransportErrorKind; message: string };
interface Tag {
  done: (outcome: Outcome) => void;
}

const servers: Array<{ close: () => void }> = [];
const connections: Array<Http1Connection<Tag>> = [];

afterEach(() => {
  for (const c of connections.splice(0)) c.destroy();
  for (const s of servers.splice(0)) s.close();
});

function connection(url: string, options: { timeoutMs?: number; tlsOptions?: object } = {}): Http1Connection<Tag> {
  const endpoint = { ...endpointOf(new URL(url)), tlsOptions: options.tlsOptions };
  const c = new Http1Connection<Tag>(
    { endpoint, timeoutMs: options.timeoutMs ?? 10_000, connectTimeoutMs: 5_000 },
    {
      answered: (tag, r) => tag.done({ status: r.status, body: r.body.toString('utf8') }),
      failed: (tag, error) => tag.done({ kind: classifyTransportError(error), message: error.message }),
    },
  );
  connections.push(c);
  return c;
}

/** Sends one request now (it leaves with the others sent in the same turn); resolves with its outcome. */
function send(c: Http1Connection<Tag>, url: string, seq: number, body = `{"n":${seq}}`): Promise<Outcome> {
  const text = new RequestText(new URL(url), 'root_test_key').post('keys.verifyKey', false, 'x-keysim-seq', seq, body);
  return new Promise((done) => c.send({ done }, text, performance.now()));
}

async function listen<S extends Server | HttpServer>(server: S, scheme = 'http'): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push({ close: () => server.close() });
  return `${scheme}://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** A raw server: `onRequests(socket, heads)` is told of each complete request head seen so far on a connection. */
async function rawServer(onRequest: (socket: Socket, seq: number, count: number) => void): Promise<{ url: string; sockets: Socket[] }> {
  const sockets: Socket[] = [];
  const server = createServer((socket) => {
    sockets.push(socket);
    socket.setNoDelay(true);
    let text = '';
    let count = 0;
    socket.on('data', (chunk) => {
      text += chunk.toString('latin1');
      // Requests are head + a JSON body of the stated length; take whole ones off the front.
      for (;;) {
        const end = text.indexOf('\r\n\r\n');
        if (end < 0) return;
        const length = Number(/content-length: (\d+)/i.exec(text.slice(0, end))?.[1] ?? 0);
        if (text.length < end + 4 + length) return;
        const seq = Number(/x-keysim-seq: (\d+)/i.exec(text.slice(0, end))?.[1] ?? -1);
        text = text.slice(end + 4 + length);
        count++;
        onRequest(socket, seq, count);
      }
    });
    socket.on('error', () => undefined);
  });
  const url = await listen(server);
  servers.push({ close: () => sockets.forEach((s) => s.destroy()) });
  return { url, sockets };
}

const answer = (seq: number, extra = '') => {
  const body = `{"seq":${seq}}`;
  return `HTTP/1.1 200 OK\r\nCONTENT-TYPE: application/json\r\nContent-Length: ${body.length}\r\n${extra}\r\n${body}`;
};

describe('answers', () => {
  test('Content-Length and chunked bodies from node:http, 204 without a body, one connection reused throughout', async () => {
    let connectionsSeen = 0;
    const server = createHttpServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        const seq = Number(req.headers['x-keysim-seq']);
        if (seq % 3 === 0) res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
        else if (seq % 3 === 1) {
          // No length: node:http sends it chunked, in two chunks.
          res.writeHead(200, { 'content-type': 'application/json' });
          res.write(body.slice(0, 3));
          setImmediate(() => res.end(body.slice(3)));
        } else res.writeHead(204).end();
      });
    });
    server.on('connection', () => connectionsSeen++);
    const url = await listen(server);
    const c = connection(url);
    for (let seq = 0; seq < 12; seq++) {
      const out = await send(c, url, seq, `{"n":${seq},"s":"é"}`);
      expect(out).toEqual(seq % 3 === 2 ? { status: 204, body: '' } : { status: 200, body: `{"n":${seq},"s":"é"}` });
    }
    expect(connectionsSeen).toBe(1);
    expect(c.inFlight).toBe(0);
  });

  test('answers written one byte at a time are read whole, in order', async () => {
    const { url } = await rawServer((socket, seq) => {
      const bytes = Buffer.from(answer(seq, 'X-Padding: yes\r\n'));
      let i = 0;
      const drip = () => {
        if (i < bytes.length && !socket.destroyed) {
          socket.write(bytes.subarray(i, i + 1));
          i++;
          setImmediate(drip);
        }
      };
      drip();
    });
    const c = connection(url);
    for (let seq = 0; seq < 3; seq++) expect(await send(c, url, seq)).toEqual({ status: 200, body: `{"seq":${seq}}` });
  });

  test('pipelined: requests sent in one turn leave together; answers written in one piece are matched in order', async () => {
    let pending: number[] = [];
    const { url, sockets } = await rawServer((socket, seq) => {
      pending.push(seq);
      if (pending.length === 5) {
        socket.write(pending.map((s) => answer(s)).join(''));
        pending = [];
      }
    });
    const c = connection(url);
    const outs = [0, 1, 2, 3, 4].map((seq) => send(c, url, seq));
    expect(c.inFlight).toBe(5);
    expect(await Promise.all(outs)).toEqual([0, 1, 2, 3, 4].map((seq) => ({ status: 200, body: `{"seq":${seq}}` })));
    expect(sockets).toHaveLength(1);
  });
});

describe('connections that end', () => {
  test("enqueue after close failed unwritten requests: a request sent by an answer's handler, never written when the same read broke the connection, goes on a new connection", async () => {
    const server = await rawServer((socket, seq) => {
      // Request 1's answer and, in the same write, bytes that are no HTTP: the connection is done for.
      if (seq === 1) socket.write(`${answer(1)}GARBAGE / NOT-HTTP\r\n\r\n`);
      else socket.write(answer(seq));
    });
    const c = connection(server.url);
    const second = new Promise<Outcome>((resolveSecond) => {
      const text = (seq: number) => new RequestText(new URL(server.url), 'root_test_key').post('keys.verifyKey', false, 'x-keysim-seq', seq, `{"n":${seq}}`);
      // Sent from inside the handler of answer 1, before the parser reads the garbage after it.
      c.send({ done: () => c.send({ done: resolveSecond }, text(2), performance.now()) }, text(1), performance.now());
    });
    expect(await second).toEqual({ status: 200, body: '{"seq":2}' });
    // Request 2 reached the server once, on a second connection.
    expect(server.sockets).toHaveLength(2);
  });

  test('a request written on a connection the server then closed without answering is failed (unknown), never written again', async () => {
    // The server reads request 2 and closes without an answer: it may have executed it.
    const server = await rawServer((socket, seq) => (seq === 1 ? socket.write(answer(1)) : socket.destroy()));
    const c = connection(server.url);
    expect(await send(c, server.url, 1)).toEqual({ status: 200, body: '{"seq":1}' });
    expect(await send(c, server.url, 2)).toMatchObject({ kind: 'reset' });
    expect(server.sockets).toHaveLength(1);
  });

  test('a server that closes mid-pipeline: the answered request stands, the others fail as reset (not resent); the next send reconnects', async () => {
    const seen: number[] = [];
    const { url, sockets } = await rawServer((socket, seq, count) => {
      seen.push(seq);
      if (count === 1) socket.write(answer(seq));
      if (count === 3) socket.destroy();
    });
    const c = connection(url);
    const outs = await Promise.all([1, 2, 3].map((seq) => send(c, url, seq)));
    expect(outs[0]).toEqual({ status: 200, body: '{"seq":1}' });
    expect(outs.slice(1).map((o) => ('kind' in o ? o.kind : o.status))).toEqual(['reset', 'reset']);
    // Nothing was sent twice.
    expect(seen).toEqual([1, 2, 3]);
    expect(await send(c, url, 4)).toEqual({ status: 200, body: '{"seq":4}' });
    expect(sockets).toHaveLength(2);
    expect(seen).toEqual([1, 2, 3, 4]);
  });

  test('an answer with Connection: close: it is delivered, the requests pipelined behind it fail as reset, the next send opens a new connection', async () => {
    let connectionsSeen = 0;
    const server = createHttpServer((req, res) => {
      req.resume();
      req.on('end', () => {
        if (req.headers['x-keysim-seq'] === '1') res.writeHead(200, { connection: 'close', 'content-length': 2 }).end('{}');
        else res.writeHead(200, { 'content-length': 2 }).end('{}');
      });
    });
    server.on('connection', () => connectionsSeen++);
    const url = await listen(server);
    const c = connection(url);
    const outs = await Promise.all([1, 2, 3].map((seq) => send(c, url, seq)));
    expect(outs[0]).toEqual({ status: 200, body: '{}' });
    expect(outs.slice(1).map((o) => ('kind' in o ? o.kind : o.status))).toEqual(['reset', 'reset']);
    expect(await send(c, url, 4)).toEqual({ status: 200, body: '{}' });
    expect(connectionsSeen).toBe(2);
  });

  test("a connection idle past the server's Keep-Alive timeout is replaced before the next send", async () => {
    const { url, sockets } = await rawServer((socket, seq) => socket.write(answer(seq, 'Keep-Alive: timeout=1\r\n')));
    const c = connection(url);
    expect(await send(c, url, 1)).toMatchObject({ status: 200 });
    // Announced 1 s, less the 1 s margin: any idle time is too long.
    await new Promise((r) => setTimeout(r, 20));
    expect(await send(c, url, 2)).toMatchObject({ status: 200 });
    expect(sockets).toHaveLength(2);
  });

  test('no answer within the timeout: every request on the connection fails as a timeout, not sooner', async () => {
    const { url } = await rawServer(() => undefined);
    const c = connection(url, { timeoutMs: 300 });
    const started = performance.now();
    const outs = await Promise.all([1, 2].map((seq) => send(c, url, seq)));
    expect(performance.now() - started).toBeGreaterThanOrEqual(299);
    expect(outs.map((o) => ('kind' in o ? o.kind : o.status))).toEqual(['timeout', 'timeout']);
    expect(c.inFlight).toBe(0);
  });

  test('a port with nothing listening: refused', async () => {
    const url = `http://127.0.0.1:${await unusedPort()}`;
    const c = connection(url);
    const outs = await Promise.all([1, 2].map((seq) => send(c, url, seq)));
    expect(outs.map((o) => ('kind' in o ? o.kind : o.status))).toEqual(['refused', 'refused']);
  });

  test('bytes that are not HTTP fail the requests as "other", naming the problem', async () => {
    const { url } = await rawServer((socket) => socket.write('SSH-2.0-OpenSSH_9.6\r\n\r\n'));
    const c = connection(url);
    const out = await send(c, url, 1);
    expect(out).toMatchObject({ kind: 'other', message: expect.stringMatching(/not an HTTP\/1\.x response/) });
  });

  test('destroy(): outstanding requests fail once, as abandoned', async () => {
    const { url } = await rawServer(() => undefined);
    const c = connection(url);
    const out = send(c, url, 1);
    await new Promise((r) => setTimeout(r, 20));
    c.destroy();
    expect(await out).toMatchObject({ kind: 'other', message: expect.stringMatching(/abandoned/) });
  });
});

describe('https', () => {
  async function tlsServer(): Promise<{ url: string; names: Array<string | false | null> }> {
    const names: Array<string | false | null> = [];
    const server = createTlsServer({ key: TEST_TLS_KEY, cert: TEST_TLS_CERT }, (socket) => {
      names.push(socket.servername);
      socket.on('data', () => socket.write(answer(7)));
      socket.on('error', () => undefined);
    });
    const url = await listen(server, 'https');
    return { url, names };
  }
  /** The test name resolves to 127.0.0.1, so the URL can carry a host name (sent as SNI). */
  const lookup = (
    _host: string,
    options: { all?: boolean },
    callback: (error: null, address: string | Array<{ address: string; family: number }>, family?: number) => void,
  ) => (options.all === true ? callback(null, [{ address: '127.0.0.1', family: 4 }]) : callback(null, '127.0.0.1', 4));

  test('an https target: TLS with the host name as SNI, the certificate checked against the given CA', async () => {
    const { url, names } = await tlsServer();
    const named = url.replace('127.0.0.1', TEST_TLS_NAME);
    const c = connection(named, { tlsOptions: { ca: TEST_TLS_CERT, lookup } });
    expect(await send(c, named, 7)).toEqual({ status: 200, body: '{"seq":7}' });
    expect(names).toEqual([TEST_TLS_NAME]);
  });

  test('an https target with a certificate nobody vouches for is refused by default (rejectUnauthorized)', async () => {
    const { url } = await tlsServer();
    const named = url.replace('127.0.0.1', TEST_TLS_NAME);
    const c = connection(named, { tlsOptions: { lookup } });
    expect(await send(c, named, 7)).toMatchObject({ kind: 'other', message: expect.stringMatching(/self.signed/i) });
  });
});
