/**
 * The production profile behind real HTTP (createSimulator({ profile: 'production' })): a
 * request's region from X-Keysim-Region or its connection, the region named on every answer,
 * and the profile's drift, stale caches and late replays seen through the API; the journal on the
 * profile (its start a sync point, every entry with its region) and its replay, answer for answer.
 */
import { Client } from 'undici';
import { describe, expect, it } from 'vitest';
import { createSimulator } from '../../src/http/simulator.js';
import { JournalReplayer, type JournalStart, type JournalTake } from '../../src/http/index.js';
import { PRODUCTION_FIGURES } from '../../src/engine/index.js';
import { type Answer, postJson, send } from '../helpers/http.js';
import { useSimulator } from '../helpers/simulator.js';

const sim = useSimulator({ profile: 'production', regions: 2 });

function call(path: string, body: unknown, region?: number, seq?: number): Promise<Answer> {
  const headers: Record<string, string> = { 'content-type': 'application/json', authorization: `Bearer ${sim().rootKey}` };
  if (region !== undefined) headers['x-keysim-region'] = String(region);
  if (seq !== undefined) headers['x-keysim-seq'] = String(seq);
  return send(sim().url, path, { method: 'POST', headers, body: JSON.stringify(body) });
}

async function data<T>(answer: Promise<Answer>): Promise<T> {
  const got = await answer;
  if (got.status !== 200) throw new Error(`expected 200, got ${got.status}: ${got.text}`);
  return (got.body as { data: T }).data;
}

async function keyWith(credits?: number): Promise<{ key: string; keyId: string }> {
  const { apiId } = await data<{ apiId: string }>(call('/v2/apis.createApi', { name: 'prod' }, 1));
  return data(call('/v2/keys.createKey', credits === undefined ? { apiId } : { apiId, credits: { remaining: credits } }, 1));
}

async function verify(key: string, region: number, cost = 1): Promise<{ valid: boolean; code: string; credits?: number }> {
  const answer = await call('/v2/keys.verifyKey', { key, credits: { cost } }, region);
  expect(answer.headers['x-keysim-region']).toBe(String(region));
  return (answer.body as { data: { valid: boolean; code: string; credits?: number } }).data;
}

/** An answer without its request id (the replay's differs by construction). */
function withoutRequestId(body: unknown): unknown {
  return JSON.parse(JSON.stringify(body, (k, v: unknown) => (k === 'requestId' ? undefined : v)));
}

/** Moves the service clock past every buffered debit and every counter's life. */
function converge(): void {
  const s = sim();
  const last = Math.max(s.profile?.lastReplayDueMs ?? 0, s.clock.now());
  s.clock.set(last + PRODUCTION_FIGURES.counterTtlMs);
}

