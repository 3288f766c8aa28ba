/**
 * The production profile judged end to end, as a user runs it: `keysim serve --profile production
 * --regions 2` (a real process, port 0), then `keysim run credits-drain --history` against it. Its
 * two regions' counters over-spend the keys, as the production service may: judged exactly, that
 * is a violation (exit 100); judged by the production promises, within them (exit 0) — the
 * scenario's own counts too, once the regions have converged. The one run judged again by
 * `keysim check` with the same set gets the same verdict. The server's clock is manual, so the
 * convergence moves it instead of waiting a minute. On the exact simulator (the default target) the
 * production promises change nothing: every credit invariant holds exactly. The oracle replays the
 * profile, seed included (its journal's start is a sync point): 0 differences on the run, and
 * `keysim check` still catches a saved journal altered after the run.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { EXIT } from '../../src/cli/exit-codes.js';
import { JOURNAL_FILE } from '../../src/load/history/journal-file.js';
import { cleanUpCli, cli, runFolders, tempDir } from '../helpers/cli.js';
import { type ServedSimulator, serveCli } from '../helpers/serve-cli.js';

const ROOT_KEY = 'root_production_profile_cli_0123456789';
let served: ServedSimulator;

beforeAll(async () => {
  served = await serveCli(ROOT_KEY, ['--profile', 'production', '--regions', '2', '--clock', 'manual', '--seed', '7']);
});

afterAll(async () => {
  await served.stop();
  cleanUpCli();
});

/** credits-drain with a history against the served profile, judged by `consistency`. */
async function drain(consistency: 'exact' | 'production') {
  const out = tempDir(`keysim-profile-${consistency}-`);
  const args = ['run', 'credits-drain', '--target', served.url, '--history', '--consistency', consistency, '--out', out, '--yes'];
  // Pace-free: a busy machine's late sends must not turn the verdict into a generator-limited one.
  const result = await cli([...args, '--max-late-share', '1', '--max-loop-delay', 'off'], served.env);
  const [folder] = runFolders(out);
  return { ...result, folder: folder as string };
}

test('credits-drain on the production profile: --consistency exact exits 100 (over-spend), production exits 0 with the over-spend within the bound; the oracle ran on both with 0 differences, and keysim check catches an altered saved journal', async () => {
  const exact = await drain('exact');
  expect(exact.code, exact.stdout + exact.stderr).toBe(EXIT.invariantViolated);
  expect(exact.stdout).toMatch(/FAIL {2}invariant no over-spend: .* — violated/);
  // The over-spend is the profile's own: the oracle, replaying the profile, agrees with every answer.
  expect(exact.stdout).toMatch(/pass {2}oracle: [1-9]\d* answers compared with a replay through a fresh engine, 0 differ/);

  const production = await drain('production');
  expect(production.code, production.stdout + production.stderr).toBe(EXIT.ok);
  expect(production.stdout).toMatch(/invariant no over-spend: .* — (within promise: over-spend \d+ credits ≤ bound \d+|exact)/);
  expect(production.stdout + production.stderr).toContain('for every region to converge before the final reads');
  expect(production.stdout).toMatch(/pass {2}check balances drained: .*0 left of/);
  const report = JSON.parse(readFileSync(join(production.folder, 'report.json'), 'utf8')) as {
    invariants: { promises?: { name: string }; notes: string[]; oracle?: { verdict: string; differences: number; compared: number } };
  };
  expect(report.invariants.promises?.name).toBe('production');
  // The oracle replayed the profile, seed included: every answer, over-spends and all, is the profile's.
  expect(report.invariants.notes.join('\n')).not.toContain('The oracle did not run');
  expect(report.invariants.oracle).toMatchObject({ verdict: 'agrees', differences: 0 });
  expect(report.invariants.oracle?.compared).toBeGreaterThan(50);
  expect(production.stdout).toMatch(/pass {2}oracle: [1-9]\d* answers compared with a replay through a fresh engine, 0 differ/);

  // One run, one verdict: keysim check on its folder with the same set, and exactly.
  const again = await cli(['check', production.folder, '--consistency', 'production'], served.env);
  expect(again.code, again.stdout + again.stderr).toBe(EXIT.ok);
  const exactly = await cli(['check', production.folder, '--consistency', 'exact'], served.env);
  expect(exactly.code, exactly.stdout + exactly.stderr).toBe(EXIT.invariantViolated);
  expect(again.stdout).toMatch(/oracle {2}agrees: \d+ answers compared with a replay of the saved journal/);

  // A difference is still caught: one verification of the saved journal altered to be free. The
  // replay keeps a credit the profile spent, and later balances of that key differ.
  const file = join(production.folder, JOURNAL_FILE);
  const lines = gunzipSync(readFileSync(file)).toString('utf8').split('\n');
  const at = lines.findIndex((line) => line.includes('"path":"/v2/keys.verifyKey"') && line.includes('"seq"') && line.includes('"region"'));
  expect(at).toBeGreaterThan(0);
  const entry = JSON.parse(lines[at] as string) as { input: Record<string, unknown> };
  entry.input.credits = { cost: 0 };
  lines[at] = JSON.stringify(entry);
  writeFileSync(file, gzipSync(lines.join('\n')));
  const altered = await cli(['check', production.folder, '--consistency', 'production'], served.env);
  expect(altered.code, altered.stdout + altered.stderr).toBe(EXIT.invariantViolated);
  expect(altered.stdout).toMatch(/oracle {2}DIFFERS: \d+ of \d+ answers compared/);
});

test('credits-drain on the exact simulator: --consistency production passes, every credit invariant exact', async () => {
  const out = tempDir('keysim-exact-production-');
  const result = await cli(
    ['run', 'credits-drain', '--history', '--consistency', 'production', '--out', out, '--max-late-share', '1', '--max-loop-delay', 'off'],
    served.env,
  );
  expect(result.code, result.stdout + result.stderr).toBe(EXIT.ok);
  const [folder] = runFolders(out);
  const report = JSON.parse(readFileSync(join(folder as string, 'report.json'), 'utf8')) as {
    invariants: { invariants: Array<{ id: string; state?: string }> };
  };
  for (const id of ['credits.no-over-spend', 'credits.no-under-serve', 'credits.consistent']) {
    expect(report.invariants.invariants.find((i) => i.id === id)?.state, id).toBe('exact');
  }
});
