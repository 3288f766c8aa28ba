/** discardRest: after a 413 the rest of a body is read up to a bound; past it, a lingering close. */
import { type Server, createServer } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { afterEach, describe, expect, test } from 'vitest';
import { discardRest, readBody } from '../../src/http/body.js';

const LIMIT = 64 * 1024;
let server: Server | undefined;
afterEach(async () => {
  await new Promise<void>((resolve) => {
    if (server === undefined) resolve();
    else {
      server.closeAllConnections();
      server.close(() => resolve());
    }
  });
  server = undefined;
});

/** A server that refuses bodies over LIMIT, discarding at most `discardBytes` of the rest. */
async function listen(discardBytes: number): Promise<number> {
  server = createServer((req, res) => {
    void readBody(req, LIMIT).then((body) => {
      if (body.ok) {
        res.end('ok');
        return;
      }
      discardRest(req, res, discardBytes);
      res.writeHead(413, { 'content-type': 'text/plain', 'content-length': '9' });
      res.end('too large');
    });
  });
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  return (server?.address() as AddressInfo).port;
}

/** Sends headers and then `bodyBytes` in chunks as long as the socket takes them; reports what it read. */
function upload(port: number, bodyBytes: number): Promise<{ answer: string; ended: boolean; sent: number }> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let answer = '';
    let sent = 0;
    let ended = false;
    const chunk = Buffer.alloc(64 * 1024, 97);
    const pump = () => {
      while (sent < bodyBytes && !socket.destroyed) {
        sent += chunk.length;
        if (!socket.write(chunk)) {
          socket.once('drain', pump);
          return;
        }
      }
    };
    socket.on('data', (d: Buffer) => {
      answer += d.toString('latin1');
    });
    socket.on('end', () => {
      ended = true;
      socket.destroy();
    });
    // Writing after the server let go may fail: what matters is what was read before.
    socket.on('error', () => socket.destroy());
    socket.on('close', () => resolve({ answer, ended, sent }));
    socket.write(`POST / HTTP/1.1\r\nhost: x\r\ncontent-length: ${bodyBytes}\r\n\r\n`);
    pump();
  });
}

describe('after a 413', () => {
  test('a body past the discard bound gets its answer, then a half-close (FIN), not a bare reset', async () => {
    const port = await listen(1024 * 1024);
    const outcome = await upload(port, 256 * 1024 * 1024);
    expect(outcome.answer).toMatch(/^HTTP\/1\.1 413 /);
    expect(outcome.answer).toContain('too large');
    expect(outcome.ended).toBe(true);
    // The server stopped reading long before the client could send it all.
    expect(outcome.sent).toBeLessThan(256 * 1024 * 1024);
  });

  test('a body within the bound is discarded whole and the connection answers the next request', async () => {
    const port = await listen(64 * 1024 * 1024);
    const answer = await new Promise<string>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      let got = '';
      socket.on('data', (d: Buffer) => {
        got += d.toString('latin1');
        if (/HTTP\/1\.1 200[\s\S]*ok$/.test(got)) {
          socket.destroy();
          resolve(got);
        }
      });
      socket.on('close', () => resolve(got));
      const body = Buffer.alloc(3 * 1024 * 1024, 97);
      socket.write(`POST / HTTP/1.1\r\nhost: x\r\ncontent-length: ${body.length}\r\n\r\n`);
      socket.write(body);
      socket.write('POST / HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\n\r\n{}');
    });
    expect(answer).toMatch(/^HTTP\/1\.1 413 [\s\S]*HTTP\/1\.1 200 /);
  });
});
