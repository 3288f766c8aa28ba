/**
 * Requests still in flight when a closed-model phase ends are cut off: the server may have executed
 * them, but their answers were abandoned. They are neither answers nor errors, yet they must show
 * in the figures (OperationStats.cutOff, totals.cutOff), or no end-of-run check can account for
 * what they did — mixed's "credits accounted for" used to miss the credits they consumed.
 * The run is 1 s of real time against the embedded simulator.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { SCENARIOS } from '../../scenarios/index.js';
import { readHistory } from '../../src/load/history/history.js';
import { runScenario } from '../../src/load/run/runner.js';
import type { LoadSettings, Scenario } from '../../src/load/scenario/scenario.js';
import { startEmbeddedSimulator } from '../../src/load/target/target.js';
import { TRANSPORT_ERROR_KINDS } from '../../src/report/model.js';

const CONNECTIONS = 4;
const CLOSED: LoadSettings = { model: 'closed', rate: 300, connections: CONNECTIONS, pipelining: 1, durationMs: 1_000, warmupMs: 0, timeoutMs: 5_000 };

test('closed model: requests cut off at the end of a phase are counted (mixed accounts for every credit)', async () => {
  const scenario = SCENARIOS['mixed'] as Scenario<unknown>;
  const target = await startEmbeddedSimulator({ seed: 3 });
  const historyPath = join(mkdtempSync(join(tmpdir(), 'keysim-cut-off-')), 'history.jsonl.gz');
  try {
    const report = await runScenario({
      scenario,
      target,
      settings: CLOSED,
      seed: 17,
      thresholds: [],
      keep: false,
      keysimVersion: 'test',
      historyPath,
      oracle: false,
    });
    const { events } = await readHistory(historyPath);
    const credits = report.checks.find((c) => c.name === 'credits accounted for');
    expect(credits?.passed, credits?.detail).toBe(true);
    // A clean run: cut-off requests are not errors.
    expect(report.totals.errors).toBe(0);

    // Per operation of the load: every request sent is an answer, an error, or cut off.
    let cutOff = 0;
    for (const op of report.operations) {
      // mixed's setup and finish call other operations than its load, so these events are the load's.
      const sent = events.filter((e) => e.op === op.operation).length;
      const unknown = events.filter((e) => e.op === op.operation && e.outcome === 'unknown').length;
      const answered = Object.values(op.statuses).reduce((a, b) => a + b, 0);
      const errors = TRANSPORT_ERROR_KINDS.reduce((n, k) => n + op.transportErrors[k], 0);
      const detail = JSON.stringify({ op: op.operation, sent, unknown, answered, errors, requests: op.requests, cutOff: op.cutOff });
      expect(op.cutOff, detail).toBeGreaterThanOrEqual(0);
      expect(answered + errors, detail).toBe(op.requests);
      expect(answered + errors + (op.cutOff ?? 0), detail).toBe(sent);
      expect(unknown, detail).toBe(errors + (op.cutOff ?? 0));
      cutOff += op.cutOff ?? 0;
    }
    // At most one request in flight per connection when the (only) phase ends.
    expect(cutOff).toBeLessThanOrEqual(CONNECTIONS);
    expect(report.totals.cutOff).toBe(cutOff);
    expect(report.overall.cutOff).toBe(cutOff);
  } finally {
    await target.close();
  }
}, 60_000);

test('closed model: plan-change sizes its new allocation for an unplanned pace (the pro keys never run dry)', async () => {
  // Regression: the allocation was sized from --rate, which the closed model ignores; at its own
  // pace the pro keys ran dry and the run failed its per-response checks.
  const scenario = SCENARIOS['plan-change'] as Scenario<unknown>;
  const target = await startEmbeddedSimulator({ seed: 4 });
  try {
    const report = await runScenario({
      scenario,
      target,
      settings: { ...CLOSED, durationMs: 3_000 },
      seed: 17,
      thresholds: [],
      keep: false,
      keysimVersion: 'test',
    });
    expect(report.checks.filter((c) => !c.passed)).toEqual([]);
    expect(report.totals.requests).toBeGreaterThan(300);
  } finally {
    await target.close();
  }
}, 60_000);
