/**
 * Exact across replicas (docs/simulator.md#replicas-on-redis): three replicas on one Redis, 100
 * rounds; each round a new key with 100 credits takes 1,000 concurrent verifications spread over
 * the three. Every round gives exactly 100 valid answers with balances 99..0, each once, every
 * other answer USAGE_EXCEEDED, and every replica then reads the balance 0. The rounds are split
 * over tests so that none nears the live tier's limit on a busy machine; together they are 100.
 */
import { Agent } from 'undici';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Simulator } from '../../../src/http/simulator.js';
import { call, postJson } from '../../helpers/http.js';
import { type RedisServer, startRedis } from '../../helpers/redis-server.js';
import { startSimulator } from '../../helpers/simulator.js';

const REPLICAS = 3;
const ROUNDS = 100;
const ROUNDS_PER_TEST = 25;
const CREDITS = 100;
const VERIFICATIONS = 1_000;

let redis: RedisServer;
const replicas: Simulator[] = [];
// The 1,000 verifications of a round are sent at once, over at most this many connections a replica.
const dispatcher = new Agent({ connections: 64 });
let apiId: string;

beforeAll(async () => {
  redis = await startRedis();
  for (let i = 0; i < REPLICAS; i++) replicas.push(await startSimulator({ store: redis.url, storePrefix: 'exact', seed: 1 }));
  apiId = (await call<{ apiId: string }>(replicas[0] as Simulator, '/v2/apis.createApi', { name: 'exact' })).apiId;
}, 90_000);

afterAll(async () => {
  for (const replica of replicas) await replica.close();
  await dispatcher.close();
  await redis?.close();
});

interface Verdict {
  valid: boolean;
  code: string;
  credits?: number;
}

/** One round: a new key, its verifications spread over the replicas; what each answered. */
async function round(n: number): Promise<{ statuses: number[]; data: Verdict[]; keyId: string }> {
  const creator = replicas[n % REPLICAS] as Simulator;
  const { key, keyId } = await call<{ key: string; keyId: string }>(creator, '/v2/keys.createKey', { apiId, credits: { remaining: CREDITS } });
  const answers = await Promise.all(
    Array.from({ length: VERIFICATIONS }, (_, i) =>
      postJson((replicas[(i + n) % REPLICAS] as Simulator).url, '/v2/keys.verifyKey', { key }, creator.rootKey, dispatcher),
    ),
  );
  return { statuses: answers.map((a) => a.status), data: answers.map((a) => (a.body as { data: Verdict }).data), keyId };
}

const BALANCES = Array.from({ length: CREDITS }, (_, i) => CREDITS - 1 - i);

for (let first = 0; first < ROUNDS; first += ROUNDS_PER_TEST) {
  const last = Math.min(first + ROUNDS_PER_TEST, ROUNDS) - 1;
  test(`rounds ${first + 1}–${last + 1} of ${ROUNDS}: ${VERIFICATIONS} concurrent verifications of a ${CREDITS}-credit key over ${REPLICAS} replicas are valid exactly ${CREDITS} times, balances ${CREDITS - 1}..0 once each`, async () => {
    for (let n = first; n <= last; n++) {
      const { statuses, data, keyId } = await round(n);
      expect(
        statuses.filter((s) => s !== 200),
        `round ${n + 1}: statuses ${[...new Set(statuses)].join(', ')}`,
      ).toEqual([]);
      const valid = data.filter((d) => d.valid);
      expect(
        valid.map((d) => d.credits).sort((x, y) => (y as number) - (x as number)),
        `round ${n + 1}: the balances of the valid answers`,
      ).toEqual(BALANCES);
      expect(new Set(data.filter((d) => !d.valid).map((d) => d.code)), `round ${n + 1}: the refusals`).toEqual(new Set(['USAGE_EXCEEDED']));
      for (const replica of replicas) {
        expect(
          (await call<{ credits?: { remaining: number } }>(replica, '/v2/keys.getKey', { keyId })).credits?.remaining,
          `round ${n + 1}: ${replica.url}'s balance`,
        ).toBe(0);
      }
    }
  }, 180_000);
}
