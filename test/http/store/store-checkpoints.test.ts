/**
 * Checkpoints of a store-backed simulator (docs/simulator.md#replicas-on-redis): every so many
 * entries, and after a reset, the replica that sent the entry keeps its whole state in the store
 * and the log is trimmed before the previous checkpoint, so the log stays short however long the
 * simulator runs. A replica started after the trim begins at the checkpoint and is then the same
 * simulator as the others: the same ids drawn, the same engine-fault decisions, the same clock,
 * journal and API rate limit, the same snapshot. Checkpoints here come every 10 entries, so a short
 * test crosses many.
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Simulator, SimulatorOptions } from '../../../src/http/simulator.js';
import { call, postJson } from '../../helpers/http.js';
import { type RedisServer, startRedis } from '../../helpers/redis-server.js';
import { startSimulator } from '../../helpers/simulator.js';

const EVERY = 10;
/** The simulator's own API rate limit in the late-replica test: more than its work before the late one starts. */
const API_LIMIT = 120;
const START_MS = Date.UTC(2027, 0, 31, 22, 0);

let redis: RedisServer;
const started: Simulator[] = [];

beforeAll(async () => {
  redis = await startRedis();
}, 90_000);

afterAll(async () => {
  for (const sim of started) await sim.close();
  await redis?.close();
});

async function replica(prefix: string, options: SimulatorOptions = {}): Promise<Simulator> {
  const sim = await startSimulator({
    store: redis.url,
    storePrefix: prefix,
    seed: 5,
    clock: 'manual',
    startMs: START_MS,
    storeCheckpointEvery: EVERY,
    ...options,
  });
  started.push(sim);
  return sim;
}

const logLength = async (prefix: string) => Number(await redis.cli('XLEN', `{${prefix}}:log`));
const checkpointNumber = async (prefix: string) => Number(await redis.cli('HGET', `{${prefix}}:checkpoint`, 'c'));

interface Verification {
  valid: boolean;
  code: string;
  credits?: number;
}

/** Keys made and verified, with the engine's faults deciding some verifications: what a checkpoint must carry on. */
async function work(sim: Simulator, apiId: string, rounds: number): Promise<unknown[]> {
  const answers: unknown[] = [];
  for (let i = 0; i < rounds; i++) {
    const { key, keyId } = await call<{ key: string; keyId: string }>(sim, '/v2/keys.createKey', { apiId, credits: { remaining: 3 } });
    answers.push(keyId);
    for (let v = 0; v < 4; v++) {
      const verified = await call<Verification>(sim, '/v2/keys.verifyKey', { key });
      answers.push([verified.valid, verified.code, verified.credits]);
    }
    await call(sim, '/_sim/clock.advance', { byMs: 1_000 });
  }
  return answers;
}

test('the log stays about two checkpoints long however many requests come, and the checkpoint follows the newest entries', async () => {
  const sim = await replica('bounded');
  const { apiId } = await call<{ apiId: string }>(sim, '/v2/apis.createApi', { name: 'bounded' });
  await work(sim, apiId, 40);
  const appended = Number(await redis.cli('GET', '{bounded}:count'));
  expect(appended).toBeGreaterThan(200);
  expect(await logLength('bounded')).toBeLessThanOrEqual(2 * EVERY + 1);
  expect(await checkpointNumber('bounded')).toBeGreaterThan(appended - EVERY - 1);
});

