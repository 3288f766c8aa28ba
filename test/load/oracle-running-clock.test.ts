/**
 * The oracle on a running clock: a request's journaled instant must be the one its decision was
 * taken at. Real `createSimulator` servers on 127.0.0.1 port 0 with a 'system' clock whose real
 * time moves on every read (so no test depends on timing luck: any second reading of the clock
 * for one request is a different instant, often across a window edge), in one process and with
 * HTTP workers; then the same on the real `Date.now`, many requests over many window edges.
 */
import { afterEach, describe, expect, test } from 'vitest';
import { createSimulator } from '../../src/http/index.js';
import { historyOutcome } from '../../src/load/history/history-events.js';
import type { HistoryEvent } from '../../src/load/history/history.js';
import { Oracle } from '../../src/load/oracle/oracle.js';
import { type HttpJsonClient, httpJsonClient } from '../../src/load/target/service-api.js';

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

const START_MS = Date.parse('2027-06-01T00:00:00Z');

/** Real time that moves `stepMs` on every read: each clock reading of the server is a new instant. */
function tickingRealTime(stepMs: number): () => number {
  let t = START_MS;
  return () => (t += stepMs);
}

/**
 * Sends `n` ratelimit.limit requests (one at a time, each with its seq header), costing enough that
 * the previous window's weight changes the remaining count from one millisecond to the next, and
 * answers the events as a history would record them.
 */
async function limitRequests(client: HttpJsonClient, n: number, durationMs: number): Promise<HistoryEvent[]> {
  expect((await client.post('/_sim/namespaces.create', { name: 'edges' }, 'root')).status).toBe(200);
  const events: HistoryEvent[] = [];
  for (let seq = 0; seq < n; seq++) {
    const request = { namespace: 'edges', identifier: `user-${seq % 3}`, limit: 1_000, duration: durationMs, cost: 37 };
    const answer = await client.post('/v2/ratelimit.limit', request, 'root', { 'x-keysim-seq': String(seq) });
    expect(answer.status).toBe(200);
    events.push({
      seq,
      op: 'ratelimit.limit',
      invokeMs: seq,
      completeMs: seq + 1,
      request: {},
      outcome: historyOutcome('ratelimit.limit', answer.status, answer.body),
    } as HistoryEvent);
  }
  return events;
}

async function oracleVerdict(options: { workers?: number; realTimeMs?: () => number; requests: number; durationMs: number }) {
  const sim = await createSimulator({
    seed: 5,
    clock: 'system',
    startMs: START_MS,
    ...(options.realTimeMs === undefined ? {} : { realTimeMs: options.realTimeMs }),
    ...(options.workers === undefined ? {} : { workers: options.workers, log: () => undefined }),
  });
  closers.push(() => sim.close());
  const client = httpJsonClient({ url: sim.url, rootKey: sim.rootKey });
  closers.push(() => client.close());
  const oracle = await Oracle.start(client);
  const events = await limitRequests(client, options.requests, options.durationMs);
  await oracle.drain();
  return await oracle.compare(events);
}

describe('the oracle on a running clock', () => {
  test('a journaled instant read apart from the one the engine decided with is a false oracle difference at a window edge', async () => {
    // 7 ms per read over a 1 s window: a second reading per request moves the decision by 7 ms or
    // more, which changes the previous window's weight (and, near an edge, the window itself).
    const result = await oracleVerdict({ realTimeMs: tickingRealTime(7), requests: 300, durationMs: 1_000 });
    expect(result.differences, JSON.stringify(result.examples.slice(0, 3))).toBe(0);
    expect(result).toMatchObject({ verdict: 'agrees', compared: 300 });
  });

  test('the engine owner of serve --workers journals the instant it decided with, too', async () => {
    const result = await oracleVerdict({ workers: 2, realTimeMs: tickingRealTime(7), requests: 200, durationMs: 1_000 });
    expect(result.differences, JSON.stringify(result.examples.slice(0, 3))).toBe(0);
    expect(result).toMatchObject({ verdict: 'agrees', compared: 200 });
  });

  test('on the real clock, many requests over many window edges: no difference', async () => {
    // 1 s windows, the shortest: every request whose two readings fell in different milliseconds
    // would differ. How many edges are crossed depends on the machine; none may differ.
    const result = await oracleVerdict({ requests: 1_500, durationMs: 1_000 });
    expect(result.differences, JSON.stringify(result.examples.slice(0, 3))).toBe(0);
    expect(result).toMatchObject({ verdict: 'agrees', compared: 1_500 });
  });
});
