/**
 * Coordinated omission (docs/architecture.md#conventions): a server that stalls once for 1 s during an
 * open-model run must show the stall in the corrected percentiles (measured from each request's
 * intended send time), while the uncorrected ones (from the moment a connection took the
 * request) hide it. This asserts behaviour — where the stall shows — not performance.
 */
import type { ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { OpenModelExecutor } from '../../src/load/executors/open-model.js';
import type { PlannedRequest } from '../../src/load/executors/open-model-requests.js';
import { planPhases } from '../../src/load/plan/plan.js';
import { Recorder } from '../../src/load/metrics/recorder.js';
import { OK_BODY, type StubServer, startStubServer } from '../helpers/load.js';

const RATE = 200;
const DURATION_MS = 6_000;
const CONNECTIONS = 5;
const STALL_AT_MS = 2_000;
const STALL_MS = 1_000;

/*
 * The arithmetic. 200 requests/s for 6 s plans 1200 sends, 5 ms apart, over 5 connections with
 * one request in flight each. From t ≈ 2 s the server holds every answer until t ≈ 3 s:
 *  - on the wire, at most 5 requests (one per connection) are stuck; the ~200 sends planned
 *    during the stall wait in the executor's own queue and go out when the stall ends;
 *  - corrected latency of the send planned at 2 s + x is about 1 s − x: ~200 samples spread over
 *    0..1000 ms, ~100 of them ≥ 500 ms — 8 % of 1200, well over 1 %, so the corrected p99 (the
 *    1188th of 1200 samples) is a stalled one, ≈ 900 ms;
 *  - uncorrected latency is ≥ 500 ms only for the ≤ 5 requests stuck on the wire — 0.4 % of
 *    1200, under 1 % — so the uncorrected p99 is an ordinary answer of a few ms.
 */
describe('an open-model run against a server that stalls once for 1 s', () => {
  let server: StubServer;
  let runStartMs = Number.POSITIVE_INFINITY;
  let stallUntilMs: number | undefined;
  const held: ServerResponse[] = [];

  const answer = (res: ServerResponse) => res.writeHead(200, { 'content-type': 'application/json' }).end(OK_BODY);

  beforeAll(async () => {
    server = await startStubServer((_req, res) => {
      const now = performance.now();
      if (stallUntilMs === undefined && now - runStartMs >= STALL_AT_MS) {
        stallUntilMs = now + STALL_MS;
        setTimeout(() => {
          for (const r of held.splice(0)) answer(r);
        }, STALL_MS);
      }
      if (stallUntilMs !== undefined && now < stallUntilMs) held.push(res);
      else answer(res);
    });
  });

  afterAll(async () => {
    await server.kill();
  });

  test('corrected p99 shows the stall (≥ 500 ms); uncorrected p99 does not (< 500 ms)', async () => {
    const [phase] = planPhases([{ name: 'load', durationMs: DURATION_MS, rate: RATE, warmup: false }]);
    if (phase === undefined) throw new Error('no phase');
    expect(phase.count).toBe(1200);

    const executor = new OpenModelExecutor({ url: server.url, rootKey: 'root_x_12345678', connections: CONNECTIONS, pipelining: 1, timeoutMs: 10_000 });
    const recorder = new Recorder();
    const request: PlannedRequest = { operation: 'keys.verifyKey', label: 'verify', spec: { op: 'keys.verifyKey', body: { key: 'k' } }, check: undefined };
    let heldAtMost = 0;
    const watch = setInterval(() => (heldAtMost = Math.max(heldAtMost, held.length)), 20);
    let figures: ReturnType<Recorder['finish']>;
    let outcome: Awaited<ReturnType<OpenModelExecutor['runPhase']>>;
    try {
      const phaseStartMs = performance.now();
      runStartMs = phaseStartMs;
      recorder.startMeasuring(phaseStartMs);
      outcome = await executor.runPhase(phase, phaseStartMs, () => request, recorder);
      figures = recorder.finish(performance.now() - phaseStartMs);
    } finally {
      clearInterval(watch);
      await executor.close();
    }

    // The stall happened, and only the requests on the wire were held by the server.
    expect(stallUntilMs).toBeDefined();
    expect(heldAtMost).toBeGreaterThan(0);
    expect(heldAtMost).toBeLessThanOrEqual(CONNECTIONS);
    // Every planned send was made and answered.
    expect(outcome).toMatchObject({ sent: 1200, dropped: 0 });
    expect(figures.overall.requests).toBe(1200);
    expect(figures.overall.statuses).toEqual({ '200': 1200 });

    const { corrected, uncorrected } = figures.overall.latency;
    expect(corrected.count).toBe(1200);
    expect(uncorrected.count).toBe(1200);
    expect(corrected.p99).toBeGreaterThanOrEqual(500);
    expect(uncorrected.p99).toBeLessThan(500);
    // Both see the longest wait (the requests stuck on the wire), only the corrected one sees how many waited.
    expect(corrected.max).toBeGreaterThanOrEqual(800);
    expect(uncorrected.max).toBeGreaterThanOrEqual(500);
    expect(corrected.p90).toBeGreaterThan(uncorrected.p90);
    // The timeline's worst second is the one the stall ended in.
    expect(Math.max(...figures.timeline.map((point) => point.p99Ms))).toBeGreaterThanOrEqual(500);
  });
});
