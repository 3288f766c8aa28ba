/**
 * A store that lost its data under running replicas (Redis restarted without persistence, or
 * flushed): the replicas' copies are no longer the store's, so nothing more is appended; every
 * request is answered 503 saying so, instead of two histories being mixed in one log. And a Redis
 * that forgot the append script (SCRIPT FLUSH, a restart) is sent it again.
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import { createSimulator, type Simulator } from '../../../src/http/index.js';
import { type RedisServer, startRedis } from '../../helpers/redis-server.js';

let redis: RedisServer;
const sims: Simulator[] = [];

beforeAll(async () => {
  redis = await startRedis();
});

afterAll(async () => {
  for (const sim of sims) await sim.close();
  await redis.close();
});

async function post(sim: Simulator, path: string, body: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`${sim.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${sim.rootKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

test('a store flushed under a running replica answers 503 (the store no longer holds this simulator) and appends nothing', async () => {
  const sim = await createSimulator({ store: redis.url, storePrefix: 'wiped', seed: 4 });
  sims.push(sim);
  expect((await post(sim, '/v2/apis.createApi', { name: 'before' })).status).toBe(200);
  await redis.cli('FLUSHALL');
  const after = await post(sim, '/v2/apis.createApi', { name: 'after' });
  expect(after.status).toBe(503);
  expect(after.json.error).toMatchObject({ status: 503, title: 'Service Unavailable' });
  expect(String((after.json.error as { detail: string }).detail)).toMatch(/no longer holds this simulator/);
  expect(await redis.cli('EXISTS', '{wiped}:log')).toBe('0');
});

test('after SCRIPT FLUSH (Redis forgot the append script) requests still append: EVALSHA falls back to EVAL on NOSCRIPT', async () => {
  const sim = await createSimulator({ store: redis.url, storePrefix: 'noscript', seed: 5 });
  sims.push(sim);
  expect((await post(sim, '/v2/apis.createApi', { name: 'before' })).status).toBe(200);
  expect(await redis.cli('SCRIPT', 'FLUSH')).toBe('OK');
  const after = await post(sim, '/v2/apis.createApi', { name: 'after' });
  expect(after.status).toBe(200);
  expect(Number(await redis.cli('XLEN', '{noscript}:log'))).toBe(2);
});

test('/_sim/health answers 503 with the reason while the store no longer holds the simulator (a readiness probe takes the replica out)', async () => {
  const sim = await createSimulator({ store: redis.url, storePrefix: 'health', seed: 6 });
  sims.push(sim);
  expect((await fetch(`${sim.url}/_sim/health`)).status).toBe(200);
  await redis.cli('DEL', '{health}:genesis');
  const res = await fetch(`${sim.url}/_sim/health`);
  expect(res.status).toBe(503);
  expect(await res.json()).toMatchObject({ status: 'unavailable', detail: expect.stringMatching(/no longer holds this simulator/) as unknown });
});