test('a replica started after the log was trimmed begins at the checkpoint and is the same simulator: ids, engine-fault decisions, clock, journal, API rate limit and snapshot', async () => {
  const first = await replica('late');
  const { apiId } = await call<{ apiId: string }>(first, '/v2/apis.createApi', { name: 'late' });
  // Engine faults draw from their own seeded dice, which the checkpoint must carry on from.
  await call(first, '/_sim/faults.set', { overAdmitRate: 0.3, lostDecrementRate: 0.3, operations: ['keys.verifyKey'] });
  await call(first, '/_sim/apiRateLimit.set', { limit: API_LIMIT, durationMs: 3_600_000 });
  await call(first, '/_sim/journal.start', {});
  await work(first, apiId, 12);
  expect(await logLength('late')).toBeLessThan(Number(await redis.cli('GET', '{late}:count')));

  const late = await replica('late', { seed: 99 });
  expect(await call(late, '/_sim/snapshot', {})).toEqual(await call(first, '/_sim/snapshot', {}));
  expect(await call(late, '/_sim/faults.get', {})).toEqual(await call(first, '/_sim/faults.get', {}));
  expect(await call(late, '/_sim/clock.get', {})).toEqual(await call(first, '/_sim/clock.get', {}));

  // From here the two take turns; whatever either applies, both must hold the same state after.
  const onFirst = await work(first, apiId, 3);
  const onLate = await work(late, apiId, 3);
  expect(onFirst.length).toBe(onLate.length);
  expect(await call(late, '/_sim/snapshot', {})).toEqual(await call(first, '/_sim/snapshot', {}));
  // The journal recorded before the late replica started is handed out by it, once, in order.
  const taken = await call<{ entries: Array<{ index: number; path: string }>; active: boolean }>(late, '/_sim/journal.take', {});
  expect(taken.active).toBe(true);
  expect(taken.entries.map((e) => e.index)).toEqual(taken.entries.map((_, i) => i));
  expect(taken.entries.length).toBeGreaterThan(12 * 6);
  expect((await call<{ entries: unknown[] }>(first, '/_sim/journal.take', {})).entries).toEqual([]);

  // The API rate limit's count went on from the checkpoint: the window fills at the same call,
  // whichever replica answers (a count started afresh on the late one would admit on).
  const statuses: number[] = [];
  for (let i = 0; i < API_LIMIT && !statuses.includes(429); i++) {
    statuses.push((await postJson((i % 2 === 0 ? first : late).url, '/v2/apis.createApi', { name: `limit ${i}` }, first.rootKey)).status);
  }
  expect(statuses.at(-1)).toBe(429);
  for (const sim of [first, late, first, late]) expect((await postJson(sim.url, '/v2/apis.createApi', { name: 'over' }, sim.rootKey)).status).toBe(429);
});

test('a reset keeps a checkpoint at once: after two resets the log starts at the first, and a replica started then holds the reset state', async () => {
  const first = await replica('resets', { storeCheckpointEvery: 1_000_000 });
  const { apiId } = await call<{ apiId: string }>(first, '/v2/apis.createApi', { name: 'resets' });
  await work(first, apiId, 3);
  expect((await postJson(first.url, '/_sim/reset', {}, first.rootKey)).status).toBe(200);
  const afterFirstReset = Number(await redis.cli('GET', '{resets}:count'));
  await call(first, '/v2/apis.createApi', { name: 'between' });
  expect((await postJson(first.url, '/_sim/reset', {}, first.rootKey)).status).toBe(200);
  expect(await logLength('resets')).toBe(3);
  expect(await checkpointNumber('resets')).toBe(afterFirstReset + 2);
  const late = await replica('resets');
  expect(await call(late, '/_sim/snapshot', {})).toEqual(await call(first, '/_sim/snapshot', {}));
  expect((await call<{ nowMs: number }>(late, '/_sim/clock.get', {})).nowMs).toBe(START_MS);
});

test('a checkpoint settled a due refill on the replica that kept it only: with a skip-refill fault the replicas then disagreed on the balance', async () => {
  const [a, b] = [await replica('settle', { storeCheckpointEvery: 1 }), await replica('settle', { storeCheckpointEvery: 1 })] as [Simulator, Simulator];
  const { apiId } = await call<{ apiId: string }>(a, '/v2/apis.createApi', { name: 'settle' });
  const { key, keyId } = await call<{ key: string; keyId: string }>(a, '/v2/keys.createKey', {
    apiId,
    credits: { remaining: 0, refill: { interval: 'daily', amount: 5 } },
  });
  // Every due refill is skipped by verifications from now on; the clock crosses midnight.
  await call(a, '/_sim/faults.set', { skipRefillRate: 1, operations: ['keys.verifyKey'] });
  await call(a, '/_sim/clock.advance', { byMs: 3 * 3_600_000 });
  // Each entry from here makes its sender keep a checkpoint: A's, then B's verification.
  await call(a, '/_sim/faults.get', {});
  const verified = await call<Verification>(b, '/v2/keys.verifyKey', { key });
  expect(verified).toMatchObject({ valid: false, code: 'USAGE_EXCEEDED' });
  const balances = await Promise.all(
    [a, b].map(async (sim) => (await call<{ credits: { remaining: number } }>(sim, '/v2/keys.getKey', { keyId })).credits.remaining),
  );
  expect(balances).toEqual([0, 0]);
  expect(await call(a, '/_sim/snapshot', {})).toEqual(await call(b, '/_sim/snapshot', {}));
});