describe('regions over HTTP', () => {
  it('every answer names its region in x-keysim-region: the header one, errors and health included', async () => {
    const { key } = await keyWith();
    expect((await call('/v2/keys.verifyKey', { key }, 2)).headers['x-keysim-region']).toBe('2');
    const missing = await call('/v2/keys.noSuchThing', {}, 2);
    expect(missing.status).toBe(404);
    expect(missing.headers['x-keysim-region']).toBe('2');
    const health = await send(sim().url, '/_sim/health', { method: 'GET', headers: { 'x-keysim-region': '1' } });
    expect(health.headers['x-keysim-region']).toBe('1');
    expect(health.body).toMatchObject({ status: 'ok', profile: 'production', regions: 2 });
  });

  it('without the header each connection is given the next region in turn and keeps it', async () => {
    const clients = [new Client(sim().url), new Client(sim().url)];
    try {
      const regionOf = async (client: Client) => {
        const response = await client.request({ method: 'GET', path: '/_sim/health' });
        await response.body.text();
        return response.headers['x-keysim-region'];
      };
      const first = [await regionOf(clients[0] as Client), await regionOf(clients[1] as Client)];
      expect(new Set(first)).toEqual(new Set(['1', '2']));
      expect([await regionOf(clients[0] as Client), await regionOf(clients[1] as Client)]).toEqual(first);
    } finally {
      await Promise.all(clients.map((c) => c.close()));
    }
  });

  it('a region header out of range is a 400 in the error envelope naming the allowed range', async () => {
    for (const bad of ['3', '0', 'eu-west', '']) {
      const headers = { 'content-type': 'application/json', 'x-keysim-region': bad };
      const answer = await send(sim().url, '/v2/keys.verifyKey', { method: 'POST', headers, body: '{"key":"k"}' });
      expect(answer.status).toBe(400);
      const error = (answer.body as { error: { detail: string; status: number } }).error;
      expect(error.status).toBe(400);
      expect(error.detail).toContain('from 1 to 2');
      expect(answer.headers['x-keysim-region']).toBeUndefined();
    }
  });

  it('the exact engine (the default) ignores the header and names no region', async () => {
    const exact = await createSimulator({ host: '127.0.0.1', port: 0, seed: 7 });
    try {
      const answer = await postJson(exact.url, '/v2/keys.verifyKey', { key: 'k' }, exact.rootKey);
      expect(answer.status).toBe(200);
      expect(answer.headers['x-keysim-region']).toBeUndefined();
      const health = await send(exact.url, '/_sim/health', { method: 'GET', headers: { 'x-keysim-region': '9' } });
      expect(health.body).not.toHaveProperty('profile');
    } finally {
      await exact.close();
    }
  });

  it('createSimulator refuses the production profile with workers, and regions without it, saying how to fix it', async () => {
    await expect(createSimulator({ profile: 'production', workers: 2 })).rejects.toThrow('the production profile runs in one process');
    await expect(createSimulator({ regions: 3 })).rejects.toThrow('regions applies to the production profile only');
    await expect(createSimulator({ profile: 'production', regions: 99 })).rejects.toThrow('regions must be an integer from 1 to 16, got 99.');
  });
});

