/** /_sim/restore over real HTTP: legal states restore, broken ones are refused, errors echo nothing. */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type EngineSnapshot, MAX_META_DEPTH } from '../../src/engine/index.js';
import { type Simulator, createSimulator } from '../../src/http/index.js';
import { DEFAULT_MAX_BODY_BYTES } from '../../src/http/body.js';
import { call, expectV2Error, locationsOf, postJson, send } from '../helpers/http.js';

let sim: Simulator;
beforeAll(async () => {
  sim = await createSimulator({ startMs: Date.UTC(2028, 1, 10, 12) });
});
afterAll(() => sim.close());

function nested(depth: number): Record<string, unknown> {
  let value: Record<string, unknown> = { leaf: 'x' };
  for (let level = 1; level < depth; level++) value = { next: value };
  return value;
}

async function snapshot(): Promise<EngineSnapshot> {
  return call<EngineSnapshot>(sim, '/_sim/snapshot', {});
}

describe('/_sim/restore', () => {
  test('key meta nested 13 to 31 levels deep was accepted on create but its snapshot refused on restore', async () => {
    sim.reset();
    const { apiId } = await call<{ apiId: string }>(sim, '/v2/apis.createApi', { name: 'deep' });
    for (const depth of [13, 16, 31, MAX_META_DEPTH]) await call(sim, '/v2/keys.createKey', { apiId, meta: nested(depth) });
    const tooDeep = await postJson(sim.url, '/v2/keys.createKey', { apiId, meta: nested(MAX_META_DEPTH + 1) }, sim.rootKey);
    expectV2Error(tooDeep, 400, 'application/invalid_input');
    expect(locationsOf(tooDeep)).toEqual(['body.meta']);
    const before = await snapshot();
    sim.reset();
    await call(sim, '/_sim/restore', { snapshot: before });
    expect(await snapshot()).toEqual(before);
  });

  test('a state restored behind its own instant (after a reset) gave a snapshot that its own restore refused', async () => {
    sim.reset();
    const { apiId } = await call<{ apiId: string }>(sim, '/v2/apis.createApi', { name: 'behind' });
    await call(sim, '/v2/keys.createKey', { apiId, credits: { remaining: 5, refill: { interval: 'monthly', amount: 10, refillDay: 31 } } });
    await call(sim, '/_sim/clock.advance', { byMs: 45 * 86_400_000 });
    const later = await snapshot();
    sim.reset(); // the clock goes back to its start, weeks before the snapshot's refills
    await call(sim, '/_sim/restore', { snapshot: later });
    expect(sim.clock.now()).toBe(later.takenAtMs);
    const again = await snapshot();
    sim.reset();
    const restored = await postJson(sim.url, '/_sim/restore', { snapshot: again }, sim.rootKey);
    expect(restored.status).toBe(200);
    expect(await snapshot()).toEqual(again);
  });

  test('a state over the body limit got 413: /_sim/restore reads larger bodies than other routes', async () => {
    sim.reset();
    const meta = { blob: 'm'.repeat(1_000_000) };
    for (let i = 0; i < 12; i++) await call(sim, '/v2/identities.createIdentity', { externalId: `big-${i}`, meta });
    const before = await snapshot();
    const body = JSON.stringify({ snapshot: before });
    expect(Buffer.byteLength(body)).toBeGreaterThan(DEFAULT_MAX_BODY_BYTES);
    const headers = { 'content-type': 'application/json', authorization: `Bearer ${sim.rootKey}` };
    // Another route still refuses such a body.
    expectV2Error(await send(sim.url, '/v2/apis.createApi', { method: 'POST', headers, body }), 413, 'bad_request/request_body_too_large');
    sim.reset();
    const restored = await send(sim.url, '/_sim/restore', { method: 'POST', headers, body });
    expect(restored.status).toBe(200);
    expect(await snapshot()).toEqual(before);
    // Every answer that carries the metadata stays whole.
    const list = await postJson(sim.url, '/v2/identities.listIdentities', { limit: 100 }, sim.rootKey);
    const page = list.body as { data: unknown[]; pagination?: { cursor?: string; hasMore?: boolean } };
    expect(list.status).toBe(200);
    expect(page.data.length).toBeGreaterThan(0);
    expect(page.data.length).toBeLessThan(12);
    expect(page.pagination?.cursor).toBeDefined();
    const journal = await postJson(sim.url, '/_sim/journal.start', {}, sim.rootKey);
    expect(journal.status).toBe(200);
    await call(sim, '/_sim/journal.stop', {});
  });

  test('duplicate key ids are refused with 400 naming the first problem, the state unchanged', async () => {
    sim.reset();
    const { apiId } = await call<{ apiId: string }>(sim, '/v2/apis.createApi', { name: 'dups' });
    for (let i = 0; i < 2; i++) await call(sim, '/v2/keys.createKey', { apiId });
    const good = await snapshot();
    const bad = structuredClone(good);
    (bad.keys[1] as EngineSnapshot['keys'][number]).id = (bad.keys[0] as EngineSnapshot['keys'][number]).id;
    const answer = await postJson(sim.url, '/_sim/restore', { snapshot: bad }, sim.rootKey);
    const error = expectV2Error(answer, 400, 'application/invalid_input');
    expect(locationsOf(answer)).toEqual(['body.snapshot.keys[1].id']);
    expect(error.detail).toMatch(/same id as keys\[0\]/);
    expect(await snapshot()).toEqual(good);
  });
});

describe('error details do not echo what the client sent', () => {
  const secret = 'sk_live_Zq9SECRETdoNotEcho';
  const headers = () => ({ 'content-type': 'application/json', authorization: `Bearer ${sim.rootKey}` });

  test('about ten characters of a malformed body came back: a syntax error names its place only', async () => {
    for (const body of [`{"name": ${secret}}`, `{"name": "x", ${secret}`, `{"name": "x"} ${secret}`, `["${secret}`]) {
      const answer = await send(sim.url, '/v2/apis.createApi', { method: 'POST', headers: headers(), body });
      const error = expectV2Error(answer, 400, 'application/invalid_input');
      expect(error.detail).toMatch(/^The request body is not valid JSON: /);
      expect(answer.text).not.toMatch(/sk_live|SECRET|Zq9/);
    }
  });

  test('nor do wrong content types, enum values or permission queries', async () => {
    const wrongType = await send(sim.url, '/v2/apis.createApi', { method: 'POST', headers: { ...headers(), 'content-type': `text/${secret}` }, body: '{}' });
    expectV2Error(wrongType, 400);
    const { apiId } = await call<{ apiId: string }>(sim, '/v2/apis.createApi', { name: 'echo' });
    const { keyId, key } = await call<{ keyId: string; key: string }>(sim, '/v2/keys.createKey', { apiId, credits: { remaining: 5 } });
    const badEnum = await postJson(sim.url, '/v2/keys.updateCredits', { keyId, operation: secret, value: 1 }, sim.rootKey);
    expectV2Error(badEnum, 400);
    const badQuery = await postJson(sim.url, '/v2/keys.verifyKey', { key, permissions: `a ${secret}` }, sim.rootKey);
    expectV2Error(badQuery, 400);
    for (const answer of [wrongType, badEnum, badQuery]) expect(answer.text).not.toMatch(/sk_live|SECRET|Zq9/);
  });
});
