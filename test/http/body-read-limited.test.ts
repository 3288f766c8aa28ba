/**
 * readLimited, the one step under both ways of reading a body (whole, and a restore as it
 * arrives): what its sink is handed, over real sockets on 127.0.0.1.
 */
import { type IncomingMessage, type Server, createServer } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { afterEach, describe, expect, test } from 'vitest';
import { type BodySink, collectBody, readLimited } from '../../src/http/body.js';

const LIMIT = 1024;

/** Everything a sink was handed, in order. */
type Event = { kind: 'chunk'; bytes: number } | { kind: 'end' } | { kind: 'refuse'; reason: string };

let server: Server | undefined;
afterEach(async () => {
  const s = server;
  server = undefined;
  if (s === undefined) return;
  s.closeAllConnections();
  await new Promise<void>((resolve) => s.close(() => resolve()));
});

/** A server whose every request is read by readLimited into a recording sink; resolves each request's events once it settles. */
async function recordingServer(onSettled: (events: Event[], req: IncomingMessage) => void): Promise<number> {
  server = createServer((req, res) => {
    const events: Event[] = [];
    const settle = () => {
      onSettled(events, req);
      if (!res.headersSent && !res.destroyed) res.end('done');
    };
    const sink: BodySink = {
      chunk: (chunk) => events.push({ kind: 'chunk', bytes: chunk.length }),
      end: () => {
        events.push({ kind: 'end' });
        settle();
      },
      refuse: (reason) => {
        events.push({ kind: 'refuse', reason });
        // Let any further events arrive (none may), then report.
        setTimeout(settle, 200);
      },
    };
    readLimited(req, LIMIT, sink);
  });
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  return (server?.address() as AddressInfo).port;
}

/** Writes raw request text, in the given pieces, and leaves the socket open (or destroys it when `cut`). */
function send(port: number, pieces: readonly string[], cut = false): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      let i = 0;
      const next = () => {
        if (i === pieces.length) {
          if (cut) socket.destroy();
          resolve();
          return;
        }
        socket.write(pieces[i++] as string);
        setTimeout(next, 20);
      };
      next();
    });
    socket.on('data', () => {});
    socket.on('error', reject);
  });
}

function head(contentLength: number): string {
  return `POST /x HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: ${contentLength}\r\n\r\n`;
}

describe('readLimited', () => {
  test('a body within the limit: every chunk in order, then end, and nothing else', async () => {
    const settled = new Promise<Event[]>(
      (resolve) => void recordingServer((events) => resolve(events)).then((port) => send(port, [head(30), 'a'.repeat(10), 'b'.repeat(20)])),
    );
    const events = await settled;
    expect(events.at(-1)).toEqual({ kind: 'end' });
    expect(events.filter((e) => e.kind === 'refuse')).toEqual([]);
    expect(events.filter((e) => e.kind === 'chunk').reduce((sum, e) => sum + (e.kind === 'chunk' ? e.bytes : 0), 0)).toBe(30);
  });

  test('a declared Content-Length over the limit: refused as too_large before any chunk, once', async () => {
    const settled = new Promise<Event[]>(
      (resolve) => void recordingServer((events) => resolve(events)).then((port) => send(port, [head(LIMIT + 1), 'x'.repeat(100)])),
    );
    expect(await settled).toEqual([{ kind: 'refuse', reason: 'too_large' }]);
  });

  test('a chunked body that grows past the limit: refused once as too_large, no chunk past the limit and no end', async () => {
    const chunked = (text: string) => `${text.length.toString(16)}\r\n${text}\r\n`;
    const start = 'POST /x HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n';
    const settled = new Promise<Event[]>(
      (resolve) =>
        void recordingServer((events) => resolve(events)).then((port) =>
          send(port, [start, chunked('a'.repeat(600)), chunked('b'.repeat(600)), chunked('c'.repeat(600)), '0\r\n\r\n']),
        ),
    );
    const events = await settled;
    expect(events.filter((e) => e.kind === 'refuse')).toEqual([{ kind: 'refuse', reason: 'too_large' }]);
    expect(events.some((e) => e.kind === 'end')).toBe(false);
    const handed = events.reduce((sum, e) => sum + (e.kind === 'chunk' ? e.bytes : 0), 0);
    expect(handed).toBeLessThanOrEqual(LIMIT);
  });

  test('a request cut short: refused once as aborted, never ended', async () => {
    const settled = new Promise<Event[]>(
      (resolve) => void recordingServer((events) => resolve(events)).then((port) => send(port, [head(500), 'a'.repeat(100)], true)),
    );
    const events = await settled;
    expect(events.filter((e) => e.kind === 'refuse')).toEqual([{ kind: 'refuse', reason: 'aborted' }]);
    expect(events.some((e) => e.kind === 'end')).toBe(false);
  });
});

describe('collectBody', () => {
  test('hands the whole text and the caller’s context, from one chunk or several', async () => {
    const texts: string[] = [];
    const contexts: unknown[] = [];
    let bothRead: () => void = () => {};
    const both = new Promise<void>((resolve) => {
      bothRead = resolve;
    });
    server = createServer((req, res) => {
      const context = { url: req.url };
      collectBody(
        req,
        LIMIT,
        (body, ctx) => {
          texts.push(body.ok ? body.text : `refused:${body.reason}`);
          contexts.push(ctx);
          res.end('ok');
          if (texts.length === 2) bothRead();
        },
        context,
      );
    });
    await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const post = (path: string, body: string) =>
      fetch(`http://127.0.0.1:${port}${path}`, { method: 'POST', body, headers: { 'content-type': 'application/json' } }).then((r) => r.text());
    await post('/one', '{"a":1}');
    await send(port, [head(8).replace('/x', '/two'), '{"b":', '22}']);
    await both;
    expect(texts).toEqual(['{"a":1}', '{"b":22}']);
    expect(contexts).toEqual([{ url: '/one' }, { url: '/two' }]);
  });
});
