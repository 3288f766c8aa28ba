/**
 * A replica whose Redis goes away (docs/simulator.md#replicas-on-redis): every request is answered
 * 503 in the route's own error shape and changes nothing, the server keeps serving what needs no
 * state, `/_sim/health` says the store is unavailable; once Redis is back (with its data: the
 * append-only file) answers resume on the same state. A store that cannot be reached at the start
 * is an error naming it, not a wait.
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Simulator } from '../../../src/http/simulator.js';
import { call, postJson, send } from '../../helpers/http.js';
import { freePort } from '../../helpers/nginx.js';
import { type RedisServer, startRedis } from '../../helpers/redis-server.js';
import { startSimulator } from '../../helpers/simulator.js';

let redis: RedisServer;
let sim: Simulator;

beforeAll(async () => {
  redis = await startRedis({ persist: true });
  sim = await startSimulator({ store: redis.url, storePrefix: 'faults', seed: 2 });
}, 90_000);

afterAll(async () => {
  await sim?.close();
  await redis?.close();
});

test('Redis stopped: 503 in the v2 envelope and in the v1 shape, nothing changed; Redis back: answers resume on the same state', async () => {
  const { apiId } = await call<{ apiId: string }>(sim, '/v2/apis.createApi', { name: 'faults' });
  const { key, keyId } = await call<{ key: string; keyId: string }>(sim, '/v2/keys.createKey', { apiId, credits: { remaining: 10 } });
  expect((await postJson(sim.url, '/v2/keys.verifyKey', { key }, sim.rootKey)).status).toBe(200);

  await redis.stop();
  const v2 = await postJson(sim.url, '/v2/keys.verifyKey', { key }, sim.rootKey);
  expect(v2.status).toBe(503);
  expect(v2.body).toMatchObject({
    meta: { requestId: expect.stringMatching(/^req_/) as unknown },
    error: { status: 503, title: 'Service Unavailable', detail: expect.stringMatching(/Redis store is unavailable.*nothing was changed/) as unknown },
  });
  expect((v2.body as { error: { type: string } }).error.type).toMatch(/application\/service_unavailable$/);
  const v1 = await postJson(sim.url, '/v1/identities.createIdentity', { externalId: 'during-outage' }, sim.rootKey);
  expect(v1.status).toBe(503);
  expect(v1.body).toMatchObject({ error: { code: 'SERVICE_UNAVAILABLE', message: expect.stringMatching(/store/) as unknown } });
  // What needs no state is still served: the server did not fall over.
  expect((await send(sim.url, '/openapi.json', { method: 'GET' })).status).toBe(200);
  const health = await send(sim.url, '/_sim/health', { method: 'GET' });
  expect(health.status).toBe(503);
  expect(health.body).toMatchObject({ status: 'unavailable' });

  await redis.start();
  let answer = await postJson(sim.url, '/v2/keys.getKey', { keyId }, sim.rootKey);
  // The client reconnects by itself; bounded tries, no assumption on how soon.
  for (let attempt = 0; answer.status === 503 && attempt < 600; attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    answer = await postJson(sim.url, '/v2/keys.getKey', { keyId }, sim.rootKey);
  }
  expect(answer.status).toBe(200);
  // The refused verification spent nothing, the refused identity does not exist.
  expect((answer.body as { data: { credits?: { remaining: number } } }).data.credits?.remaining).toBe(9);
  expect(
    (await send(sim.url, '/v1/identities.getIdentity?externalId=during-outage', { method: 'GET', headers: { authorization: `Bearer ${sim.rootKey}` } })).status,
  ).toBe(404);
  expect((await send(sim.url, '/_sim/health', { method: 'GET' })).status).toBe(200);
}, 120_000);

test('a store that cannot be reached at the start is an error naming it, after a few tries', async () => {
  const port = await freePort();
  await expect(startSimulator({ store: `redis://127.0.0.1:${port}` })).rejects.toThrow(
    new RegExp(`the store redis://127\\.0\\.0\\.1:${port} cannot be reached`),
  );
});

test('a replica that cannot listen (its port is taken) lets go of its store: the error is the port, and Redis sees no connection left behind', async () => {
  const clientsBefore = Number(/connected_clients:(\d+)/.exec(await redis.cli('INFO', 'clients'))?.[1]);
  const taken = new URL(sim.url).port;
  await expect(startSimulator({ store: redis.url, storePrefix: 'faults', port: Number(taken) })).rejects.toThrow(/EADDRINUSE/);
  // Redis closes a client's connection when the client goes: poll, bounded, for it to be gone.
  let clients = Number.NaN;
  for (let attempt = 0; attempt < 100; attempt++) {
    clients = Number(/connected_clients:(\d+)/.exec(await redis.cli('INFO', 'clients'))?.[1]);
    if (clients <= clientsBefore) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  expect(clients).toBe(clientsBefore);
});
