/** The Redis the store's tests start: one server that stops and comes back, and a three-master cluster. */
import { describe, expect, it } from 'vitest';
import { startRedis, startRedisCluster } from '../../helpers/redis-server.js';

describe('the tests’ Redis', () => {
  it('a persistent server stopped and started again answers with its data', async () => {
    const redis = await startRedis({ persist: true });
    try {
      await redis.cli('SET', 'k', 'v');
      await redis.stop();
      await expect(redis.cli('PING')).rejects.toThrow();
      await redis.start();
      expect(await redis.cli('GET', 'k')).toBe('v');
    } finally {
      await redis.close();
    }
  });

  it('a cluster of three masters has every slot assigned', async () => {
    const cluster = await startRedisCluster();
    try {
      const info = await cluster.nodes[0]!.cli('CLUSTER', 'INFO');
      expect(info).toContain('cluster_slots_assigned:16384');
      expect(info).toContain('cluster_known_nodes:3');
    } finally {
      await cluster.close();
    }
  });
});
