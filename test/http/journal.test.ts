/**
 * The simulator's journal (src/http/journal.ts) and its replay through a fresh engine
 * (src/http/replay.ts), over real sockets: the realised order with service times and seq
 * headers, what is never journaled, the capacity bound, reset, bad input — and the replay giving
 * the very answers the clients received, unless a wrong behaviour was injected.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { Agent } from 'undici';
import { JournalReplayer, type JournalEntry, type JournalStart, type JournalTake, type Simulator, createSimulator } from '../../src/http/index.js';
import { type Answer, call, expectV2Error, send } from '../helpers/http.js';

const START_MS = Date.parse('2027-01-31T22:00:00.000Z');
let sim: Simulator;

beforeAll(async () => {
  sim = await createSimulator({ startMs: START_MS, seed: 21, validateResponses: true });
});
afterAll(() => sim.close());
beforeEach(() => sim.reset());

function post(path: string, body: unknown, seq?: number, dispatcher?: Agent): Promise<Answer> {
  const headers: Record<string, string> = { 'content-type': 'application/json', authorization: `Bearer ${sim.rootKey}` };
  if (seq !== undefined) headers['x-keysim-seq'] = String(seq);
  return send(sim.url, path, { headers, body: JSON.stringify(body), ...(dispatcher === undefined ? {} : { dispatcher }) });
}

async function takeAll(): Promise<JournalTake> {
  return call<JournalTake>(sim, '/_sim/journal.take', {});
}

/** An answer without its request id (the replay's differs by construction). */
function withoutRequestId(body: unknown): unknown {
  return JSON.parse(JSON.stringify(body, (k, v: unknown) => (k === 'requestId' ? undefined : v)));
}

describe('the journal', () => {
  test('is off until started: nothing is recorded', async () => {
    await post('/v2/apis.createApi', { name: 'off' });
    const taken = await takeAll();
    expect(taken).toMatchObject({ entries: [], active: false, overflowed: false });
  });

  test('records executed calls in order with service time, route, input and seq; reads and admin-only calls are left out', async () => {
    const started = await call<JournalStart>(sim, '/_sim/journal.start', {});
    expect(started.startedAtMs).toBe(START_MS);
    expect(started.snapshot).toMatchObject({ format: 'keysim-engine-snapshot', seed: 21 });
    await post('/v2/apis.createApi', { name: 'journal' }, 7);
    await call(sim, '/_sim/clock.get', {});
    await call(sim, '/_sim/faults.get', {});
    await call(sim, '/_sim/clock.advance', { byMs: 60_000 });
    await post('/v2/keys.verifyKey', { key: 'sk_missing' }, 8);
    // Refused before execution (schema): not journaled.
    await post('/v2/keys.verifyKey', { key: 42 }, 9);
    const taken = await takeAll();
    expect(taken.active).toBe(true);
    expect(taken.entries.map((e) => [e.index, e.path, e.seq, e.atMs])).toEqual([
      [0, '/v2/apis.createApi', 7, START_MS],
      [1, '/_sim/clock.advance', undefined, START_MS],
      [2, '/v2/keys.verifyKey', 8, START_MS + 60_000],
    ]);
    expect(taken.entries[0]?.input).toEqual({ name: 'journal' });
    // Taken entries are forgotten.
    expect((await takeAll()).entries).toEqual([]);
  });

  test('stops recording at its capacity and says it overflowed', async () => {
    await call(sim, '/_sim/journal.start', { capacity: 3 });
    for (let i = 0; i < 5; i++) await post('/v2/apis.createApi', { name: `api-${i}` }, i);
    const taken = await takeAll();
    expect(taken.entries.map((e) => e.seq)).toEqual([0, 1, 2]);
    expect(taken).toMatchObject({ overflowed: true, active: false });
  });

  test('ends with a reset, and says why', async () => {
    await call(sim, '/_sim/journal.start', {});
    await post('/v2/apis.createApi', { name: 'before reset' });
    await call(sim, '/_sim/reset', {});
    const taken = await takeAll();
    expect(taken).toMatchObject({ entries: [], active: false, endedBecause: 'the simulator was reset' });
  });

  test('bad input is refused with the violations and changes nothing', async () => {
    await call(sim, '/_sim/journal.start', {});
    expectV2Error(await post('/_sim/journal.start', { capacity: 0 }), 400);
    expectV2Error(await post('/_sim/journal.take', { max: 'all' }), 400);
    expectV2Error(await send(sim.url, '/_sim/journal.take', { headers: { 'content-type': 'application/json' }, body: '{}' }), 400, 'authentication/missing');
    await post('/v2/apis.createApi', { name: 'still recording' }, 1);
    expect((await takeAll()).entries.map((e) => e.seq)).toEqual([1]);
  });
});

