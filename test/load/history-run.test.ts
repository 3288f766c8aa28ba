/**
 * Histories end to end: a run records every operation (fixtures included), the invariants are
 * checked over the saved history, a clean simulator passes, and an injected wrong behaviour is
 * caught with the invariant exit code.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { SCENARIOS } from '../../scenarios/index.js';
import { readHistory } from '../../src/load/history.js';
import { INVARIANT_CHECK_PREFIX, runScenario } from '../../src/load/runner.js';
import type { LoadSettings, Scenario } from '../../src/load/scenario.js';
import { startEmbeddedSimulator } from '../../src/load/target.js';
import type { FaultsConfig } from '../../src/http/faults.js';

const SETTINGS: LoadSettings = { rate: 200, connections: 8, pipelining: 1, durationMs: 2_000, warmupMs: 0, timeoutMs: 5_000, model: 'open' };

async function runWithHistory(name: string, faults?: FaultsConfig) {
  const scenario = SCENARIOS[name] as Scenario<unknown>;
  const target = await startEmbeddedSimulator({ seed: 5, ...(faults === undefined ? {} : { faults }) });
  const historyPath = join(mkdtempSync(join(tmpdir(), 'keysim-history-')), 'history.jsonl.gz');
  try {
    const report = await runScenario({ scenario, target, settings: { ...SETTINGS, ...scenario.defaults, durationMs: 2_000, warmupMs: 0 }, seed: 5, thresholds: [], keep: false, keysimVersion: 'test', historyPath });
    return { report, historyPath, invariants: report.checks.filter((c) => c.name.startsWith(INVARIANT_CHECK_PREFIX)) };
  } finally {
    await target.close();
  }
}

describe('runs with history checking', () => {
  test('credits-drain on a correct simulator: every operation recorded, every invariant holds', async () => {
    const { report, historyPath, invariants } = await runWithHistory('credits-drain');
    expect(invariants).toHaveLength(6);
    expect(invariants.filter((c) => !c.passed)).toEqual([]);
    const { events } = await readHistory(historyPath);
    const verifications = events.filter((e) => e.op === 'keys.verifyKey');
    expect(verifications.length).toBe(report.operations.find((o) => o.operation === 'keys.verifyKey')?.requests);
    expect(events.some((e) => e.op === 'keys.createKey')).toBe(true);
    // Keys by id only: no plaintext key in the history.
    expect(JSON.stringify(events)).not.toMatch(/"key":"/);
    expect(events.every((e) => e.serviceInvokeMs !== undefined)).toBe(true);
  });

  test('ratelimit-window-edge on a correct simulator: the rate-limit invariants hold across clock moves', async () => {
    const { invariants } = await runWithHistory('ratelimit-window-edge');
    expect(invariants.filter((c) => !c.passed)).toEqual([]);
    const overAdmission = invariants.find((c) => c.name.includes('over-admission'));
    expect(overAdmission?.detail).not.toMatch(/^0 checks/);
  });

  test('credits-drain with over-admission injected: the over-spend invariant is violated, with a witness', async () => {
    const { invariants } = await runWithHistory('credits-drain', { overAdmitRate: 0.5 });
    const overSpend = invariants.find((c) => c.name.includes('over-spend'));
    expect(overSpend?.passed).toBe(false);
    expect(overSpend?.detail).toMatch(/witness: #\d+ keys\.createKey/);
  });

  test('credits-drain with lost decrements injected: an invariant is violated', async () => {
    const { invariants } = await runWithHistory('credits-drain', { lostDecrementRate: 0.5 });
    expect(invariants.some((c) => !c.passed)).toBe(true);
  });

  test('keysim run --history --fault exits with the invariant code (100) and leaves the history beside the report', () => {
    const out = mkdtempSync(join(tmpdir(), 'keysim-history-cli-'));
    const result = spawnSync(
      process.execPath,
      ['--import', 'tsx', 'src/cli/main.ts', 'run', 'credits-drain', '--history', '--fault', 'overAdmitRate=0.5', '--duration', '2s', '--warmup', '0', '--quiet', '--out', out],
      { cwd: join(import.meta.dirname, '../..'), encoding: 'utf8', timeout: 60_000, env: { ...process.env, CI: 'true' } },
    );
    expect(result.status, result.stderr).toBe(100);
    const folders = readdirSync(out).filter((f) => !f.startsWith('.'));
    expect(folders).toHaveLength(1);
    expect(existsSync(join(out, folders[0] ?? '', 'history.jsonl.gz'))).toBe(true);
    expect(result.stdout).toMatch(/FAIL {2}check invariant: no over-spend/);
  });
});
