/**
 * `keysim check` on a run folder reaches the run's own verdict and exit code: it replays the
 * simulator's journal the run saved and compares it again (the oracle), and re-judges the
 * thresholds from report.json. Real `keysim run` and `keysim check` child processes on the
 * embedded simulator: a clean run (both 0), a run whose oracle differs (both 100, the same count of
 * differences), a failed threshold (both 99), and a saved journal altered after the run (check
 * finds the difference on its own: it replays, it does not copy the report's verdict).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, describe, expect, test } from 'vitest';
import { EXIT } from '../../src/cli/exit-codes.js';
import { JOURNAL_FILE } from '../../src/load/history/journal-file.js';
import type { RunReport } from '../../src/report/model.js';
import { cleanUpCli, cli, runFolders, tempDir } from '../helpers/cli.js';

afterAll(cleanUpCli);

/** Short, and judged whatever the machine's pace (no inconclusive exit 97 on a busy machine). */
const SHORT = ['--history', '--duration', '2s', '--warmup', '0', '--rate', '50', '--max-late-share', '1', '--max-loop-delay', 'off'];

async function runOnce(extra: string[]): Promise<{ code: number | null; folder: string; report: RunReport; out: string }> {
  const out = tempDir();
  const result = await cli(['run', 'credits-drain', ...SHORT, ...extra, '--out', out]);
  const folders = runFolders(out);
  expect(folders, `stdout: ${result.stdout}\nstderr: ${result.stderr}`).toHaveLength(1);
  const folder = folders[0] as string;
  const report = JSON.parse(readFileSync(join(folder, 'report.json'), 'utf8')) as RunReport;
  return { code: result.code, folder, report, out: `${result.stdout}\n${result.stderr}` };
}

describe('keysim check reaches the run verdict', () => {
  test('a clean run: run exits 0, check exits 0 with the oracle replayed from the saved journal; an altered journal is then caught by check alone', async () => {
    const run = await runOnce([]);
    expect(run.code, run.out).toBe(EXIT.ok);
    expect(run.report.invariants?.oracle?.verdict).toBe('agrees');
    const check = await cli(['check', run.folder]);
    expect(check.code, check.stdout + check.stderr).toBe(EXIT.ok);
    expect(check.stdout).toMatch(
      new RegExp(`oracle {2}agrees: ${run.report.invariants?.oracle?.compared} answers compared with a replay of the saved journal`),
    );
    expect(check.stdout).toMatch(/per-response checks are not re-checked \(they need the live answers\)/);

    // Altered after the run: one verification journaled as free. The replay then keeps a credit the
    // simulator spent, and every later balance of that key differs; the invariants still hold.
    const file = join(run.folder, JOURNAL_FILE);
    const lines = gunzipSync(readFileSync(file)).toString('utf8').split('\n');
    const at = lines.findIndex((line) => line.includes('"path":"/v2/keys.verifyKey"') && line.includes('"seq"'));
    expect(at).toBeGreaterThan(0);
    const entry = JSON.parse(lines[at] as string) as { input: Record<string, unknown> };
    entry.input.credits = { cost: 0 };
    lines[at] = JSON.stringify(entry);
    writeFileSync(file, gzipSync(lines.join('\n')));
    const altered = await cli(['check', run.folder]);
    expect(altered.code, altered.stdout + altered.stderr).toBe(EXIT.invariantViolated);
    expect(altered.stdout).toMatch(/oracle {2}DIFFERS: \d+ of \d+ answers compared/);
    expect(altered.stdout).toMatch(/every invariant holds/);
    expect(altered.stdout).toMatch(
      /FAIL \(exit 100\): the run's verdict: the oracle differs: \d+ answers not what a fresh engine gives; every invariant holds/,
    );
  });

  test('a run whose oracle differs (an injected fault): run exits 100 and check exits 100 with the same differences', async () => {
    const run = await runOnce(['--fault', 'overAdmitRate=0.3']);
    expect(run.code, run.out).toBe(EXIT.invariantViolated);
    const oracle = run.report.invariants?.oracle;
    expect(oracle?.verdict).toBe('differs');
    const check = await cli(['check', run.folder]);
    expect(check.code, check.stdout + check.stderr).toBe(EXIT.invariantViolated);
    expect(check.stdout).toContain(`oracle  DIFFERS: ${oracle?.differences} of ${oracle?.compared} answers compared`);
    const first = oracle?.examples[0];
    expect(check.stdout).toContain(`#${first?.seq} ${first?.op} ${first?.field}: expected ${first?.expected} (replay), received ${first?.received}`);
    const json = JSON.parse((await cli(['check', run.folder, '--json'])).stdout) as { run: { exitCode: number; oracle: { section: { differences: number } } } };
    expect(json.run).toMatchObject({ exitCode: EXIT.invariantViolated, oracle: { section: { differences: oracle?.differences } } });
  });

  test('a failed threshold: run exits 99 and check, re-judging it from report.json, exits 99 too', async () => {
    const run = await runOnce(['--threshold', 'errors == 1']);
    expect(run.code, run.out).toBe(EXIT.thresholdFailed);
    const check = await cli(['check', run.folder]);
    expect(check.code, check.stdout + check.stderr).toBe(EXIT.thresholdFailed);
    expect(check.stdout).toMatch(/thresholds {2}re-judged from report.json's histograms and counts: \d+ of \d+ passed/);
    expect(check.stdout).toMatch(/FAILED errors == 1: measured 0/);
    expect(check.stdout).toMatch(/FAIL \(exit 99\): the run's verdict: threshold errors == 1 failed \(measured 0\); every invariant holds/);
  });
});
