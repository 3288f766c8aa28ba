/**
 * Runs that die. A run killed with SIGKILL used to leave a hidden, truncated `.history-*.jsonl.gz`
 * that `keysim check` refused (exit 2). Now the history is written in the run's folder from the
 * start, and `keysim check` checks the part of it that can be judged, says it was truncated and
 * exits 94 (a partial verdict), never 0. And a target that dies mid-run ends the run early with
 * exit 96 and a report that says why. Real child processes, real kills.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { EXIT } from '../../src/cli/exit-codes.js';
import { HISTORY_FILE, readHistory } from '../../src/load/history/history.js';
import { JOURNAL_FILE } from '../../src/load/history/journal-file.js';
import type { RunReport } from '../../src/report/model.js';
import { cleanEnv, cleanUpCli, cli, startCli, tempDir, waitUntil } from '../helpers/cli.js';

afterAll(cleanUpCli);

/** Events readable from a history being written (0 while it cannot be read yet). */
async function eventsSoFar(path: string): Promise<number> {
  try {
    return (await readHistory(path, { allowTruncated: true })).events.length;
  } catch {
    return 0;
  }
}

describe('runs that die', () => {
  test('a run killed with SIGKILL leaves its history in the run folder, and keysim check checks its prefix (exit 94, truncated)', async () => {
    const out = join(tempDir(), 'reports');
    const running = startCli(['run', 'credits-drain', '--history', '--duration', '300s', '--warmup', '0', '--rate', '50', '--out', out]);
    // The history's path is announced when the run starts.
    await waitUntil(() => /history: (\S+)/.test(running.stderr()), 'the history path', running);
    const path = (/history: (\S+)/.exec(running.stderr()) as RegExpExecArray)[1] as string;
    expect(path.startsWith(out)).toBe(true);
    expect(path.endsWith(`/${HISTORY_FILE}`)).toBe(true);
    let events = 0;
    for (const deadline = Date.now() + 120_000; Date.now() < deadline;) {
      events = await eventsSoFar(path);
      if (events >= 100) break;
      if (running.child.exitCode !== null) throw new Error(`the run ended before it was killed:\n${running.stderr()}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(events).toBeGreaterThanOrEqual(100);
    running.child.kill('SIGKILL');
    const killed = await running.exited;
    expect(killed.signal).toBe('SIGKILL');

    // Findable: the run folder holds the history and the simulator's journal (no report: the run never finished).
    const folder = join(path, '..');
    expect(readdirSync(out)).toEqual([folder.slice(out.length + 1)]);
    expect(readdirSync(folder).sort()).toEqual([HISTORY_FILE, JOURNAL_FILE].sort());

    // The checks only read the history: side by side.
    const [byFolder, byFile, json] = await Promise.all([cli(['check', folder]), cli(['check', path]), cli(['check', folder, '--json'])]);
    for (const check of [byFolder, byFile]) {
      expect(check.code, `stdout: ${check.stdout}\nstderr: ${check.stderr}`).toBe(EXIT.historyTruncated);
      expect(check.stdout).toMatch(/TRUNCATED: the history was cut short/);
      expect(check.stdout).toMatch(/(\d+) complete operations were read; (\d+) were checked/);
      expect(check.stdout).toMatch(/INCONCLUSIVE \(exit 94\): PARTIAL/);
      expect(check.stdout).not.toMatch(/all invariants hold/);
    }
    expect(json.code).toBe(EXIT.historyTruncated);
    const verdict = JSON.parse(json.stdout) as { truncated: boolean; read: number; operations: number; passed: boolean };
    expect(verdict.truncated).toBe(true);
    expect(verdict.read).toBeGreaterThanOrEqual(events);
    expect(verdict.operations).toBeGreaterThan(0);
    expect(verdict.operations).toBeLessThanOrEqual(verdict.read);
  });

  test('a dead target ends the run early: exit 96, the report written and saying why', async () => {
    const rootKey = 'root_dead_target_cli_0123456789';
    const env = cleanEnv({ KEYSIM_ROOT_KEY: rootKey });
    const server = startCli(['serve', '--port', '0'], env);
    await waitUntil(() => /listening on (http:\/\/\S+)/.test(server.stdout()), 'the simulator to listen', server);
    const url = (/listening on (http:\/\/\S+)/.exec(server.stdout()) as RegExpExecArray)[1] as string;
    const out = join(tempDir(), 'reports');
    const running = startCli(
      ['run', 'verify-hot-keys', '--target', url, '--duration', '300s', '--warmup', '0', '--rate', '20', '--dead-after', '1s', '--timeout', '2s', '--out', out],
      env,
    );
    await waitUntil(() => /phase "[^"]+": \d+ requests/.test(running.stderr()), 'the load phase to start', running);
    server.child.kill('SIGKILL');
    await server.exited;
    const result = await running.exited;
    expect(result.code, `stdout: ${result.stdout}\nstderr: ${result.stderr}`).toBe(EXIT.targetStopped);
    expect(result.stdout).toMatch(/FAIL {2}check target answering: The target stopped answering/);
    // Run folders only: the ledger of what a run creates lives in the hidden .resources beside them.
    const [folder] = readdirSync(out).filter((f) => !f.startsWith('.'));
    const reportFile = join(out, folder as string, 'report.json');
    expect(existsSync(reportFile)).toBe(true);
    const report = JSON.parse(readFileSync(reportFile, 'utf8')) as RunReport;
    expect(report.status).toBe('failed');
    expect(report.checks).toContainEqual(expect.objectContaining({ name: 'target answering', passed: false }));
    // It did not fire until the planned end.
    expect(report.measuredMs).toBeLessThan(150_000);
  });
});
