/**
 * The contract suite against two replicas of one store-backed simulator on one real Redis
 * (docs/simulator.md#replicas-on-redis): the client sends its requests to replica A and B in turn,
 * so every case also shows that a replica answers what the other one did before it. Before each
 * case both are back in the start state through POST /_sim/reset; the clock moves through
 * /_sim/clock.* on whichever replica's turn it is.
 */
import { afterAll, beforeAll } from 'vitest';
import { type RedisServer, startRedis } from '../helpers/redis-server.js';
import { useSimulator } from '../helpers/simulator.js';
import { httpClient } from '../helpers/service-client.js';
import { CONTRACT_START_MS, describeContract } from './contract.js';

let redis: RedisServer | undefined;
beforeAll(async () => {
  redis = await startRedis();
});
// Registered after the server's hooks: the replicas close (hooks in reverse) before Redis does.
afterAll(async () => {
  await redis?.close();
});

const storeOptions = () => {
  if (redis === undefined) throw new Error('Redis is not started');
  return { store: redis.url, startMs: CONTRACT_START_MS, seed: 1, compat: 'interface' as const };
};
const replicaA = useSimulator(storeOptions);
// One reset (A's, through the log) resets both.
const replicaB = useSimulator(storeOptions, { reset: false });

describeContract('two replicas on Redis', async () => {
  const a = replicaA();
  return httpClient({ url: a.url, replicaUrls: [replicaB().url], rootKey: a.rootKey, workspaceId: a.workspaceId });
});
