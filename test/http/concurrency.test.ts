/**
 * Concurrency over real sockets: many requests in flight at once on many connections must
 * consume credits and rate-limit tokens exactly, never more, never twice.
 */
import { Pool } from 'undici';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { type Simulator, createSimulator } from '../../src/http/index.js';
import { type Answer, call, postJson } from '../helpers/http.js';

const START_MS = Date.parse('2028-03-15T10:00:30.000Z');

let sim: Simulator;
let pool: Pool;
let apiId: string;

beforeAll(async () => {
  sim = await createSimulator({ startMs: START_MS, seed: 3, validateResponses: true });
});
afterAll(() => sim.close());
beforeEach(async () => {
  sim.reset();
  // Up to 200 requests in flight at once, each on its own connection.
  pool = new Pool(sim.url, { connections: 200, pipelining: 1 });
  apiId = (await call<{ apiId: string }>(sim, '/v2/apis.createApi', { name: 'concurrency' })).apiId;
});
afterEach(() => pool.close());

/** Fires `count` requests at once and returns the answers in the order they were sent. */
async function fire(count: number, path: string, bodyOf: (i: number) => unknown, rootKey: string | null = sim.rootKey): Promise<Answer[]> {
  const answers = await Promise.all(Array.from({ length: count }, (_, i) => postJson(sim.url, path, bodyOf(i), rootKey, pool)));
  for (const answer of answers) expect(answer.status, answer.text.slice(0, 300)).toBe(200);
  // They really were in flight together, on many connections.
  expect(pool.stats.connected).toBeGreaterThan(10);
  return answers;
}

interface VerifyData {
  valid: boolean;
  code: string;
  credits?: number;
  ratelimits?: Array<{ name: string; remaining: number; exceeded: boolean }>;
}

function verifyData(answer: Answer): VerifyData {
  return (answer.body as { data: VerifyData }).data;
}

async function createKey(body: Record<string, unknown>): Promise<{ keyId: string; key: string }> {
  return call<{ keyId: string; key: string }>(sim, '/v2/keys.createKey', { apiId, ...body });
}

async function remainingOf(keyId: string): Promise<number | null | undefined> {
  const key = await call<{ credits?: { remaining: number | null } }>(sim, '/v2/keys.getKey', { keyId });
  return key.credits?.remaining;
}

describe('credits under concurrency', () => {
  test('1,000 concurrent verifications of a key with 100 credits → exactly 100 VALID, credits 99 … 0 each once', async () => {
    const { keyId, key } = await createKey({ credits: { remaining: 100 } });
    const answers = (await fire(1000, '/v2/keys.verifyKey', () => ({ key }), null)).map(verifyData);

    const valid = answers.filter((a) => a.valid);
    expect(valid).toHaveLength(100);
    for (const a of valid) expect(a.code).toBe('VALID');
    expect(valid.map((a) => a.credits).sort((x, y) => (y ?? 0) - (x ?? 0))).toEqual(Array.from({ length: 100 }, (_, i) => 99 - i));

    const refused = answers.filter((a) => !a.valid);
    expect(refused).toHaveLength(900);
    for (const a of refused) expect(a).toMatchObject({ code: 'USAGE_EXCEEDED', credits: 0 });
    expect(await remainingOf(keyId)).toBe(0);
  });

  test('the same with cost 3 on 100 credits → exactly 33 VALID, credits 97, 94, …, 1 each once, and 1 left', async () => {
    const { keyId, key } = await createKey({ credits: { remaining: 100 } });
    const answers = (await fire(1000, '/v2/keys.verifyKey', () => ({ key, credits: { cost: 3 } }), null)).map(verifyData);

    const valid = answers.filter((a) => a.valid);
    expect(valid).toHaveLength(33);
    expect(valid.map((a) => a.credits).sort((x, y) => (y ?? 0) - (x ?? 0))).toEqual(Array.from({ length: 33 }, (_, i) => 97 - 3 * i));
    for (const a of answers.filter((x) => !x.valid)) expect(a).toMatchObject({ code: 'USAGE_EXCEEDED', credits: 1 });
    expect(await remainingOf(keyId)).toBe(1);
  });

  test('a key-level auto-applied rate limit under concurrency: exactly `limit` VALID, and rate-limited calls consume no credits', async () => {
    const { keyId, key } = await createKey({
      credits: { remaining: 100 },
      ratelimits: [{ name: 'per-key', limit: 30, duration: 60_000, autoApply: true }],
    });
    const answers = (await fire(300, '/v2/keys.verifyKey', () => ({ key }), sim.rootKey)).map(verifyData);
    const valid = answers.filter((a) => a.valid);
    expect(valid).toHaveLength(30);
    expect(answers.filter((a) => a.code === 'RATE_LIMITED')).toHaveLength(270);
    expect(valid.map((a) => a.credits).sort((x, y) => (y ?? 0) - (x ?? 0))).toEqual(Array.from({ length: 30 }, (_, i) => 99 - i));
    expect(await remainingOf(keyId)).toBe(70);
  });
});

