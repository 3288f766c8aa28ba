/**
 * Rate limits are never over-admitted across replicas (docs/simulator.md#replicas-on-redis): three
 * replicas of one simulator on one real Redis, each burst of identical requests sent all at once
 * and spread round-robin over them, admit exactly what one in-memory simulator admits for the same
 * steps sent one by one — ratelimit.limit, a key's auto-applied rate limit on verifyKey, and
 * multiLimit (all or nothing). As the requests of a burst are identical, the order the log puts
 * them in does not change the answers as a whole: the replicas' answers, sorted, must equal the
 * reference's. The clock is manual and starts 20 s into a 60 s window, so that after one window
 * the previous one still weighs a part (the sliding window), not all or nothing.
 */
import { Agent } from 'undici';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { createSimulator, type Simulator } from '../../../src/http/simulator.js';
import { type Answer, type Target, call, postJson } from '../../helpers/http.js';
import { type RedisServer, startRedis } from '../../helpers/redis-server.js';

const REPLICAS = 3;
const MINUTE = 60_000;
/** 20 s into a minute-aligned window (windows are aligned to the Unix epoch). */
const START_MS = Date.UTC(2030, 0, 1) + 20_000;

let redis: RedisServer;
const replicas: Simulator[] = [];
/** A burst is in flight at once; per replica, at most this many connections carry it. */
const dispatcher = new Agent({ connections: 64 });

beforeAll(async () => {
  redis = await startRedis();
  for (let i = 0; i < REPLICAS; i++) {
    replicas.push(
      await createSimulator({ host: '127.0.0.1', port: 0, store: redis.url, storePrefix: 'ratelimit', seed: 1, clock: 'manual', startMs: START_MS }),
    );
  }
}, 90_000);

afterAll(async () => {
  for (const replica of replicas) await replica.close();
  await dispatcher.close();
  await redis?.close();
});

function replicaAt(i: number): Simulator {
  return replicas[i % REPLICAS] as Simulator;
}

/** One step of a scenario: `count` identical requests at once (a burst), or the clock moved on. */
type Step = { burst: string; body: unknown; count: number } | { advanceMs: number };

/** What a scenario is run against: the replicas (bursts concurrent, round-robin) or one simulator (one by one). */
interface Runner {
  /** Where the scenario's fixtures (namespaces, keys) are created. */
  target: Target;
  burst(path: string, body: unknown, count: number): Promise<Answer[]>;
  advance(byMs: number): Promise<void>;
}

/** What a burst's answer is compared by (the same on every simulator: no ids, no request ids). */
type Projection = (answer: Answer) => unknown;

/** The answer's data; any other status than 200 fails the test. */
const dataOf: Projection = (answer) => {
  if (answer.status !== 200) throw new Error(`a burst's request answered ${answer.status}: ${answer.text.slice(0, 300)}`);
  return (answer.body as { data: unknown }).data;
};

const onReplicas: Runner = {
  get target() {
    return replicaAt(0);
  },
  burst: (path, body, count) => Promise.all(Array.from({ length: count }, (_, i) => postJson(replicaAt(i).url, path, body, replicaAt(0).rootKey, dispatcher))),
  // On one replica only: the clock is part of the replicated state.
  advance: async (byMs) => {
    await call(replicaAt(1), '/_sim/clock.advance', { byMs });
  },
};

/** One in-memory simulator, started at the replicas' clock, the requests of a burst sent one after the other. */
async function inMemory(startMs: number): Promise<Runner & { close(): Promise<void> }> {
  const sim = await createSimulator({ host: '127.0.0.1', port: 0, seed: 1, clock: 'manual', startMs });
  return {
    target: sim,
    async burst(path, body, count) {
      const answers: Answer[] = [];
      for (let i = 0; i < count; i++) answers.push(await postJson(sim.url, path, body, sim.rootKey));
      return answers;
    },
    advance: async (byMs) => {
      await call(sim, '/_sim/clock.advance', { byMs });
    },
    close: () => sim.close(),
  };
}

/** Runs the steps; answers each burst's answers, projected and sorted (their order is the log's, not the test's). */
async function run(runner: Runner, steps: readonly Step[], project: Projection): Promise<string[][]> {
  const bursts: string[][] = [];
  for (const step of steps) {
    if ('advanceMs' in step) await runner.advance(step.advanceMs);
    else bursts.push((await runner.burst(step.burst, step.body, step.count)).map((answer) => JSON.stringify(project(answer))).sort());
  }
  return bursts;
}

/**
 * The scenario on the replicas and on an in-memory simulator at the same clock, each after its own
 * `setup` (which answers the bursts' steps, built from what it created); answers both runs.
 */
async function compare(setup: (runner: Runner) => Promise<Step[]>, project: Projection): Promise<{ replicas: string[][]; reference: string[][] }> {
  const { nowMs } = await call<{ nowMs: number }>(replicaAt(0), '/_sim/clock.get', {});
  const reference = await inMemory(nowMs);
  try {
    const expected = await run(reference, await setup(reference), project);
    const actual = await run(onReplicas, await setup(onReplicas), project);
    return { replicas: actual, reference: expected };
  } finally {
    await reference.close();
  }
}

const count = (answers: readonly string[], fragment: string) => answers.filter((answer) => answer.includes(fragment)).length;

