/**
 * The outputs of `keysim run` for CI and dashboards, through the CLI: `--junit` and `--series`
 * over several scenarios in one invocation, the `.hgrm` files of each run folder, and the
 * `--metrics` endpoint scraped during a real run (polled until its counters move: no pace
 * assumed), its exposition parsed line by line. Bad flags exit 2 before any load.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { type Server, createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { EXIT } from '../../src/cli/exit-codes.js';
import type { RunReport } from '../../src/report/model.js';
import type { SeriesLine } from '../../src/report/series.js';
import { LATENCY_BUCKETS_S } from '../../src/load/metrics/metrics-endpoint.js';
import { cleanUpCli, cli, runFolders, startCli, tempDir as cliTempDir, waitUntil } from '../helpers/cli.js';
import { findAll, parseXml } from '../helpers/xml.js';
import { parseExposition } from '../helpers/prometheus.js';

afterAll(cleanUpCli);

const tempDir = () => cliTempDir('keysim-outputs-cli-');
// Limits no pace can exceed: a busy machine must not turn the verdicts into exit 97.
const CALM = ['--max-late-share', '1', '--max-loop-delay', 'off', '--warmup', '0', '--rate', '40'];

describe.concurrent('bad output flags exit 2 before any load', () => {
  test.each([
    ['127.0.0.1', /--metrics takes HOST:PORT/],
    ['127.0.0.1:99999', /The port must be 0–65535/],
    ['http://127.0.0.1:9464', /--metrics takes HOST:PORT/],
    ['203.0.113.7:0', /cannot listen there: that address is not one of this machine's/],
  ])('--metrics %s → exit 2', async (address, message) => {
    const out = tempDir();
    const result = await cli(['run', 'smoke', '--duration', '1s', ...CALM, '--out', out, '--metrics', address]);
    expect(result.code, result.stderr).toBe(EXIT.usage);
    expect(result.stderr).toMatch(message);
    expect(runFolders(out)).toEqual([]);
  });

  test('--metrics on a port already in use → exit 2, naming the fix', async () => {
    const busy: Server = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    try {
      const port = (busy.address() as { port: number }).port;
      const out = tempDir();
      const result = await cli(['run', 'smoke', '--duration', '1s', ...CALM, '--out', out, '--metrics', `127.0.0.1:${port}`]);
      expect(result.code, result.stderr).toBe(EXIT.usage);
      expect(result.stderr).toMatch(/the port is in use \(choose another, or 0 for any free port\)/);
      expect(runFolders(out)).toEqual([]);
    } finally {
      busy.close();
    }
  });

  test('--junit into a folder that does not exist, --series naming a folder → exit 2', async () => {
    const out = tempDir();
    const [junit, series] = await Promise.all([
      cli(['run', 'smoke', '--duration', '1s', ...CALM, '--out', out, '--junit', join(out, 'missing', 'junit.xml')]),
      cli(['run', 'smoke', '--duration', '1s', ...CALM, '--out', out, '--series', out]),
    ]);
    expect(junit.code, junit.stderr).toBe(EXIT.usage);
    expect(junit.stderr).toMatch(/--junit .*junit\.xml: its folder .* does not exist/);
    expect(series.code, series.stderr).toBe(EXIT.usage);
    expect(series.stderr).toMatch(/--series .* is a folder, not a file/);
    expect(runFolders(out)).toEqual([]);
  });
});

describe('outputs of real runs', () => {
  test('two scenarios in one invocation: one JUnit suite and one series run each, a failing threshold a failure; .hgrm files in each run folder', async () => {
    const out = tempDir();
    const junitFile = join(out, 'junit.xml');
    const seriesFile = join(out, 'series.ndjson');
    const result = await cli([
      'run',
      'smoke',
      'mixed',
      '--duration',
      '2s',
      ...CALM,
      '--threshold',
      'p50 < 0.001ms',
      '--out',
      out,
      '--junit',
      junitFile,
      '--series',
      seriesFile,
    ]);
    expect(result.code, `stdout: ${result.stdout}\nstderr: ${result.stderr}`).toBe(EXIT.thresholdFailed);
    const folders = runFolders(out)
      .filter((f) => !f.endsWith('.xml') && !f.endsWith('.ndjson'))
      .sort();
    expect(folders).toHaveLength(2);
    const reports = folders.map((f) => JSON.parse(readFileSync(join(f, 'report.json'), 'utf8')) as RunReport);

    const root = parseXml(readFileSync(junitFile, 'utf8'));
    const suites = findAll(root, 'testsuite');
    expect(suites.map((s) => s.attributes.name)).toEqual(['keysim smoke', 'keysim mixed']);
    for (const [i, suite] of suites.entries()) {
      const report = reports[i] as RunReport;
      const cases = suite.children.filter((c) => c.name === 'testcase');
      expect(cases).toHaveLength(report.thresholds.length + report.checks.length);
      const p50 = cases.find((c) => c.attributes.name === 'p50 < 0.001ms');
      expect(p50?.children[0]?.name).toBe('failure');
      expect(p50?.children[0]?.attributes.message).toMatch(/^p50 < 0\.001ms: measured [\d.]+ ms$/);
    }
    expect(Number(root.attributes.failures)).toBeGreaterThanOrEqual(2);

    const lines = readFileSync(seriesFile, 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as SeriesLine);
    for (const [i, folder] of folders.entries()) {
      const report = reports[i] as RunReport;
      const mine = lines.filter((l) => l.run === folder.slice(out.length + 1));
      expect(mine.map((l) => l.second)).toEqual(report.timeline.map((p) => p.second));
      expect(mine.every((l) => l.scenario === report.scenario.name)).toBe(true);
      expect(mine.reduce((s, l) => s + l.requests, 0)).toBe(report.totals.requests);
      const hgrm = readdirSync(join(folder, 'hgrm')).sort();
      expect(hgrm).toContain('all.hgrm');
      for (const op of report.operations) if (op.latency.corrected.count > 0) expect(hgrm).toContain(`${op.operation}.hgrm`);
      const all = readFileSync(join(folder, 'hgrm', 'all.hgrm'), 'utf8');
      expect(all).toMatch(new RegExp(`#\\[Max {5}= +[\\d.]+, Total count {4}= +${report.overall.latency.corrected.count}\\]`));
    }
  });

  test('--junit on a full disk (/dev/full): the message names the file and why, exit 1, the report itself saved', async () => {
    const out = tempDir();
    const result = await cli(['run', 'smoke', '--duration', '1s', ...CALM, '--out', out, '--junit', '/dev/full']);
    expect(result.code, result.stderr).toBe(EXIT.failure);
    expect(result.stderr).toMatch(/Writing \/dev\/full failed: ENOSPC \(no space left on the device/);
    const [folder] = runFolders(out);
    expect(existsSync(join(folder ?? '', 'report.json'))).toBe(true);
  });

  test('--metrics: scraped during a run, the counters move, every line is valid exposition; closed at the end', async () => {
    const out = tempDir();
    const junitFile = join(out, 'junit.xml');
    // Long enough never to end by itself before the scrapes; stopped with SIGINT once they are done.
    const running = startCli(['run', 'smoke', '--duration', '60s', ...CALM, '--out', out, '--metrics', '127.0.0.1:0', '--junit', junitFile]);
    const urlPattern = /metrics: (http:\/\/127\.0\.0\.1:\d+\/metrics)/;
    await waitUntil(() => urlPattern.test(running.stderr()), 'the metrics URL', running);
    const url = urlPattern.exec(running.stderr())?.[1] as string;
    // Polled until the counters move: how soon is the machine's pace, not asserted.
    const deadline = Date.now() + 60_000;
    for (;;) {
      if (running.child.exitCode !== null) throw new Error(`the run ended before its counters moved: ${running.stderr()}`);
      const samples = parseExposition(await (await fetch(url)).text()).samples.filter((s) => s.name === 'keysim_requests_total');
      if (samples.reduce((sum, s) => sum + s.value, 0) > 0) break;
      if (Date.now() > deadline) throw new Error('the request counter never moved');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const response = await fetch(url);
    expect(response.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    const exposition = parseExposition(await response.text());
    expect(exposition.types).toEqual({
      keysim_requests_total: 'counter',
      keysim_errors_total: 'counter',
      keysim_request_duration_seconds: 'histogram',
      keysim_run_active: 'gauge',
    });
    const run = runFolders(out)[0]?.slice(out.length + 1);
    const active = exposition.samples.find((s) => s.name === 'keysim_run_active');
    expect(active?.labels).toEqual({ run, scenario: 'smoke' });
    expect(active?.value).toBe(1);
    const operations = new Set(exposition.samples.filter((s) => s.name === 'keysim_requests_total').map((s) => s.labels.operation));
    expect(operations.size).toBeGreaterThan(0);
    for (const operation of operations) {
      const of = (name: string) => exposition.samples.filter((s) => s.name === name && s.labels.operation === operation);
      for (const s of of('keysim_requests_total')) expect(s.labels).toEqual({ run, scenario: 'smoke', operation });
      const buckets = of('keysim_request_duration_seconds_bucket');
      expect(buckets.map((b) => b.labels.le)).toEqual([...LATENCY_BUCKETS_S.map(String), '+Inf']);
      // Cumulative: never decreasing, +Inf equal to _count, _sum positive when anything was answered.
      for (let i = 1; i < buckets.length; i++) expect(buckets[i]?.value).toBeGreaterThanOrEqual(buckets[i - 1]?.value ?? 0);
      const count = of('keysim_request_duration_seconds_count')[0]?.value;
      expect(buckets[buckets.length - 1]?.value).toBe(count);
      const sum = of('keysim_request_duration_seconds_sum')[0]?.value ?? -1;
      expect(sum).toBeGreaterThanOrEqual(0);
      if ((count ?? 0) > 0) expect(sum).toBeGreaterThan(0);
      expect(count).toBeLessThanOrEqual(of('keysim_requests_total')[0]?.value ?? -1);
    }
    expect((await fetch(url.replace('/metrics', '/other'))).status).toBe(404);

    running.child.kill('SIGINT');
    const result = await running.exited;
    expect(result.code, result.stderr).toBe(EXIT.interrupted);
    // The endpoint went with the run.
    await expect(fetch(url)).rejects.toThrow();
    // The partial run is an error in the JUnit file, never green.
    const suite = findAll(parseXml(readFileSync(junitFile, 'utf8')), 'testsuite')[0];
    expect(suite?.attributes.errors).toBe('1');
    expect(existsSync(join(out, run ?? '', 'report.json'))).toBe(true);
  });
});