/** 300 concurrent verifications of one key with 100 credits, on 20 connections, plus rate limits and a refill boundary. */
async function concurrentLoad(): Promise<Map<number, Answer>> {
  const answers = new Map<number, Answer>();
  let seq = 0;
  const record = async (path: string, body: unknown, dispatcher?: Agent) => {
    const mine = seq++;
    answers.set(mine, await post(path, body, mine, dispatcher));
  };
  const { apiId } = await call<{ apiId: string }>(sim, '/v2/apis.createApi', { name: 'replay' });
  const created = await post('/v2/keys.createKey', { apiId, credits: { remaining: 100, refill: { interval: 'monthly', amount: 50, refillDay: 1 } } }, seq++);
  answers.set(seq - 1, created);
  const { key } = (created.body as { data: { key: string } }).data;
  await call(sim, '/_sim/namespaces.create', { name: 'replay-ns' });
  const agent = new Agent({ connections: 20, pipelining: 4 });
  try {
    const batch = async (n: number) =>
      Promise.all(
        Array.from({ length: n }, (_, i) =>
          i % 3 === 0
            ? record('/v2/ratelimit.limit', { namespace: 'replay-ns', identifier: `user-${i % 2}`, limit: 7, duration: 60_000 }, agent)
            : record('/v2/keys.verifyKey', { key, credits: { cost: 1 + (i % 2) } }, agent),
        ),
      );
    await batch(150);
    // Across the month end: the refill replaces the balance with 50.
    await call(sim, '/_sim/clock.set', { to: '2027-02-01T00:00:00.000Z' });
    await batch(150);
  } finally {
    await agent.close();
  }
  return answers;
}

function replayAll(start: JournalStart, entries: JournalEntry[]): Map<number, { status: number; body: unknown }> {
  const replayer = JournalReplayer.create(start);
  const bySeq = new Map<number, { status: number; body: unknown }>();
  for (const entry of entries) {
    const answer = replayer.apply(entry);
    if (entry.seq !== undefined) bySeq.set(entry.seq, answer);
  }
  return bySeq;
}

describe('replaying the journal through a fresh engine', () => {
  test('gives, for every concurrent request, the answer its client received', async () => {
    // Some state before the journal starts: the replay begins from the snapshot.
    await call(sim, '/v2/apis.createApi', { name: 'before the journal' });
    const start = await call<JournalStart>(sim, '/_sim/journal.start', {});
    const answers = await concurrentLoad();
    const { entries } = await takeAll();
    const replayed = replayAll(start, entries);
    expect(replayed.size).toBe(answers.size);
    let valid = 0;
    for (const [seq, received] of answers) {
      const expected = replayed.get(seq);
      expect({ seq, status: expected?.status, body: withoutRequestId(expected?.body) }).toEqual({
        seq,
        status: received.status,
        body: withoutRequestId(received.body),
      });
      if ((received.body as { data?: { code?: string } }).data?.code === 'VALID') valid++;
    }
    // The load really spent the credits and met the refill (else the comparison proves little).
    expect(valid).toBeGreaterThan(50);
  });

  test('differs from what the clients received when over-admission is injected', async () => {
    const start = await call<JournalStart>(sim, '/_sim/journal.start', {});
    await call(sim, '/_sim/faults.set', { overAdmitRate: 1, operations: ['keys.verifyKey'] });
    const answers = await concurrentLoad();
    const { entries } = await takeAll();
    const replayed = replayAll(start, entries);
    const differing = [...answers].filter(
      ([seq, received]) => JSON.stringify(withoutRequestId(replayed.get(seq)?.body)) !== JSON.stringify(withoutRequestId(received.body)),
    );
    expect(differing.length).toBeGreaterThan(0);
    const [, first] = differing[0] ?? [];
    expect((first?.body as { data?: { code?: string } }).data?.code).toBe('VALID');
  });

  test('refuses a start without a usable snapshot', () => {
    expect(() => JournalReplayer.create({ snapshot: { nope: true }, startedAtMs: START_MS, operatorRootKeyHash: 'h' })).toThrow(/no engine snapshot/);
    expect(() => JournalReplayer.create({ snapshot: { seed: 1, compat: 'interface' }, startedAtMs: START_MS, operatorRootKeyHash: 'h' })).toThrow(
      /cannot be restored/,
    );
  });
});
