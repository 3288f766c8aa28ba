/**
 * What the admin surface changes, a store-backed replica changes for all (docs/simulator.md#replicas-on-redis):
 * the clock, a reset, a restore, the journal (one order, handed out once), the faults; the
 * snapshots of two replicas are the same state; a replica started late catches up; and a
 * replica that would apply the log by another start (another operator key, a start state that is
 * not keysim's) refuses to start.
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Simulator, SimulatorOptions } from '../../../src/http/simulator.js';
import { call, postJson } from '../../helpers/http.js';
import { type RedisServer, startRedis } from '../../helpers/redis-server.js';
import { startSimulator } from '../../helpers/simulator.js';

let redis: RedisServer;
const started: Simulator[] = [];
const START_MS = Date.UTC(2027, 2, 31, 23, 0);

beforeAll(async () => {
  redis = await startRedis();
}, 90_000);

afterAll(async () => {
  for (const sim of started) await sim.close();
  await redis?.close();
});

/** `count` replicas of the simulator named `prefix` (manual clock, seed 9). */
async function replicas(prefix: string, count: number, options: SimulatorOptions = {}): Promise<Simulator[]> {
  const out: Simulator[] = [];
  for (let i = 0; i < count; i++) {
    const sim = await startSimulator({ store: redis.url, storePrefix: prefix, seed: 9, clock: 'manual', startMs: START_MS, ...options });
    started.push(sim);
    out.push(sim);
  }
  return out;
}

async function newKey(sim: Simulator, credits: number): Promise<{ key: string; keyId: string }> {
  const { apiId } = await call<{ apiId: string }>(sim, '/v2/apis.createApi', { name: 'state' });
  return call<{ key: string; keyId: string }>(sim, '/v2/keys.createKey', { apiId, credits: { remaining: credits } });
}

const nowOn = async (sim: Simulator) => (await call<{ nowMs: number }>(sim, '/_sim/clock.get', {})).nowMs;

test('the clock set or advanced on one replica reads the same on the others', async () => {
  const [a, b, c] = (await replicas('clock', 3)) as [Simulator, Simulator, Simulator];
  await call(a, '/_sim/clock.set', { to: START_MS + 3_600_000 });
  expect([await nowOn(b), await nowOn(c)]).toEqual([START_MS + 3_600_000, START_MS + 3_600_000]);
  await call(c, '/_sim/clock.advance', { byMs: 86_400_000 });
  expect([await nowOn(a), await nowOn(b)]).toEqual([START_MS + 90_000_000, START_MS + 90_000_000]);
});

test('a reset on one replica resets every replica: keys gone, clock at its start, the operator key still works', async () => {
  const [a, b] = (await replicas('reset', 2)) as [Simulator, Simulator];
  const { keyId } = await newKey(a, 5);
  await call(b, '/_sim/clock.advance', { byMs: 60_000 });
  expect((await postJson(b.url, '/_sim/reset', {}, b.rootKey)).status).toBe(200);
  for (const sim of [a, b]) {
    expect((await postJson(sim.url, '/v2/keys.getKey', { keyId }, sim.rootKey)).status).toBe(404);
    expect(await nowOn(sim)).toBe(START_MS);
  }
});

test('two replicas snapshot the same state; a restore on one is the state of both', async () => {
  const [a, b] = (await replicas('snapshots', 2)) as [Simulator, Simulator];
  const { keyId } = await newKey(a, 7);
  const saved = await call<Record<string, unknown>>(a, '/_sim/snapshot', {});
  expect(await call(b, '/_sim/snapshot', {})).toEqual(saved);
  await call(b, '/v2/keys.updateCredits', { keyId, operation: 'set', value: 1 });
  expect((await call<{ credits: { remaining: number } }>(a, '/v2/keys.getKey', { keyId })).credits.remaining).toBe(1);
  await call(a, '/_sim/restore', { snapshot: saved });
  expect((await call<{ credits: { remaining: number } }>(b, '/v2/keys.getKey', { keyId })).credits.remaining).toBe(7);
});