test('ratelimit.limit (50 per 60 s): 300 concurrent calls for one identifier over 3 replicas admit exactly 50, and after the clock moves one window on one replica another 300 admit what one simulator admits (the previous window weighing 2/3)', async () => {
  const limit = { namespace: 'burst', identifier: 'user', limit: 50, duration: MINUTE };
  const { replicas: actual, reference } = await compare(async (runner) => {
    await call(runner.target, '/_sim/namespaces.create', { name: 'burst' });
    return [{ burst: '/v2/ratelimit.limit', body: limit, count: 300 }, { advanceMs: MINUTE }, { burst: '/v2/ratelimit.limit', body: limit, count: 300 }];
  }, dataOf);
  const [first, second] = actual as [string[], string[]];
  expect(count(first, '"success":true')).toBe(50);
  expect(count(first, '"success":false')).toBe(250);
  // 40 s of the previous window's 60 s are still in the sliding window: floor(50 · 40/60) = 33 used, 17 left.
  expect(count(reference[1] as string[], '"success":true')).toBe(17);
  expect(count(second, '"success":true')).toBe(17);
  // Answer by answer (remaining 49..0, then 16..0; the same reset), the replicas answered what one simulator did.
  expect(actual).toEqual(reference);
});

/** A verification without what differs between two simulators (ids). */
const verifyView: Projection = (answer) => {
  const { valid, code, credits, ratelimits } = dataOf(answer) as {
    valid: boolean;
    code: string;
    credits?: number;
    ratelimits?: Array<Record<string, unknown>>;
  };
  return { valid, code, credits, ratelimits: ratelimits?.map(({ id: _id, ...rest }) => rest) };
};

test("a key's auto-applied rate limit (20 per 60 s): 200 concurrent verifications over 3 replicas are valid exactly 20 times, the rest RATE_LIMITED, as on one simulator", async () => {
  const { replicas: actual, reference } = await compare(async (runner) => {
    const { apiId } = await call<{ apiId: string }>(runner.target, '/v2/apis.createApi', { name: 'limited' });
    const { key } = await call<{ key: string }>(runner.target, '/v2/keys.createKey', {
      apiId,
      ratelimits: [{ name: 'requests', limit: 20, duration: MINUTE, autoApply: true }],
    });
    return [{ burst: '/v2/keys.verifyKey', body: { key }, count: 200 }];
  }, verifyView);
  const [burst] = actual as [string[]];
  expect(count(burst, '"valid":true')).toBe(20);
  expect(count(burst, '"code":"RATE_LIMITED"')).toBe(180);
  expect(actual).toEqual(reference);
});

test('multiLimit, all or nothing (30 per 60 s, and 45 per 60 s at cost 2): 300 concurrent calls over 3 replicas pass exactly 22 times, and after one window on one replica another 300 pass as often as on one simulator', async () => {
  const limits = [
    { namespace: 'multi-a', identifier: 'user', limit: 30, duration: MINUTE },
    { namespace: 'multi-b', identifier: 'user', limit: 45, duration: MINUTE, cost: 2 },
  ];
  const { replicas: actual, reference } = await compare(async (runner) => {
    for (const name of ['multi-a', 'multi-b']) await call(runner.target, '/_sim/namespaces.create', { name });
    return [
      { burst: '/v2/ratelimit.multiLimit', body: limits, count: 300 },
      { advanceMs: MINUTE },
      { burst: '/v2/ratelimit.multiLimit', body: limits, count: 300 },
    ];
  }, dataOf);
  const [first, second] = actual as [string[], string[]];
  // B holds 22 calls at cost 2 (44 of 45); a refused call spends A's limit neither: 22 passed, A has 8 left.
  expect(count(first, '"passed":true,"limits"')).toBe(22);
  expect(first.filter((answer) => answer.includes('"passed":false,"limits"')).every((answer) => answer.includes('"limit":30,"remaining":8'))).toBe(true);
  expect(count(second, '"passed":true,"limits"')).toBe(count(reference[1] as string[], '"passed":true,"limits"'));
  expect(actual).toEqual(reference);
});

/** The status, and the data of a 200 or the error's title and type: a 429 of the API rate limit is an answer here. */
const statusView: Projection = (answer) => {
  const body = answer.body as { data?: unknown; error?: { title: string; type: string } };
  return answer.status === 200 ? { status: 200, data: body.data } : { status: answer.status, title: body.error?.title, type: body.error?.type };
};

test("the simulator's own API rate limit (/_sim/apiRateLimit.set, 40 per 60 s): 300 concurrent calls of one root key over 3 replicas are answered exactly 40 times, the rest 429, and after one window on one replica another 300 as often as on one simulator", async () => {
  try {
    const { replicas: actual, reference } = await compare(async (runner) => {
      await call(runner.target, '/_sim/apiRateLimit.set', { limit: 40, durationMs: MINUTE });
      // A verification of no key: answered 200 (NOT_FOUND) when admitted, and it changes no state.
      const body = { key: 'sk_not_a_key_of_this_simulator' };
      return [{ burst: '/v2/keys.verifyKey', body, count: 300 }, { advanceMs: MINUTE }, { burst: '/v2/keys.verifyKey', body, count: 300 }];
    }, statusView);
    const [first, second] = actual as [string[], string[]];
    expect(count(first, '"status":200')).toBe(40);
    expect(count(first, '"status":429')).toBe(260);
    // floor(40 · 40/60) = 26 of the previous window still count: 14 admitted.
    expect(count(second, '"status":200')).toBe(14);
    expect(actual).toEqual(reference);
  } finally {
    // The limit holds for every later request of the root key: the replicas go without it again.
    await call(replicaAt(2), '/_sim/apiRateLimit.set', { limit: null });
  }
});
