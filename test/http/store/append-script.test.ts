/**
 * The append script on a real Redis (src/http/store/log-script.ts), given batches of requests the
 * way a replica's batcher sends them: each request one entry, numbered on from the log's last
 * number, in the order sent, all with the one stamp; without the start state nothing at all.
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import { connectRedis, type RedisLink } from '../../../src/http/store/redis-link.js';
import { entriesOf } from '../../../src/http/store/replicated-log.js';
import { type RedisServer, startRedis } from '../../helpers/redis-server.js';

const KEYS = { stream: '{t}:log', stamp: '{t}:stamp', genesis: '{t}:genesis', count: '{t}:count', checkpoint: '{t}:checkpoint' };

let redis: RedisServer;
let link: RedisLink;

beforeAll(async () => {
  redis = await startRedis();
  link = await connectRedis({ kind: 'redis', url: redis.url, shown: redis.url }, () => undefined);
}, 60_000);

afterAll(async () => {
  await link?.close();
  await redis?.close();
});

async function logEntries() {
  return entriesOf([[KEYS.stream, await link.command(KEYS.stream, ['XRANGE', KEYS.stream, '-', '+'])]]);
}

test('a batch is appended as one entry per request, numbered on from the last, in the order sent, with one stamp', async () => {
  await redis.cli('SET', KEYS.genesis, '{}');
  expect(await link.append(KEYS, 'replica-a', [{ callNumber: 0, payload: '{"k":"now"}' }])).toBe(1);
  const calls = [7, 8, 9].map((callNumber) => ({ callNumber, payload: `{"n":${callNumber}}` }));
  expect(await link.append(KEYS, 'replica-b', calls)).toBe(3);

  const entries = await logEntries();
  expect(entries.map((e) => [e.count, e.origin, e.callNumber, e.payload])).toEqual([
    [1, 'replica-a', 0, '{"k":"now"}'],
    [2, 'replica-b', 7, '{"n":7}'],
    [3, 'replica-b', 8, '{"n":8}'],
    [4, 'replica-b', 9, '{"n":9}'],
  ]);
  const batchStamps = new Set(entries.slice(1).map((e) => e.stampMs));
  expect(batchStamps.size).toBe(1);
  expect([...batchStamps][0]).toBeGreaterThanOrEqual(entries[0]!.stampMs);
  expect(await redis.cli('GET', KEYS.count)).toBe('4');
});

test('without the start state a batch appends nothing and says why', async () => {
  await redis.cli('DEL', KEYS.genesis);
  const before = await logEntries();
  await expect(
    link.append(
      KEYS,
      'replica-a',
      [1, 2].map((callNumber) => ({ callNumber, payload: '{}' })),
    ),
  ).rejects.toThrow(/KEYSIM_NO_GENESIS/);
  expect(await logEntries()).toEqual(before);
  expect(await redis.cli('GET', KEYS.count)).toBe(String(before.length));
});
