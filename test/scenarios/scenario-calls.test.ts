/**
 * A scenario's own calls (src/load/scenario-calls.ts) over keysim's real client, against a real
 * server on 127.0.0.1: an answer that never came is an outcome ("not judged" later), while a bug
 * or a call keysim refuses itself still rejects, so that it is never hidden as a lost answer.
 */
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { READ_ATTEMPTS, callOutcome, isLostAnswerError, readOutcome } from '../../src/load/scenario/scenario-calls.js';
import { type HttpJsonClient, httpJsonClient, serviceApi } from '../../src/load/target/service-api.js';
import { ResourceLedger } from '../../src/load/resources/resources.js';
import { trackingServiceApi } from '../../src/load/resources/resource-tracking.js';
import type { Operation, ScenarioContext } from '../../src/load/scenario/scenario.js';

let server: Server;
let url: string;
let client: HttpJsonClient;
let ctx: Pick<ScenarioContext, 'api'>;

/** /v2/keys.getKey answers the service's JSON; keys.verifyKey drops the connection; ratelimit.limit answers a gateway's HTML 502. */
beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.url === '/v2/keys.verifyKey') {
        req.socket.destroy();
        return;
      }
      if (req.url === '/v2/ratelimit.limit') {
        res.writeHead(502, { 'content-type': 'text/html' }).end('<html><body>502 Bad Gateway</body></html>');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ meta: { requestId: 'req_1' }, data: { keyId: 'key_1' } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  client = httpJsonClient({ url, rootKey: 'root_test' }, 5_000);
  ctx = { api: trackingServiceApi(serviceApi(client), new ResourceLedger('keysim-test')) };
});

afterAll(async () => {
  await client.close();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe('callOutcome', () => {
  test("the service's answer is answered", async () => {
    const outcome = await callOutcome(ctx, 'keys.getKey', { keyId: 'key_1' });
    expect(outcome).toMatchObject({ answered: true, response: { status: 200 } });
  });

  test('a dropped connection and a gateway page are answers that never came', async () => {
    const dropped = await callOutcome(ctx, 'keys.verifyKey', { key: 'k' });
    expect(dropped).toMatchObject({ answered: false });
    expect(!dropped.answered && dropped.why).toMatch(/^reset: /);
    const gateway = await callOutcome(ctx, 'ratelimit.limit', { namespace: 'n', identifier: 'i', limit: 1, duration: 1000 });
    expect(gateway).toMatchObject({ answered: false });
  });

  test('a connection refused is an answer that never came', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const dead = httpJsonClient({ url: `http://127.0.0.1:${port}`, rootKey: 'root_test' }, 5_000);
    try {
      const outcome = await callOutcome({ api: serviceApi(dead) }, 'keys.getKey', { keyId: 'key_1' });
      expect(outcome).toMatchObject({ answered: false });
      expect(!outcome.answered && outcome.why).toMatch(/^refused: /);
    } finally {
      await dead.close();
    }
  });

  test('a programming error in a scenario call (TypeError) rejects instead of becoming a lost answer', async () => {
    // JSON.stringify throws a TypeError on a BigInt: a bug of the scenario, not of the network.
    await expect(callOutcome(ctx, 'keys.getKey', { keyId: 1n })).rejects.toBeInstanceOf(TypeError);
    await expect(readOutcome(ctx, 'keys.getKey', { keyId: 1n })).rejects.toBeInstanceOf(TypeError);
  });

  test('a call keysim refuses itself (an unknown operation) rejects instead of becoming a lost answer', async () => {
    await expect(callOutcome(ctx, 'keys.verifyKeys' as Operation, {})).rejects.toThrow(/unknown operation "keys.verifyKeys"/);
  });
});

describe('readOutcome', () => {
  /** A server that answers a gateway's 504 page to the first `lost` requests, then the service's JSON; it counts them. */
  async function flakyGateway(lost: number) {
    let requests = 0;
    const gateway = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        requests++;
        if (requests <= lost) res.writeHead(504, { 'content-type': 'text/html' }).end('<html><body>504 Gateway Time-out</body></html>');
        else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ meta: { requestId: 'req_1' }, data: { keyId: 'key_1' } }));
      });
    });
    await new Promise<void>((resolve) => gateway.listen(0, '127.0.0.1', resolve));
    const gatewayClient = httpJsonClient({ url: `http://127.0.0.1:${(gateway.address() as AddressInfo).port}`, rootKey: 'root_test' }, 5_000);
    return {
      ctx: { api: serviceApi(gatewayClient) },
      requests: () => requests,
      close: async () => {
        await gatewayClient.close();
        await new Promise<void>((resolve) => gateway.close(() => resolve()));
      },
    };
  }

  test('the namespace probe through a proxy that timed out three reads in a row stopped the run: a read lost three times is asked again and answered', async () => {
    const gateway = await flakyGateway(3);
    try {
      const outcome = await readOutcome(gateway.ctx, 'keys.getKey', { keyId: 'key_1' });
      expect(outcome).toMatchObject({ answered: true, response: { status: 200 } });
      expect(gateway.requests()).toBe(4);
    } finally {
      await gateway.close();
    }
  });

  test(`a read whose answer never comes is asked ${READ_ATTEMPTS} times, then its last loss is the outcome`, async () => {
    const gateway = await flakyGateway(Number.POSITIVE_INFINITY);
    try {
      const outcome = await readOutcome(gateway.ctx, 'keys.getKey', { keyId: 'key_1' });
      expect(outcome).toMatchObject({ answered: false });
      expect(!outcome.answered && outcome.why).toMatch(/504/);
      expect(gateway.requests()).toBe(READ_ATTEMPTS);
    } finally {
      await gateway.close();
    }
  });
});

describe('isLostAnswerError', () => {
  test('errors of the transport are lost answers, others are not', () => {
    const system = Object.assign(new Error('getaddrinfo ENOTFOUND api.invalid'), { code: 'ENOTFOUND', syscall: 'getaddrinfo' });
    expect(isLostAnswerError(system)).toBe(true);
    expect(isLostAnswerError(Object.assign(new Error('x'), { code: 'KEYSIM_TIMEOUT' }))).toBe(true);
    expect(isLostAnswerError(new Error('wrapped', { cause: Object.assign(new Error('reset'), { code: 'ECONNRESET' }) }))).toBe(true);
    expect(isLostAnswerError(new TypeError('x is not a function'))).toBe(false);
    expect(isLostAnswerError(new Error('the history file cannot be written'))).toBe(false);
    expect(isLostAnswerError(Object.assign(new Error('x'), { code: 'ERR_INVALID_ARG_TYPE' }))).toBe(false);
  });
});
