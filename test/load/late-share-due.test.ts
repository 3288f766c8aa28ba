/**
 * The late share counts the sends that came due, not those a stop (Ctrl-C) left unsent: a run
 * stopped early was judged over every planned send, its late ones diluted by sends that were
 * never due. Asserts counts, never pace: the phase is planned far longer than the run lasts.
 */
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { OpenModelExecutor } from '../../src/load/executors/open-model.js';
import type { PlannedRequest } from '../../src/load/executors/open-model-requests.js';
import { planPhases } from '../../src/load/plan/plan.js';
import { Recorder } from '../../src/load/metrics/recorder.js';
import { type StubServer, startStubServer } from '../helpers/load.js';

let server: StubServer;
beforeAll(async () => {
  server = await startStubServer();
});
afterAll(async () => {
  await server.kill();
});

const request: PlannedRequest = { operation: 'keys.verifyKey', label: 'verify', spec: { op: 'keys.verifyKey', body: { key: 'k' } }, check: undefined };

test('the late share counts the sends that were due, not those never sent after a stop', async () => {
  // 10 minutes at 10/s (6,000 sends), stopped after the first few: nearly all are never due.
  const [phase] = planPhases([{ name: 'load', durationMs: 600_000, rate: 10, warmup: false }]);
  if (phase === undefined) throw new Error('no phase');
  const executor = new OpenModelExecutor({ url: server.url, rootKey: 'root_x_12345678', connections: 2, pipelining: 1, timeoutMs: 10_000 });
  const recorder = new Recorder();
  const start = performance.now();
  recorder.startMeasuring(start);
  const stop = setTimeout(() => executor.stop(), 250);
  let outcome: Awaited<ReturnType<OpenModelExecutor['runPhase']>>;
  try {
    outcome = await executor.runPhase(phase, start, () => request, recorder);
  } finally {
    clearTimeout(stop);
    await executor.close();
  }
  // Every planned send is sent or dropped; only those that came due count towards the late share.
  expect(outcome.sent + outcome.dropped).toBe(phase.count);
  expect(outcome.due).toBeGreaterThanOrEqual(outcome.sent);
  expect(outcome.due).toBeGreaterThanOrEqual(outcome.late);
  expect(outcome.due).toBeLessThan(phase.count);
  expect(outcome.dropped - (outcome.due - outcome.sent)).toBe(phase.count - outcome.due);
});
