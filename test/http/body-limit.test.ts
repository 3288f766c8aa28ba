/** A body over the limit gets its 413, read by the client, over real sockets. */
import { connect } from 'node:net';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type Simulator, createSimulator } from '../../src/http/index.js';
import { DEFAULT_MAX_BODY_BYTES } from '../../src/http/body.js';

const BODY = Buffer.alloc(11 * 1024 * 1024, 97);
const ATTEMPTS = 8;

let sim: Simulator;
beforeAll(async () => {
  sim = await createSimulator({ startMs: Date.UTC(2028, 1, 10, 12) });
});
afterAll(() => sim.close());

interface RawOutcome {
  status: number | null;
  error: string | null;
  /** The answer to a second request on the same connection, after the refused body. */
  reused: number | null;
}

/**
 * Writes the whole request (headers and an 11 MiB body) as a client that does not look at the
 * answer before it has sent everything, then reads the answer, then asks for /_sim/health on the
 * same connection.
 */
function rawUpload(url: string): Promise<RawOutcome> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    let received = '';
    let status: number | null = null;
    let settled = false;
    const done = (outcome: RawOutcome) => {
      if (settled) return;
      settled = true;
      socket.destroy();
      resolve(outcome);
    };
    socket.on('error', (error: NodeJS.ErrnoException) => done({ status, error: error.code ?? error.message, reused: null }));
    socket.on('close', () => done({ status, error: 'closed before the second answer', reused: null }));
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('latin1');
      const answers = [...received.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => Number(m[1]));
      status = answers[0] ?? null;
      if (answers.length >= 2) done({ status, error: null, reused: answers[1] ?? null });
    });
    socket.write(
      `POST /v2/apis.createApi HTTP/1.1\r\nhost: ${hostname}:${port}\r\ncontent-type: application/json\r\nauthorization: Bearer ${sim.rootKey}\r\ncontent-length: ${BODY.length}\r\n\r\n`,
    );
    socket.write(BODY);
    socket.write(`GET /_sim/health HTTP/1.1\r\nhost: ${hostname}:${port}\r\n\r\n`);
  });
}

describe('bodies over the limit', () => {
  test('11 MiB uploads ended in ECONNRESET/EPIPE instead of their 413: every attempt reads the 413', async () => {
    expect(BODY.length).toBeGreaterThan(DEFAULT_MAX_BODY_BYTES);
    const before = JSON.stringify(sim.engine.snapshot());
    const outcomes: RawOutcome[] = [];
    for (let i = 0; i < ATTEMPTS; i++) outcomes.push(await rawUpload(sim.url));
    expect(outcomes).toEqual(Array.from({ length: ATTEMPTS }, () => ({ status: 413, error: null, reused: 200 })));
    expect(JSON.stringify(sim.engine.snapshot())).toBe(before);
  });

  test('clients that stream the body (undici, fetch) read the 413 envelope every time', async () => {
    const statuses: Array<number | string> = [];
    for (let i = 0; i < ATTEMPTS; i++) {
      try {
        const response = await request(`${sim.url}/v2/apis.createApi`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${sim.rootKey}` },
          body: BODY,
        });
        const body = (await response.body.json()) as { error?: { type?: string } };
        statuses.push(response.statusCode);
        expect(body.error?.type).toMatch(/request_body_too_large$/);
      } catch (error) {
        statuses.push(String((error as NodeJS.ErrnoException).code ?? error));
      }
      try {
        const response = await fetch(`${sim.url}/v2/apis.createApi`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: BODY });
        await response.text();
        statuses.push(response.status);
      } catch (error) {
        statuses.push(String((error as { cause?: { code?: string } }).cause?.code ?? error));
      }
    }
    expect(statuses).toEqual(Array.from({ length: 2 * ATTEMPTS }, () => 413));
  });
});
