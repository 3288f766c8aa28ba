/**
 * /_sim/restore reads its body as it arrives, one record at a time, up to `restoreMaxBodyBytes`
 * (not the limit of ordinary requests): over real sockets, with a small limit so that the test
 * stays small. Every refusal is the answer the whole body would have got, and leaves the state.
 */
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { Engine, type EngineSnapshot, MAX_META_DEPTH, ManualClock } from '../../src/engine/index.js';
import { JournalReplayer, type JournalStart, type JournalTake, type Simulator, createSimulator } from '../../src/http/index.js';
import { restoreRequest } from '../../src/http/schemas/admin.js';
import { validate } from '../../src/http/schema.js';
import { type Answer, call, expectV2Error, locationsOf, postJson, send } from '../helpers/http.js';

const START_MS = Date.UTC(2028, 1, 10, 12);
/** Small, so that a test body can pass it; the default is 1 GiB. */
const LIMIT = 256 * 1024;

let sim: Simulator;
beforeAll(async () => {
  sim = await createSimulator({ startMs: START_MS, restoreMaxBodyBytes: LIMIT, maxBodyBytes: 16 * 1024 });
});
afterAll(() => sim.close());

const snapshot = () => call<EngineSnapshot>(sim, '/_sim/snapshot', {});
const headers = () => ({ 'content-type': 'application/json', authorization: `Bearer ${sim.rootKey}` });

/** Keys with some metadata until the snapshot is about `bytes` long. */
async function stateOf(bytes: number): Promise<EngineSnapshot> {
  sim.reset();
  const { apiId } = await call<{ apiId: string }>(sim, '/v2/apis.createApi', { name: 'stream' });
  const { namespaceId } = await call<{ namespaceId: string }>(sim, '/_sim/namespaces.create', { name: 'api' });
  expect(namespaceId).toBeDefined();
  await call(sim, '/v2/ratelimit.limit', { namespace: 'api', identifier: 'u1', limit: 5, duration: 60_000 });
  await call(sim, '/v2/identities.createIdentity', { externalId: 'acme', meta: { plan: 'pro "gold" \\ é😀' } });
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    await call(sim, '/v2/keys.createKey', {
      apiId,
      externalId: 'acme',
      meta: { i, note: `key "${i}" \\ ✓` },
      credits: { remaining: 100, refill: { interval: 'monthly', amount: 100 } },
    });
    if (i % 50 === 0) size = JSON.stringify(await snapshot()).length;
  }
  return snapshot();
}

/** Sends `body` in small chunks with chunked transfer encoding (no content-length), as a client streaming a file would. */
function sendInChunks(body: string, chunkBytes = 1000): Promise<Answer> {
  const url = new URL(`${sim.url}/_sim/restore`);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers: headers() }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (piece: string) => (text += piece));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers as Record<string, string>, text, body: JSON.parse(text) as unknown }));
    });
    req.on('error', reject);
    const bytes = Buffer.from(body);
    let at = 0;
    const next = () => {
      while (at < bytes.length) {
        const piece = bytes.subarray(at, at + chunkBytes);
        at += chunkBytes;
        if (!req.write(piece)) {
          req.once('drain', next);
          return;
        }
      }
      req.end();
    };
    next();
  });
}

