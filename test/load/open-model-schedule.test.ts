/**
 * The open model's pacing: however it batches its wake-ups and writes, no request leaves before
 * its intended send time, every planned request is sent once and answered, and each request's
 * corrected latency is measured from its intended time. Asserts order, never pace: a busy machine
 * makes sends late (which is allowed and counted), never early.
 */
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { OpenModelExecutor } from '../../src/load/executors/open-model.js';
import type { PlannedRequest } from '../../src/load/executors/open-model-requests.js';
import { phaseOffsetMs, planPhases } from '../../src/load/plan/plan.js';
import { Recorder, type Sample } from '../../src/load/metrics/recorder.js';
import { OK_BODY, type StubServer, startStubServer } from '../helpers/load.js';

/** Keeps every sample (the real Recorder keeps histograms only). */
class SampleKeeper extends Recorder {
  readonly samples: Sample[] = [];
  override record(sample: Sample): void {
    this.samples.push(sample);
    super.record(sample);
  }
}

let server: StubServer;
/** Answers 3 ms late: slower than the gap between sends, so sends also leave on answers' wake-ups. */
let slowServer: StubServer;
beforeAll(async () => {
  server = await startStubServer();
  slowServer = await startStubServer((_req, res) => {
    setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end(OK_BODY), 3);
  });
});
afterAll(async () => {
  await server.kill();
  await slowServer.kill();
});

const request: PlannedRequest = { operation: 'keys.verifyKey', label: 'verify', spec: { op: 'keys.verifyKey', body: { key: 'k' } }, check: undefined };

const cases = [
  { name: 'pipelining 1', pipelining: 1, rate: 1_000, slow: false },
  { name: 'pipelining 4', pipelining: 4, rate: 1_000, slow: false },
  // Answers later than the next send's instant: a send due when an answer is read leaves on that
  // wake-up rather than the timer's, and must not leave early either.
  { name: 'answers slower than the gap between sends, pipelining 1', pipelining: 1, rate: 2_000, slow: true },
];

for (const { name, pipelining, rate, slow } of cases) {
  test(`${name}: no request is sent before its intended time, and each is sent once`, async () => {
    // 0.8 s at 1,000/s (or 2,000/s): requests 1 ms (0.5 ms) apart, finer than the timer's resolution.
    const [phase] = planPhases([{ name: 'load', durationMs: 800, rate, warmup: false }]);
    if (phase === undefined) throw new Error('no phase');
    const url = slow ? slowServer.url : server.url;
    const executor = new OpenModelExecutor({ url, rootKey: 'root_x_12345678', connections: 16, pipelining, timeoutMs: 30_000 });
    const recorder = new SampleKeeper();
    let outcome: Awaited<ReturnType<OpenModelExecutor['runPhase']>>;
    const phaseStartMs = performance.now() + 20;
    try {
      recorder.startMeasuring(phaseStartMs);
      outcome = await executor.runPhase(phase, phaseStartMs, () => request, recorder);
    } finally {
      await executor.close();
    }
    expect(outcome).toMatchObject({ sent: phase.count, dropped: 0 });
    const samples = recorder.samples;
    expect(samples).toHaveLength(phase.count);
    expect(samples.every((s) => s.status === 200)).toBe(true);
    const early = samples.filter((s) => s.sentMs < s.intendedMs);
    expect(early.map((s) => `${s.intendedMs} sent at ${s.sentMs}`)).toEqual([]);
    // The intended times are the plan's, one per planned request.
    const intended = samples.map((s) => s.intendedMs).sort((a, b) => a - b);
    expect(intended).toEqual(Array.from({ length: phase.count }, (_, i) => phaseStartMs + phaseOffsetMs(phase, i)));
    // Measured from the intended time: the corrected latency holds any wait before the send.
    const figures = recorder.finish(1_000);
    expect(figures.overall.latency.corrected.max).toBeGreaterThanOrEqual(figures.overall.latency.uncorrected.max);
  });
}
