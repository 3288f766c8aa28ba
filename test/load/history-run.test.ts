/**
 * Histories end to end: a run records every operation (fixtures included), the invariants are
 * checked over the saved history, a clean simulator passes, and an injected wrong behaviour is
 * caught with the invariant exit code.
 */
import { existsSync, mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { SCENARIOS } from '../../scenarios/index.js';
import { readHistory } from '../../src/load/history/history.js';
import { runScenario } from '../../src/load/run/runner.js';
import type { LoadSettings, Scenario } from '../../src/load/scenario/scenario.js';
import { startEmbeddedSimulator } from '../../src/load/target/target.js';
import type { FaultsConfig } from '../../src/http/faults.js';
import type { InvariantsSection, RunReport } from '../../src/report/model.js';
import { cleanEnv, cleanUpCli, cli, tempDir } from '../helpers/cli.js';

afterAll(cleanUpCli);

const SETTINGS: LoadSettings = { rate: 200, connections: 8, pipelining: 1, durationMs: 2_000, warmupMs: 0, timeoutMs: 5_000, model: 'open' };

async function runWithHistory(name: string, faults?: FaultsConfig, extra: { oracle?: boolean } = {}) {
  const scenario = SCENARIOS[name] as Scenario<unknown>;
  const target = await startEmbeddedSimulator({ seed: 5, ...(faults === undefined ? {} : { faults }) });
  const historyPath = join(mkdtempSync(join(tmpdir(), 'keysim-history-')), 'history.jsonl.gz');
  try {
    const report = await runScenario({
      scenario,
      target,
      settings: { ...SETTINGS, ...scenario.defaults, durationMs: 2_000, warmupMs: 0 },
      seed: 5,
      thresholds: [],
      keep: false,
      keysimVersion: 'test',
      historyPath,
      ...extra,
    });
    const section = report.invariants;
    if (section === undefined) throw new Error('the report has no invariants section');
    return { report, historyPath, section };
  } finally {
    await target.close();
  }
}

const failed = (section: InvariantsSection) => section.invariants.filter((i) => !i.passed).map((i) => i.id);

describe('runs with history checking', () => {
  test('credits-drain on a correct simulator: every operation recorded, every invariant holds, the oracle agrees', async () => {
    const { report, historyPath, section } = await runWithHistory('credits-drain');
    expect(section.verdict).toBe('clean');
    expect(section.invariants).toHaveLength(6);
    expect(failed(section)).toEqual([]);
    const { events } = await readHistory(historyPath);
    expect(section.operations).toBe(events.length);
    // Fixtures and load alike: every answered request matched to the simulator's journal.
    expect(section.oracle).toMatchObject({ verdict: 'agrees', differences: 0 });
    expect(section.oracle?.compared, JSON.stringify(section.oracle)).toBeGreaterThan(report.totals.requests);
    const verifications = events.filter((e) => e.op === 'keys.verifyKey');
    expect(verifications.length).toBe(report.operations.find((o) => o.operation === 'keys.verifyKey')?.requests);
    expect(events.some((e) => e.op === 'keys.createKey')).toBe(true);
    // Keys by id only: no plaintext key in the history.
    expect(JSON.stringify(events)).not.toMatch(/"key":"/);
    expect(events.every((e) => e.serviceInvokeMs !== undefined)).toBe(true);
  });

  test('ratelimit-window-edge on a correct simulator: the rate-limit invariants hold across clock moves', async () => {
    const { section } = await runWithHistory('ratelimit-window-edge');
    expect(failed(section)).toEqual([]);
    expect(section.invariants.find((i) => i.id === 'ratelimit.no-over-admission')?.checked).toBeGreaterThan(0);
    expect(section.oracle?.verdict).toBe('agrees');
  });

  test('credits-drain with over-admission injected: the over-spend invariant is violated with a witness, and the oracle differs', async () => {
    const { section } = await runWithHistory('credits-drain', { overAdmitRate: 0.5 });
    expect(section.verdict).toBe('violated');
    expect(failed(section)).toContain('credits.no-over-spend');
    const witness = section.violations.find((v) => v.invariant === 'credits.no-over-spend')?.witness ?? [];
    expect(witness[0]?.op).toBe('keys.createKey');
    expect(witness.every((w) => Number.isFinite(w.invokeMs) && w.completeMs >= w.invokeMs)).toBe(true);
    // A fresh engine replaying the same order refuses what was admitted.
    expect(section.oracle?.verdict).toBe('differs');
    expect(section.oracle?.examples[0]).toMatchObject({ op: 'keys.verifyKey', field: 'code', expected: '"USAGE_EXCEEDED"', received: '"VALID"' });
  });

  test('credits-drain with lost decrements injected: an invariant is violated and the oracle differs', async () => {
    const { section } = await runWithHistory('credits-drain', { lostDecrementRate: 0.5 });
    expect(section.verdict).toBe('violated');
    expect(section.oracle?.verdict).toBe('differs');
  });

  test('ratelimit-window-edge with over-admission injected: the over-admission invariant is violated with a witness, and the oracle differs', async () => {
    const { section } = await runWithHistory('ratelimit-window-edge', { overAdmitRate: 0.5, operations: ['ratelimit.limit'] });
    expect(section.verdict).toBe('violated');
    expect(failed(section)).toContain('ratelimit.no-over-admission');
    const violation = section.violations.find((v) => v.invariant === 'ratelimit.no-over-admission');
    expect(violation?.witness.length).toBeGreaterThan(1);
    // The admission that broke the limit (and what set the limit, when an override did), on the service clock.
    expect(violation?.witness.at(-1)?.op).toBe('ratelimit.limit');
    expect(violation?.witness.every((w) => w.serviceInvokeMs !== undefined)).toBe(true);
    expect(section.oracle?.verdict).toBe('differs');
    expect(section.oracle?.examples[0]).toMatchObject({ op: 'ratelimit.limit', field: 'success', expected: 'false', received: 'true' });
  });

  test('a run without the oracle (oracle: false) still checks the invariants', async () => {
    const { section } = await runWithHistory('credits-drain', undefined, { oracle: false });
    expect(section.verdict).toBe('clean');
    expect(section.oracle).toBeUndefined();
  });
});

// Two `keysim run` children at once: each mostly waits for its tsx start-up and its run.
describe.concurrent('runs with history checking, through the CLI', () => {
  test('keysim run --history --fault exits with the invariant code (100) and leaves the history beside the report', async () => {
    const out = tempDir('keysim-history-cli-');
    const result = await cli(
      ['run', 'credits-drain', '--history', '--fault', 'overAdmitRate=0.5', '--duration', '2s', '--warmup', '0', '--quiet', '--out', out],
      cleanEnv({ CI: 'true' }),
    );
    expect(result.code, result.stderr).toBe(100);
    const folders = readdirSync(out).filter((f) => !f.startsWith('.'));
    expect(folders).toHaveLength(1);
    expect(existsSync(join(out, folders[0] ?? '', 'history.jsonl.gz'))).toBe(true);
    expect(result.stdout).toMatch(/FAIL {2}invariant no over-spend/);
    expect(result.stdout).toMatch(/FAIL {2}oracle: \d+ answers compared/);
    const json = JSON.parse(readFileSync(join(out, folders[0] ?? '', 'report.json'), 'utf8')) as RunReport;
    expect(json.invariants?.verdict).toBe('violated');
    expect(readFileSync(join(out, folders[0] ?? '', 'report.md'), 'utf8')).toMatch(/## Invariants/);
  });

  test('keysim run ratelimit-window-edge --history with over-admission exits with the invariant code (100)', async () => {
    const out = tempDir('keysim-history-cli-');
    const result = await cli(
      [
        'run',
        'ratelimit-window-edge',
        '--history',
        '--fault',
        'overAdmitRate=0.5',
        '--fault',
        'operations=ratelimit.limit',
        '--duration',
        '3s',
        '--quiet',
        '--out',
        out,
      ],
      cleanEnv({ CI: 'true' }),
    );
    expect(result.code, result.stderr).toBe(100);
    expect(result.stdout).toMatch(/FAIL {2}invariant no over-admission/);
  });
});
