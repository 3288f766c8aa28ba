/**
 * A store-backed simulator on a Redis Cluster of three masters (docs/simulator.md#replicas-on-redis):
 * every key of the store shares one hash tag, so the whole store — log, stamp, start state — lives
 * in one slot of one node, and two replicas started with the cluster's URL spend a key's credits
 * exactly, the other two nodes holding nothing of it.
 */
import { Agent } from 'undici';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Simulator } from '../../../src/http/simulator.js';
import { call, postJson } from '../../helpers/http.js';
import { type RedisCluster, type RedisServer, startRedisCluster } from '../../helpers/redis-server.js';
import { startSimulator } from '../../helpers/simulator.js';

const CREDITS = 100;
const VERIFICATIONS = 1_000;

let cluster: RedisCluster;
/** The node whose slot holds the store (`{keysim}:…`). */
let owner: number;
const replicas: Simulator[] = [];
// Every verification is sent at once; at most this many connections per replica carry them.
const dispatcher = new Agent({ connections: 64 });

beforeAll(async () => {
  cluster = await startRedisCluster();
  owner = await ownerOf('{keysim}:log');
  // A names every node; B only one that holds nothing of the store: its client finds the owner from the slot map.
  const other = cluster.nodes.find((_, i) => i !== owner) as RedisServer;
  replicas.push(await startSimulator({ store: cluster.url }));
  replicas.push(await startSimulator({ store: `redis-cluster://127.0.0.1:${other.port}` }));
}, 90_000);

afterAll(async () => {
  for (const replica of replicas) await replica.close();
  await dispatcher.close();
  await cluster?.close();
});

/** Whether the node's own slot ranges (the "myself" line of CLUSTER NODES, from its ninth field) hold `slot`. */
async function ownsSlot(node: RedisServer, slot: number): Promise<boolean> {
  const myself = (await node.cli('CLUSTER', 'NODES')).split('\n').find((line) => line.includes('myself'));
  if (myself === undefined) throw new Error(`CLUSTER NODES of port ${node.port} names no "myself" line`);
  return myself
    .split(' ')
    .slice(8)
    .some((range) => {
      const [from, to] = range.split('-').map(Number);
      return slot >= (from as number) && slot <= (to ?? (from as number));
    });
}

/** The index of the one node whose slots hold `key` (CLUSTER KEYSLOT). */
async function ownerOf(key: string): Promise<number> {
  const slot = Number(await (cluster.nodes[0] as RedisServer).cli('CLUSTER', 'KEYSLOT', key));
  const owners: number[] = [];
  for (const [i, node] of cluster.nodes.entries()) if (await ownsSlot(node, slot)) owners.push(i);
  if (owners.length !== 1) throw new Error(`slot ${slot} of ${key} is owned by nodes [${owners.join(', ')}], not by exactly one`);
  return owners[0] as number;
}

test(`two replicas on a three-master Redis Cluster: ${VERIFICATIONS} concurrent verifications of a key with ${CREDITS} credits over both are valid exactly ${CREDITS} times, with balances ${CREDITS - 1}..0, and the store lives on one node`, async () => {
  const [a, b] = replicas as [Simulator, Simulator];
  const { apiId } = await call<{ apiId: string }>(a, '/v2/apis.createApi', { name: 'cluster' });
  const { key, keyId } = await call<{ key: string; keyId: string }>(b, '/v2/keys.createKey', { apiId, credits: { remaining: CREDITS } });

  const answers = await Promise.all(
    Array.from({ length: VERIFICATIONS }, (_, i) => postJson((i % 2 === 0 ? a : b).url, '/v2/keys.verifyKey', { key }, a.rootKey, dispatcher)),
  );
  const statuses = answers.map((answer) => answer.status);
  expect(
    statuses.filter((status) => status !== 200),
    `statuses: ${[...new Set(statuses)].join(', ')}`,
  ).toEqual([]);
  const data = answers.map((answer) => (answer.body as { data: { valid: boolean; code: string; credits?: number } }).data);
  const valid = data.filter((d) => d.valid);
  expect(valid).toHaveLength(CREDITS);
  expect(valid.map((d) => d.credits).sort((x, y) => (y as number) - (x as number))).toEqual(Array.from({ length: CREDITS }, (_, i) => CREDITS - 1 - i));
  expect(new Set(data.filter((d) => !d.valid).map((d) => d.code))).toEqual(new Set(['USAGE_EXCEEDED']));
  // Both replicas served valid ones: the credits were spent across them.
  expect(answers.filter((answer, i) => i % 2 === 0 && (answer.body as { data: { valid: boolean } }).data.valid).length).toBeGreaterThan(0);
  expect(answers.filter((answer, i) => i % 2 === 1 && (answer.body as { data: { valid: boolean } }).data.valid).length).toBeGreaterThan(0);

  // The whole store is on the node owning the log's slot (B was told only of another one); the
  // other two hold no key at all.
  const sizes = await Promise.all(cluster.nodes.map(async (node) => Number(await node.cli('DBSIZE'))));
  expect(sizes.map((size, i) => (i === owner ? size > 0 : size))).toEqual(cluster.nodes.map((_, i) => (i === owner ? true : 0)));
  const ownerNode = cluster.nodes[owner];
  expect(await ownerNode?.cli('XLEN', '{keysim}:log')).toMatch(/^[1-9]\d*$/);
  expect(await ownerNode?.cli('EXISTS', '{keysim}:genesis', '{keysim}:stamp')).toBe('2');
  // Both replicas answer the same balance now.
  for (const replica of [a, b]) expect((await call<{ credits?: { remaining: number } }>(replica, '/v2/keys.getKey', { keyId })).credits?.remaining).toBe(0);
}, 120_000);