test('the journal is the one order of every replica, and a take hands entries out once, whichever replica is asked', async () => {
  const [a, b] = (await replicas('journal', 2)) as [Simulator, Simulator];
  const { key } = await newKey(a, 10);
  await call(a, '/_sim/journal.start', {});
  const sent: Array<Promise<unknown>> = [];
  for (let i = 0; i < 20; i++) sent.push(postJson((i % 2 === 0 ? a : b).url, '/v2/keys.verifyKey', { key }, a.rootKey));
  await Promise.all(sent);
  const taken = await call<{ entries: Array<{ index: number; path: string }> }>(b, '/_sim/journal.take', {});
  expect(taken.entries.map((e) => e.index)).toEqual(Array.from({ length: 20 }, (_, i) => i));
  expect(new Set(taken.entries.map((e) => e.path))).toEqual(new Set(['/v2/keys.verifyKey']));
  expect((await call<{ entries: unknown[] }>(a, '/_sim/journal.take', {})).entries).toEqual([]);
});

test('faults set on one replica are the configuration of every replica', async () => {
  const [a, b] = (await replicas('faults', 2)) as [Simulator, Simulator];
  await call(a, '/_sim/faults.set', { latencyMs: 1, operations: ['keys.getKey'] });
  expect(await call(b, '/_sim/faults.get', {})).toEqual(await call(a, '/_sim/faults.get', {}));
  expect(await call(b, '/_sim/faults.get', {})).toMatchObject({ latencyMs: 1 });
  await call(b, '/_sim/faults.clear', {});
  expect(await call(a, '/_sim/faults.get', {})).toEqual(await call(b, '/_sim/faults.get', {}));
});

test("a replica started late applies the log so far: the same balances and the same snapshot; it adopts the store's seed and start", async () => {
  const [a] = (await replicas('late', 1)) as [Simulator];
  const { key, keyId } = await newKey(a, 50);
  for (let i = 0; i < 7; i++) await postJson(a.url, '/v2/keys.verifyKey', { key }, a.rootKey);
  await call(a, '/_sim/clock.advance', { byMs: 5_000 });
  const [late] = (await replicas('late', 1, { seed: 77, startMs: START_MS + 999 })) as [Simulator];
  expect(late.rootKey).toBe(a.rootKey);
  expect((await call<{ credits: { remaining: number } }>(late, '/v2/keys.getKey', { keyId })).credits.remaining).toBe(43);
  expect(await nowOn(late)).toBe(START_MS + 5_000);
  expect(await call(late, '/_sim/snapshot', {})).toEqual(await call(a, '/_sim/snapshot', {}));
});

test('a replica with another operator root key, or a store whose start state is not keysim’s, refuses to start and says why', async () => {
  await replicas('rootkey', 1, { rootKey: 'root_first_replica_0001' });
  await expect(replicas('rootkey', 1, { rootKey: 'root_other_replica_0002' })).rejects.toThrow(/another operator root key.*--root-key/);
  await redis.cli('SET', '{garbage}:genesis', 'nonsense');
  await expect(replicas('garbage', 1)).rejects.toThrow(/does not hold a keysim start state.*--store-prefix/);
});

test('a replica given, as its root key, the one the store generated from its seed was refused as "another operator root key"', async () => {
  const [first] = (await replicas('generated-root', 1)) as [Simulator];
  const [second] = (await replicas('generated-root', 1, { rootKey: first.rootKey, seed: 12 })) as [Simulator];
  expect(second.rootKey).toBe(first.rootKey);
  expect((await postJson(second.url, '/v2/apis.createApi', { name: 'second' }, second.rootKey)).status).toBe(200);
  expect(await call(second, '/_sim/snapshot', {})).toEqual(await call(first, '/_sim/snapshot', {}));
});

test('a replica given another root key than the one the store generated from its seed is refused, naming --root-key', async () => {
  await replicas('generated-other', 1);
  await expect(replicas('generated-other', 1, { rootKey: 'root_not_the_generated_1' })).rejects.toThrow(/another operator root key.*--root-key/);
});
