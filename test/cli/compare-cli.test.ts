/**
 * `keysim compare` and `keysim run --baseline` as child processes. Bad inputs exit 2 naming what is
 * wrong; hand-built report files 20 % apart exit 93 with compare.{json,md,html} written; and real
 * short runs on the embedded simulator: a run with +100 ms injected on every request is detected
 * (its p50 is worse whatever the machine's pace, since every request waits that long), a run
 * against itself never is. The generator's own limits are switched off (`--max-late-share 1
 * --max-loop-delay off`) so that a busy machine cannot turn the exit code into 97.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { EXIT } from '../../src/cli/exit-codes.js';
import { worseExitCode } from '../../src/cli/exit-severity.js';
import { renderJson } from '../../src/report/index.js';
import { seededRandom } from '../../src/report/compare-stats.js';
import type { RunReport } from '../../src/report/model.js';
import { cleanUpCli, cli, runFolders, tempDir as cliTempDir } from '../helpers/cli.js';
import { latencySeconds, reportFromSeconds } from '../helpers/compare-reports.js';

afterAll(cleanUpCli);

const tempDir = () => cliTempDir('keysim-compare-cli-');

function writeReportFile(report: RunReport): string {
  const file = join(tempDir(), 'report.json');
  writeFileSync(file, renderJson(report));
  return file;
}

function handBuilt(seed: number, scale: number): RunReport {
  const random = seededRandom(seed);
  return reportFromSeconds({ 'keys.verifyKey': latencySeconds(random, 10, 100).map((s) => s.map((ms) => ms * scale)) });
}

describe.concurrent('bad inputs → exit 2 with the reason (no load sent)', () => {
  const base = writeReportFile(handBuilt(1, 1));

  test.each([
    [['compare', '/nonexistent/run', base], /\/nonexistent\/run does not exist/],
    [['compare', base], /Give two runs/],
    [['compare', base, base, '--baseline', base], /not both/],
    [['compare', base, base, '--watch', 'p42(keys.verifyKey)'], /--watch "p42\(keys\.verifyKey\)": unknown figure/],
    [['compare', base, base, '--watch', 'p99(keys.nope)'], /no operation "keys\.nope".*keys\.verifyKey/],
    [['compare', base, base, '--noise', 'lots'], /--noise "lots"/],
    [['compare', base, base, '--noise', '150%'], /--noise "150%"/],
  ])('%j', async (args, message) => {
    const result = await cli(args);
    expect(result.code, result.stderr).toBe(EXIT.usage);
    expect(result.stderr).toMatch(message);
  });

  test('a file that is not a report', async () => {
    const file = join(tempDir(), 'report.json');
    writeFileSync(file, '{"hello": 1}');
    const result = await cli(['compare', file, base]);
    expect(result.code, result.stderr).toBe(EXIT.usage);
    expect(result.stderr).toMatch(/not a keysim report/);
  });

  test('an operation absent on one side', async () => {
    const other = reportFromSeconds({ 'ratelimit.limit': latencySeconds(seededRandom(2), 10, 10) });
    const result = await cli(['compare', base, writeReportFile(other)]);
    expect(result.code, result.stderr).toBe(EXIT.usage);
    expect(result.stderr).toMatch(/report\.json has no requests of ratelimit\.limit, which the other runs have: compare runs of the same scenario/);
  });

  test('one report per side, written before per-second histograms: too old for a single-run comparison', async () => {
    const old = handBuilt(3, 1);
    old.timeline = old.timeline.map(({ operations: _dropped, ...point }) => point);
    const result = await cli(['compare', writeReportFile(old), base]);
    expect(result.code, result.stderr).toBe(EXIT.usage);
    expect(result.stderr).toMatch(/too old for a comparison with fewer than three runs per side/);
  });
});

test('hand-built runs, the candidate 20 % slower: exit 93, every format, files written with --out', async () => {
  const base = writeReportFile(handBuilt(1, 1));
  const cand = writeReportFile(handBuilt(1, 1.2));
  const out = join(tempDir(), 'cmp');
  const [table, md, json, html] = await Promise.all([
    cli(['compare', base, cand, '--out', out, '--resamples', '300']),
    cli(['compare', base, cand, '--format', 'md', '--resamples', '300']),
    cli(['compare', base, cand, '--format', 'json', '--resamples', '300']),
    cli(['compare', base, cand, '--format', 'html', '--resamples', '300']),
  ]);
  for (const r of [table, md, json, html]) expect(r.code, r.stderr).toBe(EXIT.compareWorse);
  expect(table.stdout).toMatch(/^WORSE: p99\(keys\.verifyKey\)/);
  expect(table.stdout).toMatch(/\* keys\.verifyKey\s+p99\s.*WORSE/);
  expect(md.stdout).toMatch(/^### keysim compare: ❌ WORSE/);
  expect(md.stdout).toContain('<details><summary>All figures</summary>');
  const parsed = JSON.parse(json.stdout) as { schema: string; worse: string[] };
  expect(parsed).toMatchObject({ schema: 'keysim-comparison', worse: ['p99(keys.verifyKey)'] });
  expect(html.stdout).toContain("default-src 'none'");
  expect(html.stdout).toMatch(/<svg[^>]*aria-label="Latency percentile spectrum of keys\.verifyKey: baseline and candidate"/);
  expect(JSON.parse(readFileSync(join(out, 'compare.json'), 'utf8'))).toEqual(parsed);
  expect(readFileSync(join(out, 'compare.md'), 'utf8')).toBe(md.stdout);
  expect(readFileSync(join(out, 'compare.html'), 'utf8')).toBe(html.stdout);
});

test('--no-between-runs judges one run per side on its seconds alone; by default the between-run term is on', async () => {
  const base = writeReportFile(handBuilt(1, 1));
  const cand = writeReportFile(handBuilt(2, 1));
  const [on, off] = await Promise.all([
    cli(['compare', base, cand, '--format', 'json', '--resamples', '300']),
    cli(['compare', base, cand, '--format', 'json', '--resamples', '300', '--no-between-runs']),
  ]);
  const settings = (r: { stdout: string }) => (JSON.parse(r.stdout) as { settings: { betweenRuns?: boolean } }).settings;
  expect(settings(on).betweenRuns, on.stderr).toBe(true);
  expect(settings(off).betweenRuns, off.stderr).toBe(false);
});

test('--baseline a b c --candidate d e f: compared run by run (Mann–Whitney U), exit 93 for a 20 % slower candidate', async () => {
  const base = [1, 2, 3].map((seed) => writeReportFile(handBuilt(seed, 1)));
  const cand = [4, 5, 6].map((seed) => writeReportFile(handBuilt(seed, 1.2)));
  const result = await cli(['compare', '--baseline', ...base, '--candidate', ...cand, '--watch', 'p50']);
  expect(result.code, result.stdout + result.stderr).toBe(EXIT.compareWorse);
  expect(result.stdout).toMatch(/3 baseline runs against 3 candidate runs: run by run \(Mann–Whitney U/);
  expect(result.stdout).toMatch(/90\.0 % confidence/);
});

test('run --baseline: a worse comparison (93) ranks below every verdict of the run itself, above ok', () => {
  expect(worseExitCode(EXIT.ok, EXIT.compareWorse)).toBe(EXIT.compareWorse);
  for (const code of [
    EXIT.generatorLimited,
    EXIT.thresholdFailed,
    EXIT.checkFailed,
    EXIT.invariantViolated,
    EXIT.resourcesLeft,
    EXIT.targetStopped,
    EXIT.usage,
    EXIT.interrupted,
  ]) {
    expect(worseExitCode(EXIT.compareWorse, code)).toBe(code);
    expect(worseExitCode(code, EXIT.compareWorse)).toBe(code);
  }
});

// The runs after the baseline each have their own embedded simulator and read the baseline only: side by side.
describe.concurrent('real runs on the embedded simulator', () => {
  const RUN = ['smoke', '--duration', '6s', '--warmup', '1s', '--rate', '20', '--quiet', '--max-late-share', '1', '--max-loop-delay', 'off'];
  const FAULT = ['--fault', 'latencyMs=100'];
  let baseline = '';
  let baselineOut = '';

  beforeAll(async () => {
    baselineOut = tempDir();
    const result = await cli(['run', ...RUN, '--out', baselineOut]);
    expect(result.code, result.stderr).toBe(EXIT.ok);
    [baseline = ''] = runFolders(baselineOut);
  }, 120_000);

  test('+100 ms on every request: compare exits 93 with p50 worse; the run against itself exits 0', async () => {
    const out = tempDir();
    const slow = await cli(['run', ...RUN, ...FAULT, '--out', out]);
    expect(slow.code, slow.stderr).toBe(EXIT.ok);
    const [candidate = ''] = runFolders(out);
    const [worse, itself] = await Promise.all([cli(['compare', baseline, candidate, '--watch', 'p50']), cli(['compare', baseline, baseline])]);
    expect(worse.code, worse.stdout + worse.stderr).toBe(EXIT.compareWorse);
    expect(worse.stdout).toMatch(/^WORSE: p50/);
    expect(itself.code, itself.stdout + itself.stderr).toBe(EXIT.ok);
    expect(itself.stdout).not.toMatch(/WORSE|better/);
  }, 120_000);

  test('run --baseline: the comparison printed, compare files in the run folder, exit 93', async () => {
    const out = tempDir();
    const result = await cli(['run', ...RUN, ...FAULT, '--out', out, '--baseline', baselineOut, '--watch', 'p50']);
    expect(result.code, result.stdout + result.stderr).toBe(EXIT.compareWorse);
    expect(result.stdout).toContain(`compared with the baseline ${baseline}`);
    const [folder = ''] = runFolders(out);
    expect(JSON.parse(readFileSync(join(folder, 'compare.json'), 'utf8'))).toMatchObject({ worse: ['p50'] });
  }, 120_000);

  test('run --baseline of another scenario is refused before any load', async () => {
    const out = tempDir();
    const result = await cli(['run', 'verify-hot-keys', '--duration', '1s', '--out', out, '--baseline', baseline]);
    expect(result.code, result.stderr).toBe(EXIT.usage);
    expect(result.stderr).toMatch(/holds no run of the scenario "verify-hot-keys"/);
    expect(runFolders(out)).toEqual([]);
  });
});
