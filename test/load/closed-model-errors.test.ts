/**
 * Errors in the closed model (autocannon): every request that got no answer is counted once, as a
 * transport error of its own operation — a connection the server closed (which autocannon answers
 * with a silent reconnect, no `reqError`), one it reset (a `reqError` the slot also sees: counted
 * once), a timeout. Requests still in flight when the phase ends were cut off by us, not failed by
 * the server: they are neither answers nor errors, so the history has them as 'unknown' beyond the
 * errors, at most one per connection, and the figures count them apart (cutOff). Runs are 2 s of
 * real time.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import type { FaultsConfig } from '../../src/http/faults.js';
import { type HistoryEvent, readHistory } from '../../src/load/history/history.js';
import { runScenario } from '../../src/load/run/runner.js';
import { type LoadSettings, type Scenario, defineScenario } from '../../src/load/scenario/scenario.js';
import { type Target, liveTarget, startEmbeddedSimulator } from '../../src/load/target/target.js';
import type { OperationStats, RunReport } from '../../src/report/model.js';
import { OK_BODY, startStubServer } from '../helpers/load.js';

const CONNECTIONS = 4;
const CLOSED: LoadSettings = { model: 'closed', rate: 50, connections: CONNECTIONS, pipelining: 1, durationMs: 2_000, warmupMs: 0, timeoutMs: 5_000 };

const erase = <F>(scenario: Scenario<F>) => scenario as unknown as Scenario<unknown>;

/** One key, verified over and over. */
const verifyOneKey = defineScenario<{ key: string }>({
  name: 'inline-closed-verify',
  description: 'Verifications of one key',
  setup: async (ctx) => {
    const { apiId } = await ctx.api.data<{ apiId: string }>('apis.createApi', { name: `${ctx.tag}-closed-errors` });
    return ctx.api.data<{ key: string }>('keys.createKey', { apiId });
  },
  mix: [{ name: 'verify', weight: 1, build: (f) => ({ op: 'keys.verifyKey', body: { key: f.key } }) }],
});

/** Verifications against a stub server (which needs no setup). */
const verifyOnStub = defineScenario<undefined>({
  name: 'inline-closed-stub',
  description: 'Verifications against a stub',
  setup: async () => undefined,
  mix: [{ weight: 1, build: () => ({ op: 'keys.verifyKey', body: { key: 'k' } }) }],
});

interface Figures {
  report: RunReport;
  verify: OperationStats;
  /** Requests sent: every one of them is in the history. */
  sent: number;
  answered: number;
  errors: number;
  unknowns: number;
}

async function runClosed(scenario: Scenario<unknown>, target: Target, settings: LoadSettings = CLOSED): Promise<Figures> {
  const historyPath = join(mkdtempSync(join(tmpdir(), 'keysim-closed-errors-')), 'history.jsonl.gz');
  const report = await runScenario({ scenario, target, settings, seed: 13, thresholds: [], keep: false, keysimVersion: 'test', historyPath });
  const { events } = await readHistory(historyPath);
  const verifications = events.filter((e: HistoryEvent) => e.op === 'keys.verifyKey');
  const verify = report.operations.find((o) => o.operation === 'keys.verifyKey');
  if (verify === undefined) throw new Error(`no keys.verifyKey figures in ${JSON.stringify(report.operations.map((o) => o.operation))}`);
  const { timeout, reset, refused, other } = verify.transportErrors;
  return {
    report,
    verify,
    sent: verifications.length,
    answered: Object.values(verify.statuses).reduce((a, b) => a + b, 0),
    errors: timeout + reset + refused + other,
    unknowns: verifications.filter((e) => e.outcome === 'unknown').length,
  };
}

async function onSimulator(faults?: FaultsConfig, settings: LoadSettings = CLOSED): Promise<Figures> {
  const target = await startEmbeddedSimulator({ seed: 5, ...(faults === undefined ? {} : { faults }) });
  try {
    return await runClosed(erase(verifyOneKey), target, settings);
  } finally {
    await target.close();
  }
}

/**
 * What every closed run must satisfy: the failures are under the real operation (no catch-all row),
 * they are the report's errors, each request sent is an answer, an error, or cut off by the end of
 * the phase (at most one per connection, counted as cutOff), and the history's unknowns are the
 * errors plus the cut-off.
 */
function expectReconciled(f: Figures): void {
  const detail = JSON.stringify({
    sent: f.sent,
    requests: f.verify.requests,
    answered: f.answered,
    errors: f.errors,
    cutOff: f.verify.cutOff,
    unknowns: f.unknowns,
    transportErrors: f.verify.transportErrors,
  });
  expect(
    f.report.operations.map((o) => o.operation),
    detail,
  ).toEqual(['keys.verifyKey']);
  expect(f.report.totals.errors, detail).toBe(f.errors);
  expect(f.report.totals.requests, detail).toBe(f.verify.requests);
  expect(f.answered + f.errors, detail).toBe(f.verify.requests);
  const cutOff = f.sent - f.verify.requests;
  expect(cutOff, detail).toBeGreaterThanOrEqual(0);
  expect(cutOff, detail).toBeLessThanOrEqual(CONNECTIONS);
  expect(f.unknowns, detail).toBe(f.errors + cutOff);
  expect(f.verify.cutOff, detail).toBe(cutOff);
  expect(f.report.overall.cutOff, detail).toBe(cutOff);
  expect(f.report.totals.cutOff, detail).toBe(cutOff);
}