describe('the oracle and the production profile', () => {
  it('journal.start on the profile is a sync point, no longer a 412: buffered debits and unpublished rate-limit counts land in the database, the start names the profile, every entry its region', async () => {
    const { key, keyId } = await keyWith(100);
    await data(call('/_sim/namespaces.create', { name: 'sync' }, 1));
    expect((await verify(key, 1)).credits).toBe(99);
    // 1 of 10 admitted in region 1: under the share a region publishes at once.
    await data(call('/v2/ratelimit.limit', { namespace: 'sync', identifier: 'u', limit: 10, duration: 60_000 }, 1));
    // The debit is still buffered: the database has 100.
    expect((await data<{ credits: { remaining: number } }>(call('/v2/keys.getKey', { keyId }, 2))).credits.remaining).toBe(100);

    const start = await data<JournalStart & { snapshot: { keys: Array<{ id: string; remaining: number }>; windows: Array<[string, { current: number }]> } }>(
      call('/_sim/journal.start', {}, 2),
    );
    expect(start.profile).toEqual({ name: 'production', figures: { ...PRODUCTION_FIGURES, regions: 2 } });
    expect(start.snapshot.keys.find((k) => k.id === keyId)?.remaining).toBe(99);
    expect(start.snapshot.windows.map(([, counter]) => counter.current)).toEqual([1]);
    expect(sim().profile?.stats()).toMatchObject({
      pendingDebits: 0,
      regions: [
        { cachedKeys: 0, counters: 0 },
        { cachedKeys: 0, counters: 0 },
      ],
    });
    expect((await data<{ credits: { remaining: number } }>(call('/v2/keys.getKey', { keyId }, 2))).credits.remaining).toBe(99);

    await verify(key, 2);
    await verify(key, 1);
    const { entries } = await data<JournalTake>(call('/_sim/journal.take', {}, 1));
    expect(entries.map((e) => [e.path, e.region])).toEqual([
      ['/v2/keys.getKey', 2],
      ['/v2/keys.verifyKey', 2],
      ['/v2/keys.verifyKey', 1],
    ]);
  });

  it('a replay of a profile journal reproduces every answer of a mixed load over two regions: drift, the 50 → 49 set, rate limits, a manual clock across counter lives and replay delays', async () => {
    // Traffic before the journal: the start must sync it away (warm caches, counters, buffered debits).
    const before = await keyWith(30);
    for (const region of [1, 2, 1]) await verify(before.key, region, 2);
    const start = await data<JournalStart>(call('/_sim/journal.start', {}, 1));

    const answers = new Map<number, Answer>();
    let seq = 0;
    const record = async (path: string, body: unknown, region: number): Promise<Answer> => {
      const mine = seq++;
      const answer = await call(path, body, region, mine);
      answers.set(mine, answer);
      return answer;
    };
    const body = <T>(answer: Answer) => (answer.body as { data: T }).data;
    const { apiId } = body<{ apiId: string }>(await record('/v2/apis.createApi', { name: 'mixed' }, 2));
    const drained = body<{ key: string; keyId: string }>(await record('/v2/keys.createKey', { apiId, credits: { remaining: 20 } }, 1));
    const setAfter = body<{ key: string; keyId: string }>(await record('/v2/keys.createKey', { apiId, credits: { remaining: 100 } }, 2));
    await record('/_sim/namespaces.create', { name: 'mixed-ns' }, 1);
    const limited = (identifier: string, cost = 1) => ({ namespace: 'mixed-ns', identifier, limit: 5, duration: 10_000, cost });
    let spentDrained = 0;
    for (let round = 0; round < 6; round++) {
      // Concurrent, in both regions: the drained key over-spends across them; rate limits in both.
      const batch = await Promise.all([
        record('/v2/keys.verifyKey', { key: drained.key, credits: { cost: 4 } }, 1),
        record('/v2/keys.verifyKey', { key: drained.key, credits: { cost: 3 } }, 2),
        record('/v2/ratelimit.limit', limited('alice'), 1 + (round % 2)),
        record('/v2/ratelimit.limit', limited('bob', 2), 2),
        record('/v2/keys.verifyKey', { key: before.key, ratelimits: [{ name: 'k', limit: 3, duration: 10_000 }] }, 1 + ((round + 1) % 2)),
      ]);
      spentDrained += [4, 3].reduce((sum, cost, i) => sum + (body<{ valid: boolean }>(batch[i] as Answer).valid ? cost : 0), 0);
      // Across replay delays, and every third round across a counter's life (60 s).
      await record('/_sim/clock.advance', { byMs: round % 3 === 2 ? 61_000 : 2_500 }, 1 + (round % 2));
    }
    // The 50 → 49 case: a verification, then credits set to 50 in the same region; the buffered debit lands after the set.
    expect(body<{ credits: number }>(await record('/v2/keys.verifyKey', { key: setAfter.key }, 1)).credits).toBe(99);
    await record('/v2/keys.updateCredits', { keyId: setAfter.keyId, operation: 'set', value: 50 }, 1);
    await record('/v2/ratelimit.setOverride', { namespace: 'mixed-ns', identifier: 'alice', limit: 1, duration: 10_000 }, 2);
    await record('/v2/ratelimit.limit', limited('alice'), 1);
    await record('/v2/ratelimit.limit', limited('alice'), 2);
    await record('/_sim/clock.advance', { byMs: 70_000 }, 2);
    expect(body<{ credits: { remaining: number } }>(await record('/v2/keys.getKey', { keyId: setAfter.keyId }, 2)).credits.remaining).toBe(49);
    await record('/v2/keys.getKey', { keyId: drained.keyId }, 1);

    const { entries } = await data<JournalTake>(call('/_sim/journal.take', {}, 1));
    const replayer = JournalReplayer.create(start);
    const replayed = new Map<number, { status: number; body: unknown }>();
    for (const entry of entries) {
      expect(entry.region, `entry ${entry.index}`).toBeGreaterThanOrEqual(1);
      const answer = replayer.apply(entry);
      if (entry.seq !== undefined) replayed.set(entry.seq, answer);
    }
    expect(replayed.size).toBe(answers.size);
    for (const [n, received] of answers) {
      const expected = replayed.get(n);
      expect({ seq: n, status: expected?.status, body: withoutRequestId(expected?.body) }).toEqual({
        seq: n,
        status: received.status,
        body: withoutRequestId(received.body),
      });
    }
    // The load showed the profile's behaviour (else the comparison proves little): the two regions
    // spent more than the key's 20 credits between them.
    expect(spentDrained).toBeGreaterThan(20);
    expect(replayer.replayed).toBe(entries.length);
  });

  it('an entry without a region on a profile journal, or with a region out of range, is a clear error naming the entry', async () => {
    const start = await data<JournalStart>(call('/_sim/journal.start', {}, 1));
    await call('/v2/apis.createApi', { name: 'regionless' }, 2);
    const [entry] = (await data<JournalTake>(call('/_sim/journal.take', {}, 1))).entries;
    if (entry === undefined) throw new Error('no entry journaled');
    const { region, ...without } = entry;
    expect(region).toBe(2);
    expect(() => JournalReplayer.create(start).apply(without)).toThrow(
      'journal entry 0 (POST /v2/apis.createApi) names no region, but the journal ran on the production profile (2 regions): every entry needs the region it ran in, 1 to 2',
    );
    expect(() => JournalReplayer.create(start).apply({ ...entry, region: 3 })).toThrow("names region 3, but the journal's profile has regions 1 to 2");
    const exact: JournalStart = { snapshot: start.snapshot, startedAtMs: start.startedAtMs, operatorRootKeyHash: start.operatorRootKeyHash };
    expect(() => JournalReplayer.create(exact).apply(entry)).toThrow("ran in region 2, but the journal's start names no production profile");
    expect(() => JournalReplayer.create({ ...start, profile: { name: 'production', figures: { ...PRODUCTION_FIGURES, regions: 99 } } })).toThrow(
      "the journal start's production profile cannot be built: production profile: regions must be an integer from 1 to 16, got 99.",
    );
  });
});

