/**
 * The production profile behind real HTTP (createSimulator({ profile: 'production' })): a
 * request's region from X-Keysim-Region or its connection, the region named on every answer,
 * and the profile's drift, stale caches and late replays seen through the API.
 */
import { Client } from 'undici';
import { describe, expect, it } from 'vitest';
import { createSimulator } from '../../src/http/simulator.js';
import { PRODUCTION_FIGURES } from '../../src/engine/index.js';
import { type Answer, postJson, send } from '../helpers/http.js';
import { useSimulator } from '../helpers/simulator.js';

const sim = useSimulator({ profile: 'production', regions: 2 });

function call(path: string, body: unknown, region?: number): Promise<Answer> {
  const headers: Record<string, string> = { 'content-type': 'application/json', authorization: `Bearer ${sim().rootKey}` };
  if (region !== undefined) headers['x-keysim-region'] = String(region);
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
  it('journal.start is refused with 412 precondition_failed: a replay through the exact engine cannot judge regions', async () => {
    const answer = await call('/_sim/journal.start', {}, 1);
    expect(answer.status).toBe(412);
    expect(answer.body).toMatchObject({ error: { type: expect.stringContaining('precondition_failed') as unknown } });
    expect((answer.body as { error: { detail: string } }).error.detail).toContain('without --profile production');
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