describe('/_sim/restore reads its body as it arrives', () => {
  test('restore of a large snapshot over HTTP is refused with 413', async () => {
    // The bound of a restore body is its own (restoreMaxBodyBytes), not the one of ordinary
    // requests nor the largest string the runtime can parse at once: below it a body restores,
    // streamed in pieces; above it the 413 names it and nothing changes.
    const before = await stateOf(LIMIT * 0.7);
    const body = JSON.stringify({ snapshot: before });
    expect(body.length).toBeGreaterThan(16 * 1024);
    expect(body.length).toBeLessThan(LIMIT);
    sim.reset();
    // Chunks of 1000 bytes cut records, strings, escapes and multi-byte characters anywhere.
    const restored = await sendInChunks(body, 1000);
    expect(restored.status).toBe(200);
    expect(await snapshot()).toEqual(before);

    const big = await stateOf(LIMIT * 1.1);
    await call(sim, '/_sim/reset', {});
    const untouched = await snapshot();
    const bigBody = JSON.stringify({ snapshot: big });
    for (const answer of [await sendInChunks(bigBody, 4096), await send(sim.url, '/_sim/restore', { headers: headers(), body: bigBody })]) {
      const error = expectV2Error(answer, 413, 'bad_request/request_body_too_large');
      expect(error.detail).toContain(`${LIMIT} bytes`);
    }
    expect(await snapshot()).toEqual(untouched);
  });

  test('cut short anywhere: 400 "not valid JSON", the state untouched', async () => {
    const good = await stateOf(8 * 1024);
    const body = JSON.stringify({ snapshot: good });
    for (let i = 1; i < 40; i++) {
      const end = Math.floor((body.length * i) / 40);
      const answer = await sendInChunks(body.slice(0, end), 333);
      const error = expectV2Error(answer, 400, 'application/invalid_input');
      expect(error.detail).toMatch(/^The request body is not valid JSON: /);
      expect(locationsOf(answer)).toEqual(['body']);
    }
    expect(await snapshot()).toEqual(good);
  });

  test('a wrong value in a record: the same 400 as the engine gives the whole snapshot, the state untouched', async () => {
    const good = await stateOf(8 * 1024);
    const cases: Array<(s: EngineSnapshot) => void> = [
      (s) => ((s.keys[3] as unknown as Record<string, unknown>).remaining = 'lots'),
      (s) => ((s.keys[1] as unknown as Record<string, unknown>).id = s.keys[0]?.id),
      (s) => ((s.identities[0] as unknown as Record<string, unknown>).meta = [1]),
      (s) => ((s as unknown as Record<string, unknown>).takenAtMs = -1),
      (s) => ((s.windows[0] as unknown as unknown[])[1] = { window: 'x' }),
    ];
    for (const damage of cases) {
      const bad = structuredClone(good);
      damage(bad);
      const expected = new Engine({ clock: new ManualClock(START_MS) }).restore(JSON.parse(JSON.stringify(bad)));
      expect(expected.ok).toBe(false);
      const answer = await sendInChunks(JSON.stringify({ snapshot: bad }), 777);
      const error = expectV2Error(answer, 400, 'application/invalid_input');
      if (!expected.ok) {
        expect(error.detail).toBe(expected.error.detail);
        expect(error.errors).toEqual(expected.error.errors);
      }
      expect(await snapshot()).toEqual(good);
    }
  });

  test("what the body's schema refuses is refused with the schema's own errors", async () => {
    const good = await stateOf(2 * 1024);
    const deep = structuredClone(good);
    let meta: Record<string, unknown> = { leaf: 1 };
    for (let level = 1; level < MAX_META_DEPTH + 2; level++) meta = { n: meta };
    (deep.keys[0] as unknown as Record<string, unknown>).meta = meta;
    const bodies: unknown[] = [
      [],
      'x',
      {},
      { snapshot: 3 },
      { snapshot: good, extra: [1, 2] },
      { other: { a: 1 }, snapshot: good, more: 1 },
      { snapshot: deep },
    ];
    for (const value of bodies) {
      const expected = validate(restoreRequest, value, 'body');
      expect(expected.ok).toBe(false);
      const answer = await sendInChunks(JSON.stringify(value), 500);
      const error = expectV2Error(answer, 400, 'application/invalid_input');
      if (!expected.ok) expect(error.errors).toEqual(expected.errors);
    }
    // An empty body is an empty request, as on every admin route.
    const empty = await send(sim.url, '/_sim/restore', { headers: headers(), body: '  ' });
    expect(locationsOf(empty)).toEqual(['body.snapshot']);
    expect(await snapshot()).toEqual(good);
  });

  test("a snapshot without the operator's root key changes nothing", async () => {
    const good = await stateOf(2 * 1024);
    const other = structuredClone(good);
    other.rootKeys = other.rootKeys.map((r) => ({ ...r, hash: `${r.hash}x` }));
    const answer = await sendInChunks(JSON.stringify({ snapshot: other }), 300);
    expectV2Error(answer, 400, 'application/invalid_input');
    expect(locationsOf(answer)).toEqual(['body.snapshot.rootKeys']);
    expect(await snapshot()).toEqual(good);
  });

  test('while the journal records, a streamed restore is journaled as its snapshot and replays', async () => {
    const target = await stateOf(4 * 1024);
    sim.reset();
    const start = await call<JournalStart>(sim, '/_sim/journal.start', {});
    const restored = await sendInChunks(JSON.stringify({ snapshot: target }), 1000);
    expect(restored.status).toBe(200);
    const taken = await call<JournalTake>(sim, '/_sim/journal.take', {});
    await call(sim, '/_sim/journal.stop', {});
    expect(taken.entries.map((e) => e.path)).toEqual(['/_sim/restore']);
    const entry = taken.entries[0];
    if (entry === undefined) throw new Error('one entry expected');
    expect((entry.input as { snapshot: EngineSnapshot }).snapshot).toEqual(target);
    const replayer = JournalReplayer.create(start);
    expect(replayer.apply(entry).status).toBe(200);
    const answer = await postJson(sim.url, '/_sim/snapshot', {}, sim.rootKey);
    expect((answer.body as { data: EngineSnapshot }).data).toEqual(target);
  });
});
