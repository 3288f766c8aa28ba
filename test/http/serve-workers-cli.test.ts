/**
 * `keysim serve --workers 2` as a child process: it starts, both workers answer on the one port,
 * and SIGINT or SIGTERM stop the owner and every worker with exit code 0 — no process left behind.
 * Bad `--workers` values exit 2. Run from the sources with tsx (no build needed).
 */
import { execFileSync } from 'node:child_process';
import { afterAll, describe, expect, test } from 'vitest';
import { EXIT } from '../../src/cli/exit-codes.js';
import { cleanUpCli, cli, startCli, waitUntil } from '../helpers/cli.js';
import { call, send } from '../helpers/http.js';

afterAll(cleanUpCli);

const ROOT_KEY = 'root_workers_cli_123456';

/** Process ids of `parent`'s HTTP workers (not, e.g., the TypeScript loader's helper process). */
function workersOf(parent: number): number[] {
  try {
    return execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(parent)], { encoding: 'utf8' })
      .split('\n')
      .filter((line) => line.includes('cluster-worker'))
      .map((line) => Number(line.trim().split(/\s+/)[0]));
  } catch {
    // ps exits 1 when nothing matches.
    return [];
  }
}

function alive(pid: number): boolean {
  try {
    execFileSync('ps', ['-p', String(pid)], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

describe('keysim serve --workers', () => {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    test(`--workers 2 serves on both workers and stops cleanly on ${signal}, leaving no worker behind`, async () => {
      const running = startCli(['serve', '--port', '0', '--workers', '2', '--clock', 'manual', '--root-key', ROOT_KEY]);
      await waitUntil(() => /listening on http:\/\/\S+:\d+/.test(running.stdout()), 'the listening line', running);
      const url = /listening on (http:\/\/\S+:\d+)/.exec(running.stdout())?.[1] ?? '';
      // The banner comes in several writes.
      await waitUntil(() => running.stdout().includes('2 HTTP worker processes'), 'the workers line of the banner', running);
      const pid = running.child.pid ?? 0;
      const workers = workersOf(pid);
      expect(workers).toHaveLength(2);

      const target = { url, rootKey: ROOT_KEY };
      await call(target, '/_sim/clock.advance', { byMs: 5 });
      const seen = new Set<string>();
      for (let i = 0; i < 6; i++) {
        const answer = await send(url, '/_sim/health', { method: 'GET', headers: { connection: 'close' } });
        expect(answer.status).toBe(200);
        seen.add(answer.headers['x-keysim-worker'] ?? 'none');
      }
      expect(seen).toEqual(new Set(['0', '1']));

      running.child.kill(signal);
      const finished = await running.exited;
      expect(finished.code, finished.stderr).toBe(EXIT.ok);
      expect(finished.stderr).not.toContain('exited (');
      await waitUntil(() => workers.every((w) => !alive(w)), 'the workers to be gone');
    });
  }

  test('workers exit when their owner is killed outright (SIGKILL): no orphan keeps the port', async () => {
    const running = startCli(['serve', '--port', '0', '--workers', '2', '--root-key', ROOT_KEY]);
    await waitUntil(() => running.stdout().includes('2 HTTP worker processes'), 'the workers line of the banner', running);
    const workers = workersOf(running.child.pid ?? 0);
    expect(workers).toHaveLength(2);
    running.child.kill('SIGKILL');
    await running.exited;
    await waitUntil(() => workers.every((w) => !alive(w)), 'the orphaned workers to exit');
  });

  test('a bad --workers value exits 2 and says what is wrong', async () => {
    const values = ['0', '-1', '1.5', 'abc', '65'];
    const results = await Promise.all(values.map(async (value) => ({ value, finished: await cli(['serve', '--port', '0', '--workers', value]) })));
    for (const { value, finished } of results) {
      expect(finished.code, `--workers ${value}: ${finished.stderr}`).toBe(EXIT.usage);
      expect(finished.stderr).toContain('--workers');
      expect(finished.stdout).not.toContain('listening on');
    }
  });
});
