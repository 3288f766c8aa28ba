/** Large answers (snapshots) go out in pieces: the text is JSON.stringify's, over real HTTP too. */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EngineSnapshot } from '../../src/engine/index.js';
import { type Simulator, createSimulator } from '../../src/http/index.js';
import { jsonPieces } from '../../src/http/json-stream.js';
import { assertProperty } from '../helpers/property.js';
import { call, postJson } from '../helpers/http.js';

describe('jsonPieces', () => {
  it('joins to exactly JSON.stringify of any JSON value, nested or not', () => {
    const value = fc.jsonValue({ maxDepth: 6 });
    assertProperty(
      fc.property(fc.oneof(value, fc.dictionary(fc.string(), fc.array(fc.dictionary(fc.string(), value)))), (v) => {
        expect([...jsonPieces(v)].join('')).toBe(JSON.stringify(v));
      }),
    );
  });

  it('leaves out undefined properties as JSON.stringify does', () => {
    const v = { meta: { requestId: 'r' }, data: { a: undefined, list: [{ b: undefined, c: 1 }], d: null } };
    expect([...jsonPieces(v)].join('')).toBe(JSON.stringify(v));
  });
});

describe('/_sim/snapshot of a state larger than one chunk', () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await createSimulator({ startMs: Date.UTC(2028, 1, 10, 12) });
  });
  afterAll(() => sim.close());

  it('arrives whole, chunked, equal to the engine snapshot, and restores', async () => {
    const { apiId } = await call<{ apiId: string }>(sim, '/v2/apis.createApi', { name: 'big' });
    // About 3,000 keys with metadata: several MB of JSON, several chunks of about 1 MB.
    for (let i = 0; i < 3000; i++) {
      const created = sim.engine.keys.createKey(sim.rootKey, {
        apiId,
        meta: { note: 'x'.repeat(600), i },
        credits: { remaining: 5, refill: { interval: 'daily', amount: 5 } },
      });
      if (!created.ok) throw new Error(created.error.detail);
    }
    const answer = await postJson(sim.url, '/_sim/snapshot', {}, sim.rootKey);
    expect(answer.status).toBe(200);
    expect(answer.headers['transfer-encoding']).toBe('chunked');
    expect(answer.text.length).toBeGreaterThan(2 * 1024 * 1024);
    const snapshot = (answer.body as { data: EngineSnapshot }).data;
    expect(snapshot).toEqual(sim.engine.snapshot());
    sim.reset();
    expect(sim.engine.stats().keys).toBe(0);
    const restored = await postJson(sim.url, '/_sim/restore', { snapshot }, sim.rootKey);
    expect(restored.status).toBe(200);
    expect(sim.engine.stats().keys).toBe(3000);
  });
});
