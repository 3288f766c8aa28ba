/**
 * The live workflow as a user runs it, with child processes (the built CLI: test/helpers/cli-build.ts):
 * - `keysim serve --clock manual` over a URL is a simulator (remote): clock scenarios run there
 *   instead of being skipped, namespaces are made through its admin surface, the summary and the
 *   report say "simulator (remote)";
 * - a run killed mid-way, then `keysim cleanup --tag`, leaves nothing on a target that counts what
 *   it holds (the real simulator behind a proxy that hides its admin surface);
 * - `keysim cleanup` refuses what is not a run tag, and documents its dry run.
 */
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { EXIT } from '../../src/cli/exit-codes.js';
import { LEDGER_FOLDER } from '../../src/load/resources/resources.js';
import { cleanEnv, cleanUpCli, startCli, tempDir as cliTempDir, waitUntil } from '../helpers/cli.js';
import { holdings, startCountingSimulator, startLiveProxy } from '../helpers/counting-target.js';

afterAll(cleanUpCli);

const tempDir = () => cliTempDir('keysim-live-cli-');
const start = (args: string[], env: Record<string, string> = {}) => startCli(args, cleanEnv(env));
/** The waits below have only this upper bound (for a hung child), no pace. */
const until = (ready: () => boolean, what: string) => waitUntil(ready, what, undefined, 90_000);

// Not judged on the generator's pace: these tests are about the target and its resources (a busy
// machine would make a run inconclusive, exit 97).
const SHORT = ['--duration', '600ms', '--warmup', '0', '--rate', '20', '--connections', '2', '--quiet', '--max-late-share', '1', '--max-loop-delay', 'off'];

describe('keysim serve over a URL is a simulator (remote)', () => {
  test(
    'clock scenarios run against keysim serve --clock manual (no longer skipped), smoke makes its namespace through the admin surface, and the reports say "simulator (remote)"',
    { timeout: 200_000 },
    async () => {
      const rootKey = 'root_remote_sim_operator_key_0001';
      const serve = start(['serve', '--port', '0', '--clock', 'manual'], { KEYSIM_ROOT_KEY: rootKey });
      await until(() => /listening on (http:\/\/\S+)/.test(serve.stdout()), 'keysim serve to listen');
      const url = /listening on (http:\/\/\S+)/.exec(serve.stdout())?.[1] ?? '';
      const out = tempDir();
      const run = await start(['run', 'ratelimit-window-edge', 'smoke', '--target', url, '--out', out, ...SHORT], { KEYSIM_ROOT_KEY: rootKey }).exited;
      serve.child.kill('SIGTERM');
      expect(run.stderr).not.toContain('skipping');
      expect(run.stderr).not.toContain('namespace');
      const folders = readdirSync(out).filter((f) => !f.startsWith('.'));
      expect(folders.map((f) => f.replace(/^.*?Z-/, '')).sort()).toEqual(['ratelimit-window-edge', 'smoke']);
      for (const folder of folders) {
        const report = JSON.parse(readFileSync(join(out, folder, 'report.json'), 'utf8')) as {
          target: unknown;
          resources: { disposal: string; unexpectedlyLeft: number };
        };
        expect(report.target).toEqual({ kind: 'simulator', url, remote: true });
        expect(report.resources).toMatchObject({ disposal: 'cleaned', unexpectedlyLeft: 0 });
        expect(readFileSync(join(out, folder, 'report.md'), 'utf8')).toContain('simulator (remote)');
      }
      expect(run.stdout).toContain(`resources on simulator (remote) ${url}`);
      expect([EXIT.ok, EXIT.checkFailed, EXIT.thresholdFailed]).toContain(run.code);
    },
  );
});

