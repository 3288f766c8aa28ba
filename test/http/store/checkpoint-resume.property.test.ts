/**
 * Whatever a store-backed simulator went through, a replica started from its checkpoint is the
 * same simulator (docs/simulator.md#replicas-on-redis): after any sequence of requests — keys with
 * credits, refills and rate limits, verifications, credit changes, rate-limit checks, time passing,
 * engine faults (their seeded decisions), the API rate limit, the journal started and taken,
 * resets — with a checkpoint every 1 to 12 entries, a replica started afterwards (another seed and
 * start, which it must not use) holds the same snapshot, faults and clock, and from then on the two
 * answer and change state as one: the same journal, the same snapshot after more requests.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Simulator } from '../../../src/http/simulator.js';
import { postJson } from '../../helpers/http.js';
import { assertProperty } from '../../helpers/property.js';
import { type RedisServer, startRedis } from '../../helpers/redis-server.js';
import { startSimulator } from '../../helpers/simulator.js';

const START_MS = Date.UTC(2027, 0, 30, 23, 0);
const DAY = 86_400_000;

let redis: RedisServer;
let runs = 0;

beforeAll(async () => {
  redis = await startRedis();
}, 90_000);

afterAll(async () => {
  await redis?.close();
});

type Op =
  | { k: 'key'; remaining?: number | undefined; refill?: { interval: 'daily'; amount: number } | undefined; limit?: number | undefined }
  | { k: 'verify'; key: number; cost: number }
  | { k: 'credits'; key: number; operation: 'set' | 'increment' | 'decrement'; value: number }
  | { k: 'limit'; identifier: string; limit: number }
  | { k: 'advance'; byMs: number }
  | { k: 'faults'; overAdmitRate: number; lostDecrementRate: number; skipRefillRate: number }
  | { k: 'apiLimit'; limit: number | null }
  | { k: 'journalStart' }
  | { k: 'journalTake'; max: number }
  | { k: 'reset' };

const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record(
      {
        k: fc.constant('key' as const),
        remaining: fc.option(fc.integer({ min: 0, max: 6 }), { nil: undefined }),
        refill: fc.option(fc.record({ interval: fc.constant('daily' as const), amount: fc.integer({ min: 1, max: 5 }) }), { nil: undefined }),
        limit: fc.option(fc.integer({ min: 1, max: 3 }), { nil: undefined }),
      },
      { requiredKeys: ['k'] },
    ),
  },
  { weight: 6, arbitrary: fc.record({ k: fc.constant('verify' as const), key: fc.nat(9), cost: fc.integer({ min: 0, max: 2 }) }) },
  {
    weight: 1,
    arbitrary: fc.record({
      k: fc.constant('credits' as const),
      key: fc.nat(9),
      operation: fc.constantFrom('set' as const, 'increment' as const, 'decrement' as const),
      value: fc.integer({ min: 1, max: 4 }),
    }),
  },
  { weight: 2, arbitrary: fc.record({ k: fc.constant('limit' as const), identifier: fc.constantFrom('u1', 'u2'), limit: fc.integer({ min: 1, max: 3 }) }) },
  { weight: 2, arbitrary: fc.record({ k: fc.constant('advance' as const), byMs: fc.constantFrom(500, 30_000, 3_600_000, DAY, 31 * DAY) }) },
  {
    weight: 1,
    arbitrary: fc.record({
      k: fc.constant('faults' as const),
      overAdmitRate: fc.constantFrom(0, 0.5),
      lostDecrementRate: fc.constantFrom(0, 0.5),
      skipRefillRate: fc.constantFrom(0, 0.5),
    }),
  },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('apiLimit' as const), limit: fc.option(fc.integer({ min: 3, max: 40 }), { nil: null }) }) },
  { weight: 1, arbitrary: fc.constant({ k: 'journalStart' as const }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('journalTake' as const), max: fc.integer({ min: 1, max: 5 }) }) },
  { weight: 1, arbitrary: fc.constant({ k: 'reset' as const }) },
);

/** What one run drives: the replica, its API (made again after a reset) and the keys made so far. */
interface Driver {
  sim: Simulator;
  apiId: string;
  keys: Array<{ key: string; keyId: string }>;
}

async function send(sim: Simulator, path: string, body: unknown): Promise<{ status: number; data: unknown }> {
  const answer = await postJson(sim.url, path, body, sim.rootKey);
  return { status: answer.status, data: (answer.body as { data?: unknown } | undefined)?.data };
}

async function newApi(sim: Simulator): Promise<string> {
  const { status, data } = await send(sim, '/v2/apis.createApi', { name: 'resume' });
  // The API rate limit may refuse it: the next key then finds no API, which is an answer too.
  return status === 200 ? (data as { apiId: string }).apiId : 'api_refused';
}

