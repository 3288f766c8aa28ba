/**
 * Rate limits are never over-admitted across replicas (docs/simulator.md#replicas-on-redis): a
 * namespace's limit and a key's limit, raced over three replicas on one Redis, admit exactly what
 * one in-memory simulator admits for the same requests — the limit in a fresh window, and after
 * the clock is moved on one replica, what the sliding window allows.
 */
import { Agent } from 'undici';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Simulator } from '../../../src/http/simulator.js';
import { call, postJson } from '../../helpers/http.js';
import { type RedisServer, startRedis } from '../../helpers/redis-server.js';
import { startSimulator } from '../../helpers/simulator.js';

const START_MS = Date.UTC(2027, 5, 1, 12);
const MINUTE = 60_000;
let redis: RedisServer;
let replicas: Simulator[];
let memory: Simulator;
const dispatcher = new Agent({ connections: 32 });

beforeAll(async () => {
  redis = await startRedis();
  replicas = [];
  for (let i = 0; i < 3; i++) replicas.push(await startSimulator({ store: redis.url, storePrefix: 'rl', seed: 3, clock: 'manual', startMs: START_MS }));
  memory = await startSimulator({ seed: 3, clock: 'manual', startMs: START_MS });
}, 90_000);

afterAll(async () => {
  for (const sim of [...(replicas ?? []), memory]) await sim?.close();
  await dispatcher.close();
  await redis?.close();
});

/** `count` requests at once, spread over `targets` in turn; how many answers say `admitted`. */
async function race(
  targets: readonly Simulator[],
  count: number,
  path: string,
  body: unknown,
  admitted: (data: Record<string, unknown>) => boolean,
): Promise<number> {
  const answers = await Promise.all(
    Array.from({ length: count }, (_, i) =>
      postJson((targets[i % targets.length] as Simulator).url, path, body, (targets[0] as Simulator).rootKey, dispatcher),
    ),
  );
  expect(answers.filter((a) => a.status !== 200).map((a) => a.status)).toEqual([]);
  return answers.filter((a) => admitted((a.body as { data: Record<string, unknown> }).data)).length;
}

test('a namespace limit of 50 a minute, raced by 300 requests over 3 replicas, admits 50; after the clock moves a minute on one replica, what one simulator admits', async () => {
  const limit = { namespace: 'api', identifier: 'user-1', limit: 50, duration: MINUTE };
  const success = (d: Record<string, unknown>) => d.success === true;
  for (const sims of [replicas, [memory]]) await call(sims[0] as Simulator, '/_sim/namespaces.create', { name: 'api' });
  expect(await race(replicas, 300, '/v2/ratelimit.limit', limit, success)).toBe(50);
  expect(await race([memory], 300, '/v2/ratelimit.limit', limit, success)).toBe(50);
  // Half a window on: the sliding window still weighs the first window's 50.
  await call(replicas[2] as Simulator, '/_sim/clock.advance', { byMs: MINUTE + MINUTE / 2 });
  await call(memory, '/_sim/clock.advance', { byMs: MINUTE + MINUTE / 2 });
  const expected = await race([memory], 300, '/v2/ratelimit.limit', limit, success);
  expect(expected).toBeGreaterThan(0);
  expect(expected).toBeLessThan(50);
  expect(await race(replicas, 300, '/v2/ratelimit.limit', limit, success)).toBe(expected);
});

test("a key's rate limit of 20 a minute, raced by 200 verifications over 3 replicas, admits 20: the rest RATE_LIMITED", async () => {
  const a = replicas[0] as Simulator;
  const { apiId } = await call<{ apiId: string }>(a, '/v2/apis.createApi', { name: 'rl' });
  const { key } = await call<{ key: string }>(a, '/v2/keys.createKey', {
    apiId,
    ratelimits: [{ name: 'burst', limit: 20, duration: MINUTE, autoApply: true }],
  });
  const answers = await Promise.all(
    Array.from({ length: 200 }, (_, i) => postJson((replicas[i % 3] as Simulator).url, '/v2/keys.verifyKey', { key }, a.rootKey, dispatcher)),
  );
  const codes = answers.map((answer) => (answer.body as { data: { code: string } }).data.code);
  expect(codes.filter((code) => code === 'VALID')).toHaveLength(20);
  expect(codes.filter((code) => code === 'RATE_LIMITED')).toHaveLength(180);
});