describe('a run killed mid-way, then keysim cleanup --tag', () => {
  test('leaves nothing on the target (the ledger beside the reports finds the keys; listing finds the identities)', { timeout: 200_000 }, async () => {
    const sim = await startCountingSimulator();
    const proxy = await startLiveProxy(sim.url);
    try {
      const before = holdings(sim);
      const out = tempDir();
      const env = { KEYSIM_ROOT_KEY: sim.rootKey };
      const running = start(
        ['run', 'mixed', '--target', proxy.url, '--out', out, '--duration', '60s', '--warmup', '0', '--rate', '10', '--connections', '2', '--quiet'],
        env,
      );
      const ledgers = join(out, LEDGER_FOLDER);
      const ledgerFile = () => (existsSync(ledgers) ? readdirSync(ledgers)[0] : undefined);
      // Killed once its fixtures are made and in the ledger: 300 keys and 100 identities. (The
      // target holds a key before the run reads its answer and writes it to the ledger: a kill in
      // between leaves a key that no one can find on a live target, so wait for the ledger.)
      const ledgered = (kind: string) => {
        const file = ledgerFile();
        if (file === undefined) return 0;
        return readFileSync(join(ledgers, file), 'utf8')
          .split('\n')
          .filter((line) => line.includes('"event":"created"') && line.includes(`"kind":"${kind}"`)).length;
      };
      await until(() => ledgered('keys') >= 300 && holdings(sim).identities - before.identities >= 100, 'the fixtures of mixed');
      running.child.kill('SIGKILL');
      await running.exited;
      const tag = (ledgerFile() ?? '').replace(/\.jsonl$/, '');
      expect(tag).toMatch(/^keysim-/);
      expect(holdings(sim).keys).toBeGreaterThan(before.keys);

      const dry = await start(['cleanup', '--target', proxy.url, '--tag', tag, '--out', out, '--dry-run'], env).exited;
      expect(dry.code, dry.stderr).toBe(EXIT.ok);
      expect(dry.stdout).toMatch(/would delete from .*: 300 keys, 100 identities/);
      expect(holdings(sim).keys).toBeGreaterThan(before.keys);

      const cleanup = await start(['cleanup', '--target', proxy.url, '--tag', tag, '--out', out], env).exited;
      expect(cleanup.code, cleanup.stderr).toBe(EXIT.ok);
      expect(cleanup.stdout).toMatch(/Deleted from .*: 300 keys, 100 identities/);
      const after = holdings(sim);
      expect({ keys: after.keys, identities: after.identities, overrides: after.overrides }).toEqual({
        keys: before.keys,
        identities: before.identities,
        overrides: before.overrides,
      });
      // Nothing is left to clean: the ledger is gone.
      expect(ledgerFile()).toBeUndefined();
    } finally {
      await proxy.close();
      await sim.close();
    }
  });

  test(
    'keysim cleanup: --help documents the dry run; a tag that is not a run tag is refused (exit 2) before anything is sent',
    { timeout: 120_000 },
    async () => {
      const help = await start(['cleanup', '--help']).exited;
      expect(help.code).toBe(0);
      expect(help.stdout).toContain('--dry-run');
      expect(help.stdout).toContain('--tag');
      const bad = await start(['cleanup', '--target', 'http://127.0.0.1:9', '--tag', 'keysim'], { KEYSIM_ROOT_KEY: 'root_x_12345678' }).exited;
      expect(bad.code).toBe(EXIT.usage);
      expect(bad.stderr).toContain('is not a run tag');
    },
  );

  test(
    "keysim cleanup --fixtures takes the shared set-up's tag from its file; no tag at all, a file that is not one, or a tag that disagrees exit 2",
    { timeout: 120_000 },
    async () => {
      const env = { KEYSIM_ROOT_KEY: 'root_x_12345678' };
      const dir = tempDir();
      const fixtures = join(dir, 'fixtures.json');
      writeFileSync(
        fixtures,
        JSON.stringify({ schema: 'keysim-fixtures', version: 1, scenario: 'mixed', seed: 1, tag: 'not a tag', target: 'http://127.0.0.1:9', fixtures: {} }),
      );
      const notFile = join(dir, 'other.json');
      writeFileSync(notFile, '{"hello": 1}');
      const [fromFile, none, wrongFile, disagree] = await Promise.all([
        // The file's tag is what is checked (and refused here), so it was read.
        start(['cleanup', '--target', 'http://127.0.0.1:9', '--fixtures', fixtures], env).exited,
        start(['cleanup', '--target', 'http://127.0.0.1:9'], env).exited,
        start(['cleanup', '--target', 'http://127.0.0.1:9', '--fixtures', notFile], env).exited,
        start(['cleanup', '--target', 'http://127.0.0.1:9', '--fixtures', fixtures, '--tag', 'keysim-20260101T120000-1'], env).exited,
      ]);
      expect(fromFile.code, fromFile.stderr).toBe(EXIT.usage);
      expect(fromFile.stderr).toContain('--tag "not a tag" is not a run tag');
      expect(none.code).toBe(EXIT.usage);
      expect(none.stderr).toContain('Name the run to clean up: --tag <run tag>');
      expect(wrongFile.code).toBe(EXIT.usage);
      expect(wrongFile.stderr).toContain('is not a keysim fixtures file');
      expect(disagree.code).toBe(EXIT.usage);
      expect(disagree.stderr).toContain('name different runs');
    },
  );
});