/** Sends one operation; the answer is whatever it is (a refusal, a 429 …): the state is what is compared. */
async function apply(d: Driver, o: Op): Promise<void> {
  const keyAt = (i: number) => d.keys[i % Math.max(1, d.keys.length)];
  switch (o.k) {
    case 'key': {
      const body: Record<string, unknown> = { apiId: d.apiId };
      if (o.remaining !== undefined) body.credits = { remaining: o.remaining, ...(o.refill === undefined ? {} : { refill: o.refill }) };
      if (o.limit !== undefined) body.ratelimits = [{ name: 'rl', limit: o.limit, duration: 60_000, autoApply: true }];
      const { status, data } = await send(d.sim, '/v2/keys.createKey', body);
      if (status === 200) d.keys.push(data as { key: string; keyId: string });
      return;
    }
    case 'verify': {
      const key = keyAt(o.key);
      if (key !== undefined) await send(d.sim, '/v2/keys.verifyKey', { key: key.key, credits: { cost: o.cost } });
      return;
    }
    case 'credits': {
      const key = keyAt(o.key);
      if (key !== undefined) await send(d.sim, '/v2/keys.updateCredits', { keyId: key.keyId, operation: o.operation, value: o.value });
      return;
    }
    case 'limit':
      await send(d.sim, '/v2/ratelimit.limit', { namespace: 'resume', identifier: o.identifier, limit: o.limit, duration: 60_000 });
      return;
    case 'advance':
      await send(d.sim, '/_sim/clock.advance', { byMs: o.byMs });
      return;
    case 'faults':
      await send(d.sim, '/_sim/faults.set', { overAdmitRate: o.overAdmitRate, lostDecrementRate: o.lostDecrementRate, skipRefillRate: o.skipRefillRate });
      return;
    case 'apiLimit':
      await send(d.sim, '/_sim/apiRateLimit.set', { limit: o.limit, durationMs: 60_000 });
      return;
    case 'journalStart':
      await send(d.sim, '/_sim/journal.start', {});
      return;
    case 'journalTake':
      await send(d.sim, '/_sim/journal.take', { max: o.max });
      return;
    case 'reset':
      await send(d.sim, '/_sim/reset', {});
      d.keys = [];
      d.apiId = await newApi(d.sim);
      return;
  }
}

/** The state as both replicas must hold it. */
async function stateOf(sim: Simulator): Promise<unknown[]> {
  return Promise.all(['/_sim/snapshot', '/_sim/faults.get', '/_sim/clock.get'].map(async (path) => (await send(sim, path, {})).data));
}

test('a replica started from a checkpoint after any sequence of requests is the same simulator as the one that kept it', async () => {
  await assertProperty(
    fc.asyncProperty(
      fc.integer({ min: 1, max: 12 }),
      fc.boolean(),
      fc.array(op, { minLength: 5, maxLength: 30 }),
      fc.array(op, { minLength: 1, maxLength: 8 }),
      async (every, faulty, before, after) => {
        const prefix = `resume-${++runs}`;
        const options = { store: redis.url, storePrefix: prefix, seed: 3, clock: 'manual' as const, startMs: START_MS, storeCheckpointEvery: every };
        const first = await startSimulator(options);
        let late: Simulator | undefined;
        try {
          const d: Driver = { sim: first, apiId: await newApi(first), keys: [] };
          // Half the runs verify a key with credits under engine faults from the start: their
          // decisions come from dice the checkpoint must carry on from where they stood.
          if (faulty) {
            await apply(d, { k: 'faults', overAdmitRate: 0.5, lostDecrementRate: 0.5, skipRefillRate: 0 });
            await apply(d, { k: 'key', remaining: 100 });
          }
          for (const o of before) await apply(d, o);
          late = await startSimulator({ ...options, seed: 77, startMs: START_MS + 5 * DAY });
          expect(await stateOf(late)).toEqual(await stateOf(first));
          // Then the two take turns: each request is applied by both, whichever one it was sent to.
          for (const [i, o] of after.entries()) {
            d.sim = i % 2 === 0 ? late : first;
            await apply(d, o);
          }
          expect(await stateOf(late)).toEqual(await stateOf(first));
          // The journal is one: what the late replica hands out, the first no longer holds, and both
          // say alike whether it still records.
          const fromLate = (await send(late, '/_sim/journal.take', {})).data as { active: boolean; overflowed: boolean };
          const fromFirst = (await send(first, '/_sim/journal.take', {})).data as { active: boolean; overflowed: boolean };
          expect(fromFirst).toMatchObject({ entries: [], active: fromLate.active, overflowed: fromLate.overflowed });
        } finally {
          await late?.close();
          await first.close();
        }
      },
    ),
    { numRuns: 15 },
  );
}, 240_000);