describe('rate limits under concurrency', () => {
  test('an identity-level limit is shared by all its keys: limit 25 → exactly 25 admitted out of 400 over 4 keys', async () => {
    await call(sim, '/v2/identities.createIdentity', {
      externalId: 'team_1',
      ratelimits: [{ name: 'shared', limit: 25, duration: 60_000, autoApply: true }],
    });
    const keys = await Promise.all([0, 1, 2, 3].map(() => createKey({ externalId: 'team_1' })));
    const answers = (await fire(400, '/v2/keys.verifyKey', (i) => ({ key: keys[i % 4]?.key }), null)).map(verifyData);

    const valid = answers.filter((a) => a.valid);
    expect(valid).toHaveLength(25);
    expect(answers.filter((a) => a.code === 'RATE_LIMITED')).toHaveLength(375);
    // The shared window's remaining tokens, as each admitted verification saw them: 24 … 0.
    const remaining = valid.map((a) => a.ratelimits?.find((r) => r.name === 'shared')?.remaining).sort((x, y) => (y ?? 0) - (x ?? 0));
    expect(remaining).toEqual(Array.from({ length: 25 }, (_, i) => 24 - i));
    // The window is spent for every key of the identity, not per key.
    for (const k of keys) expect(await call(sim, '/v2/keys.verifyKey', { key: k.key })).toMatchObject({ valid: false, code: 'RATE_LIMITED' });
  });

  test('ratelimit.limit: 500 concurrent calls with limit 40 → exactly 40 succeed, remaining 39 … 0 each once', async () => {
    await call(sim, '/_sim/namespaces.create', { name: 'api' });
    const answers = await fire(500, '/v2/ratelimit.limit', () => ({ namespace: 'api', identifier: 'user_1', limit: 40, duration: 60_000 }));
    const data = answers.map((a) => (a.body as { data: { success: boolean; remaining: number; limit: number } }).data);
    const passed = data.filter((d) => d.success);
    expect(passed).toHaveLength(40);
    expect(passed.map((d) => d.remaining).sort((x, y) => y - x)).toEqual(Array.from({ length: 40 }, (_, i) => 39 - i));
    for (const d of data.filter((x) => !x.success)) expect(d).toMatchObject({ remaining: 0, limit: 40 });
  });

  test('ratelimit.limit with cost 3 and limit 40 → exactly 13 succeed (39 tokens), remaining 37, 34, …, 1', async () => {
    await call(sim, '/_sim/namespaces.create', { name: 'api' });
    const answers = await fire(300, '/v2/ratelimit.limit', () => ({ namespace: 'api', identifier: 'user_2', limit: 40, duration: 60_000, cost: 3 }));
    const passed = answers.map((a) => (a.body as { data: { success: boolean; remaining: number } }).data).filter((d) => d.success);
    expect(passed.map((d) => d.remaining).sort((x, y) => y - x)).toEqual(Array.from({ length: 13 }, (_, i) => 37 - 3 * i));
  });

  test('an override under concurrency: limit 7 for "vip_*" → exactly 7 of 300 succeed although the request asks for 1000', async () => {
    await call(sim, '/_sim/namespaces.create', { name: 'api' });
    const { overrideId } = await call<{ overrideId: string }>(sim, '/v2/ratelimit.setOverride', {
      namespace: 'api',
      identifier: 'vip_*',
      limit: 7,
      duration: 60_000,
    });
    const answers = await fire(300, '/v2/ratelimit.limit', () => ({ namespace: 'api', identifier: 'vip_42', limit: 1000, duration: 60_000 }));
    const data = answers.map((a) => (a.body as { data: { success: boolean; limit: number; overrideId?: string } }).data);
    expect(data.filter((d) => d.success)).toHaveLength(7);
    for (const d of data) expect(d).toMatchObject({ limit: 7, overrideId });
  });

  test('multiLimit under concurrency is all-or-nothing: limits 10 and 20 → exactly 10 pass, and the denials consumed nothing', async () => {
    await call(sim, '/_sim/namespaces.create', { name: 'api' });
    const pair = [
      { namespace: 'api', identifier: 'a', limit: 10, duration: 60_000 },
      { namespace: 'api', identifier: 'b', limit: 20, duration: 60_000 },
    ];
    const answers = await fire(200, '/v2/ratelimit.multiLimit', () => pair);
    expect(answers.filter((a) => (a.body as { data: { passed: boolean } }).data.passed)).toHaveLength(10);
    const b = await call<{ success: boolean; remaining: number }>(sim, '/v2/ratelimit.limit', {
      namespace: 'api',
      identifier: 'b',
      limit: 20,
      duration: 60_000,
    });
    expect(b).toMatchObject({ success: true, remaining: 9 });
  });
});
