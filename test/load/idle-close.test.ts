/**
 * A server that closes idle connections after ~300 ms without a Keep-Alive hint (node:http on
 * 127.0.0.1, its requests counted server-side), with pauses longer than that between requests:
 * neither the load client nor the set-up client ever sends on a connection the server closed —
 * zero errors, every request answered exactly once.
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, test } from 'vitest';
import { Http1Connection } from '../../src/load/http1/connection.js';
import { DEFAULT_IDLE_LIMIT_MS, IdleCloseLearner, REUSES_TO_RAISE } from '../../src/load/http1/idle-close.js';
import { RequestText, endpointOf } from '../../src/load/http1/request-text.js';
import { httpJsonClient } from '../../src/load/target/service-api.js';
import { type IdleClosingServer, idleClosingServer } from '../helpers/idle-closing-server.js';
import { startStubServer } from '../helpers/load.js';

const IDLE_CLOSE_MS = 300;
// After the first idle close is seen, pauses right at the close (where a reused connection would race it) too.
const PAUSES_MS = [450, 320, 600, 295, 300, 305, 290, 310, 400];

let server: IdleClosingServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('a server that closes idle connections without a Keep-Alive hint', () => {
  test('dead connections are not reused by the load client: zero errors with pauses past the idle close, every request answered once', async () => {
    server = await idleClosingServer(IDLE_CLOSE_MS);
    const url = new URL(server.url);
    const text = new RequestText(url, 'root_key');
    const outcomes: string[] = [];
    const learner = new IdleCloseLearner();
    const c = new Http1Connection<(o: string) => void>(
      { endpoint: endpointOf(url), timeoutMs: 10_000, connectTimeoutMs: 5_000, idleClose: learner },
      { answered: (done, r) => done(String(r.status)), failed: (done, e) => done(`error: ${e.message}`) },
    );
    try {
      for (const [i, pause] of [0, ...PAUSES_MS].entries()) {
        await sleep(pause);
        outcomes.push(await new Promise<string>((done) => c.send(done, text.post('keys.verifyKey', false, 'x-keysim-seq', i, '{}'), performance.now())));
      }
    } finally {
      c.destroy();
    }
    expect(outcomes).toEqual(Array(PAUSES_MS.length + 1).fill('200'));
    expect(server.answered.get('/v2/keys.verifyKey')).toBe(PAUSES_MS.length + 1);
    // The idle close was learnt: connections idle past half of it are not reused.
    expect(learner.limitMs).toBeLessThanOrEqual(IDLE_CLOSE_MS / 2 + 50);
  });

  test('dead connections are not reused by the set-up client: zero errors with pauses past the idle close, every request answered once', async () => {
    server = await idleClosingServer(IDLE_CLOSE_MS);
    const client = httpJsonClient({ url: server.url, rootKey: 'root_key' }, 10_000);
    const statuses: number[] = [];
    try {
      for (const pause of [0, ...PAUSES_MS]) {
        await sleep(pause);
        statuses.push((await client.post('/v2/keys.createKey', { apiId: 'api_1' }, 'root')).status);
      }
    } finally {
      await client.close();
    }
    expect(statuses).toEqual(Array(PAUSES_MS.length + 1).fill(200));
    expect(server.answered.get('/v2/keys.createKey')).toBe(PAUSES_MS.length + 1);
  });

  test('once an idle close after ~300 ms was seen, a connection idle for 200 ms is replaced, not raced against the close', async () => {
    server = await idleClosingServer(IDLE_CLOSE_MS);
    const url = new URL(server.url);
    const text = new RequestText(url, 'root_key');
    const learner = new IdleCloseLearner();
    const c = new Http1Connection<(o: string) => void>(
      { endpoint: endpointOf(url), timeoutMs: 10_000, connectTimeoutMs: 5_000, idleClose: learner },
      { answered: (done, r) => done(String(r.status)), failed: (done, e) => done(`error: ${e.message}`) },
    );
    const send = (i: number) => new Promise<string>((done) => c.send(done, text.post('keys.verifyKey', false, 'x-keysim-seq', i, '{}'), performance.now()));
    try {
      expect(await send(1)).toBe('200');
      await sleep(IDLE_CLOSE_MS + 200);
      expect(server.idleCloses).toBe(1);
      expect(await send(2)).toBe('200');
      expect(server.connections).toBe(2);
      await sleep(200);
      expect(await send(3)).toBe('200');
      // Without the learnt limit the second connection would have been reused.
      expect(server.connections).toBe(3);
    } finally {
      c.destroy();
    }
  });
});

describe('a connection that breaks under a request', () => {
  test('a read in set-up or end-of-run checks is retried once on a new connection; a write is never sent twice (it may have spent credits)', async () => {
    // Cuts the connection under the first request to each path, answers the next.
    const cut = new Set<string>();
    const server = await startStubServer((req, res) => {
      const path = req.url ?? '';
      if (!cut.has(path)) {
        cut.add(path);
        res.socket?.destroy();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"meta":{"requestId":"r"},"data":{}}');
    });
    const client = httpJsonClient({ url: server.url, rootKey: 'root_key' }, 5_000);
    try {
      expect((await client.post('/v2/keys.getKey', { keyId: 'key_1' }, 'root')).status).toBe(200);
      await expect(client.post('/v2/keys.createKey', { apiId: 'api_1' }, 'root')).rejects.toMatchObject({
        code: expect.stringMatching(/ECONNRESET|KEYSIM_CONNECTION_CLOSED/),
      });
    } finally {
      await client.close();
      await server.kill();
    }
    expect(server.paths.filter((p) => p === '/v2/keys.getKey')).toHaveLength(2);
    expect(server.paths.filter((p) => p === '/v2/keys.createKey')).toHaveLength(1);
  });
});

describe('the learnt idle close can rise again', () => {
  test('the idle-close estimate only ever went down: after a run of answered reuses near the limit it doubles (up to the default), and a new idle close lowers it again', () => {
    const learner = new IdleCloseLearner();
    learner.closedIdle(200);
    expect(learner.limitMs).toBe(100);
    // Reuses far below the limit are no evidence; an idle close starts the count again.
    for (let i = 0; i < REUSES_TO_RAISE * 2; i++) learner.reused(10);
    expect(learner.limitMs).toBe(100);
    for (let i = 0; i < REUSES_TO_RAISE - 1; i++) learner.reused(90);
    learner.closedIdle(250);
    learner.reused(90);
    expect(learner.limitMs).toBe(100);
    for (let i = 0; i < REUSES_TO_RAISE; i++) learner.reused(90);
    expect(learner.limitMs).toBe(200);
    expect(learner.shortestCloseMs).toBeUndefined();
    for (let round = 0; round < 20; round++) for (let i = 0; i < REUSES_TO_RAISE; i++) learner.reused(learner.limitMs);
    expect(learner.limitMs).toBe(DEFAULT_IDLE_LIMIT_MS);
    learner.closedIdle(1_000);
    expect(learner.limitMs).toBe(500);
  });

  test("a Keep-Alive: timeout hint did not lift a lower learnt estimate: the server's word replaces it", () => {
    const learner = new IdleCloseLearner();
    learner.closedIdle(40);
    expect(learner.limitMs).toBe(20);
    learner.hinted(5_000);
    expect(learner.limitMs).toBe(2_500);
    expect(learner.shortestCloseMs).toBeUndefined();
  });
});