describe('closed-model errors', () => {
  test('closed model counts connections the server closed as errors (autocannon reconnects silently)', async () => {
    const f = await onSimulator({ dropRate: 0.2, operations: ['keys.verifyKey'] });
    expectReconciled(f);
    // How many requests 2 s hold depends on the machine's pace (43 beside two CPU-bound
    // processes, over 100 alone): the share is bounded for whatever count was sent.
    expect(f.sent).toBeGreaterThan(10);
    expect(f.report.totals.errors).toBeGreaterThan(0);
    expect(f.verify.transportErrors.reset).toBeGreaterThan(0);
    // About a fifth of the requests is dropped, each one a reset: within four standard deviations
    // of a binomial count with p = 0.2 (a wrong count, e.g. none or every one, falls outside).
    expect(f.verify.transportErrors).toEqual({ timeout: 0, reset: f.errors, refused: 0, other: 0 });
    const spread = 4 * Math.sqrt(f.sent * 0.2 * 0.8);
    expect(f.errors).toBeGreaterThan(f.sent * 0.2 - spread);
    expect(f.errors).toBeLessThan(f.sent * 0.2 + spread);
  });

  test('a clean closed run reports no errors: only the requests cut off by the end of the phase are unknown', async () => {
    const f = await onSimulator();
    expectReconciled(f);
    // How many 2 s hold is the machine's pace (hundreds alone, far fewer on a busy machine): a run
    // that sent a few is enough to show no error and no unknown but the cut-off.
    expect(f.sent).toBeGreaterThan(10);
    expect(f.report.totals.errors).toBe(0);
    expect(f.verify.transportErrors).toEqual({ timeout: 0, reset: 0, refused: 0, other: 0 });
    expect(f.verify.statuses).toEqual({ '200': f.verify.requests });
  });

  test('closed-model phase stops at its planned duration (autocannon stops only on its 1 s tick)', async () => {
    // A service-clock sweep is planned over the phase's duration: a phase that ran on to
    // autocannon's next 1 s sample tick spent the rest of it with the clock already at its end.
    const f = await onSimulator(undefined, { ...CLOSED, durationMs: 400 });
    expectReconciled(f);
    expect(f.sent).toBeGreaterThan(10);
    const load = f.report.phases.find((p) => p.name === 'load');
    // A behaviour, not a timing benchmark: the bound is generous, but well under the 1 s tick.
    expect(load?.durationMs).toBeGreaterThanOrEqual(390);
    expect(load?.durationMs).toBeLessThan(800);
    expect(f.report.measuredMs).toBeLessThan(800);
  });

  test('connections reset by the server: autocannon reports them (reqError) and the slot sees them, each is counted once', async () => {
    let resets = 0;
    const server = await startStubServer((req, res) => {
      if (req.url === '/v2/keys.verifyKey' && resets < 1_000 && Math.random() < 0.2) {
        resets++;
        req.socket.resetAndDestroy();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(OK_BODY);
    });
    try {
      const f = await runClosed(erase(verifyOnStub), liveTarget(server.url, 'root_x_12345678'));
      expectReconciled(f);
      expect(resets).toBeGreaterThan(10);
      expect(f.verify.transportErrors).toEqual({ timeout: 0, reset: f.errors, refused: 0, other: 0 });
      // A reset in the last instant may find its request already cut off by the end of the phase.
      expect(f.errors).toBeLessThanOrEqual(resets);
      expect(f.errors).toBeGreaterThanOrEqual(resets - CONNECTIONS);
    } finally {
      await server.kill();
    }
  });

  test('requests that time out are counted as timeouts of their operation, apart from the latency of the answered ones', async () => {
    // The first request of each connection hangs and times out after 1 s; everything after is
    // answered (the phase ends at 2 s: a second round of hangs would race it).
    let hung = 0;
    const server = await startStubServer((req, res) => {
      if (req.url === '/v2/keys.verifyKey' && hung < CONNECTIONS) {
        hung++;
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(OK_BODY);
    });
    try {
      const f = await runClosed(erase(verifyOnStub), liveTarget(server.url, 'root_x_12345678'), { ...CLOSED, timeoutMs: 1_000 });
      expectReconciled(f);
      expect(hung).toBe(CONNECTIONS);
      expect(f.verify.transportErrors).toEqual({ timeout: CONNECTIONS, reset: 0, refused: 0, other: 0 });
      // Answers after the hangs (hundreds alone; how many is the machine's pace).
      expect(f.answered).toBeGreaterThan(10);
      // As in the open model, a request without an answer has no latency: the figures are the answered ones'.
      expect(f.verify.latency.uncorrected.count).toBe(f.answered);
      expect(f.verify.latency.corrected.count).toBe(f.answered);
    } finally {
      await server.kill();
    }
  });
});
