/**
 * Acceptance of execution segments: four `keysim run --segment i/4` processes against one
 * `keysim serve` with a fixed injected latency, merged by `keysim merge`, against a
 * single-process run of the same plan beside them. No pace is assumed: the request counts are
 * exact by construction, and latencies are compared against the injected latency with a margin
 * that a busy machine cannot break (every figure is at least the injected 20 ms, and each merged
 * percentile lies between the segments' own).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { EXIT } from '../../src/cli/exit-codes.js';
import { WORKER_CHILD_ENV } from '../../src/cli/segment-flags.js';
import { decodeHistogram, mergeHistograms, percentilesMs } from '../../src/report/histogram.js';
import type { RunReport } from '../../src/report/model.js';
import { type Running, cleanEnv, cleanUpCli, cli, runFolders, startCli, tempDir, waitUntil } from '../helpers/cli.js';

afterAll(cleanUpCli);

const LATENCY_MS = 20;
const RATE = 80;
const DURATION_S = 3;
/** The plan: round(rate × duration). */
const PLANNED = RATE * DURATION_S;
/**
 * The shared start instant, this far ahead: time for five keysim processes to start on an idle
 * machine. A busy machine may start some after it: they run as `run --workers` children do
 * (WORKER_CHILD_ENV), starting late and saying so instead of refusing, so that nothing here waits
 * out a margin wide enough for the slowest machine, nor fails on a narrower one.
 */
const START_MARGIN_MS = 5_000;

const readReport = (folder: string) => JSON.parse(readFileSync(join(folder, 'report.json'), 'utf8')) as RunReport;

