/**
 * Measures end to end, as a user runs them: `keysim serve --profile production --regions 2` (a real
 * process, port 0, manual clock: the scenario moves it, nothing waits), then `keysim run visibility
 * --consistency production` with thresholds naming its measures. report.json carries the lags as
 * measures with the production promises, the summary, report.md, report.html and the JUnit file
 * show them, and the thresholds judge them: `p95(lag.credits) < 90s` passes, `max(lag.disable) < 1ms`
 * fails — exit 99, as a failed threshold always exits.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { EXIT } from '../../src/cli/exit-codes.js';
import type { RunReport } from '../../src/report/model.js';
import { cleanUpCli, cli, runFolders, tempDir } from '../helpers/cli.js';
import { type ServedSimulator, serveCli } from '../helpers/serve-cli.js';

const ROOT_KEY = 'root_measures_cli_0123456789abcdef';
let served: ServedSimulator;

beforeAll(async () => {
  served = await serveCli(ROOT_KEY, ['--profile', 'production', '--regions', '2', '--clock', 'manual', '--seed', '12']);
});

afterAll(async () => {
  await served.stop();
  cleanUpCli();
});

test('keysim run visibility on the production profile writes its lags as measures; p95(lag.credits) < 90s passes, max(lag.disable) < 1ms fails (exit 99)', async () => {
  const out = tempDir('keysim-measures-');
  const junit = join(out, 'junit.xml');
  const result = await cli(
    [
      'run',
      'visibility',
      '--target',
      served.url,
      '--yes',
      '--consistency',
      'production',
      '--threshold',
      'p95(lag.credits) < 90s',
      '--threshold',
      'max(lag.disable) < 1ms',
      '--out',
      out,
      '--junit',
      junit,
      // Pace-free: a busy machine's late sends must not turn the verdict into a generator-limited one.
      '--max-late-share',
      '1',
      '--max-loop-delay',
      'off',
    ],
    served.env,
  );
  const said = result.stdout + result.stderr;
  expect(result.code, said).toBe(EXIT.thresholdFailed);
  const [folder] = runFolders(out);
  const report = JSON.parse(readFileSync(join(folder as string, 'report.json'), 'utf8')) as RunReport;
  expect(report.measures?.map((m) => [m.name, m.unit, m.promise, m.source])).toEqual([
    ['lag.credits', 'ms', 60_000, 'scenario'],
    ['lag.disable', 'ms', 10_000, 'scenario'],
    ['lag.delete', 'ms', 10_000, 'scenario'],
    ['lag.override', 'ms', 60_000, 'scenario'],
    ['lag.expiry', 'ms', 10_000, 'scenario'],
  ]);
  // A key's expiry is judged against the current clock in every region, its cached copy too: no lag.
  expect(report.measures?.find((m) => m.name === 'lag.expiry')).toMatchObject({ count: 3, max: 0 });
  // The region that kept its cached key took time to see it disabled: a lag above 1 ms.
  expect(report.measures?.find((m) => m.name === 'lag.disable')?.max).toBeGreaterThan(1);
  // The scenario's own thresholds first, then --threshold's.
  expect(report.thresholds.map((t) => [t.expression, t.passed])).toEqual([
    ['errors == 0', true],
    ['checks == 0', true],
    ['p95(lag.credits) < 90s', true],
    ['max(lag.disable) < 1ms', false],
  ]);
  // Within their promises, every check of the scenario passed: only the threshold fails the run.
  expect(report.checks.filter((c) => !c.passed)).toEqual([]);
  expect(result.stdout).toMatch(/note {2}measure lag\.credits p50 [\d.]+ s · p95 [\d.]+ s · max [\d.]+ s — promise 60 s, 3 samples/);
  expect(result.stdout).toMatch(/FAIL {2}threshold max\(lag\.disable\) < 1ms: measured \d+ ms over 3 samples/);
  expect(readFileSync(join(folder as string, 'report.md'), 'utf8')).toMatch(/## Measures[\s\S]*\| `lag\.disable` \|/);
  expect(readFileSync(join(folder as string, 'report.html'), 'utf8')).toContain('<code>lag.override</code>');
  expect(readFileSync(junit, 'utf8')).toMatch(/<property name="measure lag\.credits" value="lag\.credits p50 /);
});