describe('the production behaviour over HTTP', () => {
  it('a key of 100 credits verified alternately in two regions gives more than 100 VALID, at most 200; the database ends at 100 less the debits', async () => {
    const { key, keyId } = await keyWith(100);
    let valid = 0;
    for (let i = 0; i < 240; i++) {
      if ((await verify(key, 1 + (i % 2))).valid) valid++;
      sim().clock.advance(100);
    }
    expect(valid).toBeGreaterThan(100);
    expect(valid).toBeLessThanOrEqual(200);
    converge();
    const view = await data<{ credits: { remaining: number } }>(call('/v2/keys.getKey', { keyId }, 2));
    expect(view.credits.remaining).toBe(Math.max(0, 100 - valid));
  });

  it('a verification of cost 1, then credits set to 50, ends at 49 (the stale replay lands after the set)', async () => {
    const { key, keyId } = await keyWith(100);
    expect((await verify(key, 1)).credits).toBe(99);
    await data(call('/v2/keys.updateCredits', { keyId, operation: 'set', value: 50 }, 1));
    converge();
    expect((await data<{ credits: { remaining: number } }>(call('/v2/keys.getKey', { keyId }, 1))).credits.remaining).toBe(49);
  });

  it('a key disabled in region 1 verifies VALID in region 2 until its cache goes stale, then DISABLED', async () => {
    const { key, keyId } = await keyWith();
    const t0 = sim().clock.now();
    expect((await verify(key, 2)).code).toBe('VALID');
    await data(call('/v2/keys.updateKey', { keyId, enabled: false }, 1));
    expect((await verify(key, 1)).code).toBe('DISABLED');
    expect((await verify(key, 2)).code).toBe('VALID');
    sim().clock.set(t0 + PRODUCTION_FIGURES.cacheFreshMs);
    await verify(key, 2); // the stale entry, served while it is read again
    expect((await verify(key, 2)).code).toBe('DISABLED');
  });
});