describe('four segments merged = one run of the whole plan', () => {
  test(
    'counts exact, percentiles within the injected latency, invariants clean; a killed segment makes the merge partial (exit 92)',
    { timeout: 240_000 },
    async () => {
      const env = cleanEnv({ KEYSIM_ROOT_KEY: 'root_segments_cli_0123456789', [WORKER_CHILD_ENV]: '1' });
      const server = startCli(['serve', '--port', '0', '--fault', `latencyMs=${LATENCY_MS}`], env);
      await waitUntil(() => /listening on (http:\/\/\S+)/.test(server.stdout()), 'the simulator to listen', server);
      const url = (/listening on (http:\/\/\S+)/.exec(server.stdout()) as RegExpExecArray)[1] as string;
      const dir = tempDir();
      const flags = ['verify-hot-keys', '--target', url, '--rate', String(RATE), '--warmup', '0', '--history', '--no-oracle', '--quiet', '--yes'];
      const common = [...flags, '--duration', `${DURATION_S}s`];
      const startAt = new Date(Date.now() + START_MARGIN_MS).toISOString();
      const segments: Running[] = [0, 1, 2, 3].map((i) =>
        startCli(['run', ...common, '--segment', `${i}/4`, '--start-at', startAt, '--out', join(dir, 'parts')], env),
      );
      const whole = startCli(['run', ...common, '--start-at', startAt, '--out', join(dir, 'whole')], env);
      const results = await Promise.all([...segments, whole].map((r) => r.exited));
      // The scenario's own latency threshold may fail, or the generator be judged limited, on a busy machine: not what this tests.
      const judged: number[] = [EXIT.ok, EXIT.generatorLimited, EXIT.thresholdFailed];
      for (const r of results) expect(judged, `stdout: ${r.stdout}\nstderr: ${r.stderr}`).toContain(r.code);

      // In segment order: folder names sort by start time, which a busy machine shuffles.
      const parts = runFolders(join(dir, 'parts')).sort((a, b) => (readReport(a).segment?.index ?? -1) - (readReport(b).segment?.index ?? -1));
      expect(parts).toHaveLength(4);
      const merged = await cli(['merge', ...parts, '--out', join(dir, 'merged'), '--threshold', 'errors == 0'], env);
      expect(judged, `stdout: ${merged.stdout}\nstderr: ${merged.stderr}`).toContain(merged.code);
      const report = readReport(join(dir, 'merged'));
      const single = readReport(runFolders(join(dir, 'whole'))[0] as string);
      const partReports = parts.map(readReport);

      // Exactly the single-process plan, each part its striped share (80·3 = 240 = 60 × 4).
      expect(single.totals.requests).toBe(PLANNED);
      expect(partReports.map((p) => p.totals.requests)).toEqual([60, 60, 60, 60]);
      expect(report.totals.requests).toBe(PLANNED);
      expect(report.totals.errors).toBe(0);
      expect(report.merge).toEqual({ segments: 4, merged: ['0/4', '1/4', '2/4', '3/4'], missing: [], incomplete: [], partial: false });
      expect(report.thresholds).toContainEqual(expect.objectContaining({ expression: 'errors == 0', passed: true }));
      // The segments' own thresholds are evaluated again, on the merged figures.
      expect(report.thresholds.map((t) => t.expression)).toEqual(expect.arrayContaining(partReports[0]?.thresholds.map((t) => t.expression) ?? []));
      expect(existsSync(join(dir, 'merged', 'report.html'))).toBe(true);
      expect(readFileSync(join(dir, 'merged', 'report.md'), 'utf8')).toContain('Merged from all 4 segments');

      // The merge is exact: the merged histogram is the HDR sum of the parts', never averaged percentiles.
      const exact = percentilesMs(mergeHistograms(partReports.map((p) => decodeHistogram(p.overall.histograms.corrected))));
      expect(report.overall.latency.corrected).toEqual(exact);
      expect(report.overall.latency.corrected.count).toBe(PLANNED);
      expect(report.timeline.reduce((sum, t) => sum + t.requests, 0)).toBe(PLANNED);

      // Against the single run: both at least the injected latency (minus HDR precision, 0.1 %) …
      const m = report.overall.latency.corrected;
      const s = single.overall.latency.corrected;
      for (const p of [m.p50, m.p99, m.p999, s.p50, s.p99, s.p999]) expect(p).toBeGreaterThanOrEqual(LATENCY_MS * 0.999);
      // … and each merged percentile lies between the parts' (a quantile of a mixture always does),
      // within HDR precision (0.1 %, one bucket's width): what averaging or picking one part's
      // figures would break, whatever the machine's load adds. How close segments come to a single
      // process is a matter of pace: a benchmark's, not a test's.
      for (const key of ['p50', 'p90', 'p99', 'p999'] as const) {
        const own = partReports.map((p) => p.overall.latency.corrected[key]);
        expect(m[key], `${key} of ${own.join(', ')}`).toBeGreaterThanOrEqual(Math.min(...own) * 0.999);
        expect(m[key], `${key} of ${own.join(', ')}`).toBeLessThanOrEqual(Math.max(...own) * 1.001);
      }

      // Invariants clean in every segment, and in the merged report.
      for (const p of partReports) expect(p.invariants?.verdict).toBe('clean');
      expect(report.invariants?.verdict).toBe('clean');

      // A killed segment: its folder has no report; merged with the other three, the report is partial.
      const killedOut = join(dir, 'killed');
      const killed = startCli(['run', ...flags, '--duration', '300s', '--segment', '3/4', '--out', killedOut], env);
      await waitUntil(
        () => runFolders(killedOut).length === 1 && existsSync(join(runFolders(killedOut)[0] as string, 'history.jsonl.gz')),
        'the killed segment to start',
        killed,
      );
      killed.child.kill('SIGKILL');
      await killed.exited;
      const partial = await cli(['merge', ...parts.slice(0, 3), runFolders(killedOut)[0] as string, '--out', join(dir, 'partial')], env);
      expect(partial.code, partial.stderr).toBe(EXIT.mergePartial);
      expect(partial.stderr).toMatch(/has no report\.json.*counts as missing/);
      expect(partial.stderr).toMatch(/PARTIAL: missing segments 3\/4/);
      const partialReport = readReport(join(dir, 'partial'));
      expect(partialReport.merge).toMatchObject({ partial: true, missing: ['3/4'] });
      expect(partialReport.totals.requests).toBe(180);
      expect(readFileSync(join(dir, 'partial', 'report.md'), 'utf8')).toContain('**PARTIAL**');

      server.child.kill('SIGTERM');
      await server.exited;
    },
  );

  test('--start-at in the past, or more than 24 h ahead, is refused before anything runs (exit 2)', async () => {
    const [past, far, bad] = await Promise.all([
      cli(['run', 'smoke', '--segment', '0/2', '--start-at', '2020-01-01T00:00:00Z', '--out', tempDir()]),
      cli(['run', 'smoke', '--start-at', new Date(Date.now() + 48 * 3_600_000).toISOString(), '--out', tempDir()]),
      cli(['run', 'smoke', '--segment', '4/4', '--out', tempDir()]),
    ]);
    expect(past.code).toBe(EXIT.usage);
    expect(past.stderr).toMatch(/--start-at 2020-01-01T00:00:00.000Z is already past/);
    expect(far.code).toBe(EXIT.usage);
    expect(far.stderr).toMatch(/more than 24 h ahead/);
    expect(bad.code).toBe(EXIT.usage);
    expect(bad.stderr).toMatch(/i must be below N/);
  });

  test('--workers 2 runs two segment processes against one embedded simulator and merges them: the whole plan, one report', { timeout: 180_000 }, async () => {
    const out = tempDir();
    // A short start margin: children a busy machine starts after it start late (the next test), which this test allows.
    const result = await cli(
      ['run', 'verify-hot-keys', '--workers', '2', '--rate', '40', '--duration', '2s', '--warmup', '0', '--quiet', '--out', out],
      cleanEnv({ KEYSIM_WORKERS_START_MARGIN: '2s' }),
    );
    expect([EXIT.ok, EXIT.generatorLimited, EXIT.thresholdFailed] as number[], `stdout: ${result.stdout}\nstderr: ${result.stderr}`).toContain(result.code);
    const [folder] = runFolders(out);
    expect(folder).toMatch(/verify-hot-keys-workers-2$/);
    const report = readReport(folder as string);
    expect(report.totals.requests).toBe(80);
    expect(report.merge).toEqual({ segments: 2, merged: ['0/2', '1/2'], missing: [], incomplete: [], partial: false });
    expect(runFolders(join(folder as string, 'segments'))).toHaveLength(2);
    expect(result.stdout).toMatch(/report: .*report\.html/);
  });

  test(
    '--workers children that a busy machine started after the start instant ended the run with exit 2 ("--start-at is already past"): they start late and say so',
    { timeout: 180_000 },
    async () => {
      // A margin of 0 ms: every child starts after the instant, as on a machine too busy for the default margin.
      const out = tempDir();
      const result = await cli(
        ['run', 'verify-hot-keys', '--workers', '2', '--rate', '40', '--duration', '2s', '--warmup', '0', '--quiet', '--out', out],
        cleanEnv({ KEYSIM_WORKERS_START_MARGIN: '0ms' }),
      );
      expect(result.stderr).not.toMatch(/already past/);
      expect([EXIT.ok, EXIT.generatorLimited, EXIT.thresholdFailed] as number[], `stdout: ${result.stdout}\nstderr: ${result.stderr}`).toContain(result.code);
      expect(result.stderr).toMatch(/this segment starts late/);
      const [folder] = runFolders(out);
      expect(readReport(folder as string).merge).toMatchObject({ segments: 2, merged: ['0/2', '1/2'], missing: [] });
      // A mistyped margin is a clear usage error.
      const bad = await cli(['run', 'verify-hot-keys', '--workers', '2', '--quiet', '--out', tempDir()], cleanEnv({ KEYSIM_WORKERS_START_MARGIN: 'soon' }));
      expect(bad.code).toBe(EXIT.usage);
      expect(bad.stderr).toMatch(/KEYSIM_WORKERS_START_MARGIN="soon" is not a duration/);
    },
  );

  test(
    'set-up once: --setup-only writes the fixtures and tag; segments given --fixtures skip the setup and name what they make after that tag',
    { timeout: 180_000 },
    async () => {
      const env = cleanEnv({ KEYSIM_ROOT_KEY: 'root_segments_fixtures_0123456789' });
      const server = startCli(['serve', '--port', '0'], env);
      await waitUntil(() => /listening on (http:\/\/\S+)/.test(server.stdout()), 'the simulator to listen', server);
      const url = (/listening on (http:\/\/\S+)/.exec(server.stdout()) as RegExpExecArray)[1] as string;
      const dir = tempDir();
      const fixtures = join(dir, 'fixtures.json');
      const setup = await cli(['run', 'verify-hot-keys', '--target', url, '--setup-only', '--fixtures', fixtures, '--quiet', '--out', join(dir, 'setup')], env);
      expect(setup.code, setup.stderr).toBe(EXIT.ok);
      const file = JSON.parse(readFileSync(fixtures, 'utf8')) as { schema: string; tag: string; scenario: string; fixtures: unknown };
      expect(file).toMatchObject({ schema: 'keysim-fixtures', scenario: 'verify-hot-keys' });
      expect(setup.stderr).toContain(`keysim cleanup --target ${url} --tag ${file.tag}`);
      const common = [
        'run',
        'verify-hot-keys',
        '--target',
        url,
        '--fixtures',
        fixtures,
        '--rate',
        '20',
        '--duration',
        '1s',
        '--warmup',
        '0',
        '--quiet',
        '--out',
        join(dir, 'parts'),
      ];
      const results = await Promise.all([0, 1].map((i) => cli([...common, '--segment', `${i}/2`], env)));
      for (const r of results) expect([EXIT.ok, EXIT.generatorLimited, EXIT.thresholdFailed] as number[], r.stdout + r.stderr).toContain(r.code);
      const parts = runFolders(join(dir, 'parts')).map(readReport);
      expect(parts.map((p) => p.totals.requests).sort()).toEqual([10, 10]);
      for (const p of parts) {
        // No setup: no keys created by the segment, and the set-up's tag.
        expect(p.resources?.tag).toBe(file.tag);
        expect(p.resources?.kinds.find((k) => k.kind === 'keys')?.created ?? 0).toBe(0);
        expect(p.operations.find((o) => o.operation === 'keys.verifyKey')?.codes.VALID ?? 0).toBeGreaterThan(0);
      }
      const wrongScenario = await cli(['run', 'smoke', '--target', url, '--fixtures', fixtures, '--out', join(dir, 'x')], env);
      expect(wrongScenario.code).toBe(EXIT.usage);
      expect(wrongScenario.stderr).toMatch(/holds the fixtures of "verify-hot-keys", not of "smoke"/);
      server.child.kill('SIGTERM');
      await server.exited;
    },
  );
});
