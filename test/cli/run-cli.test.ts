/**
 * `keysim run`, `list` and `report` as child processes (the built CLI: test/helpers/cli-build.ts): usage errors
 * exit 2 and say what is valid, an unreachable target exits 3 without writing a report, a failed
 * threshold exits 99 with the three report files written, SIGINT writes a partial report and
 * exits 130. Runs are short (2 s at 50 requests/s against the embedded simulator).
 */
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { afterAll, describe, expect, test } from 'vitest';
import { SCENARIOS } from '../../scenarios/index.js';
import { exitCodeOf } from '../../src/cli/commands/run.js';
import { TARGET_STOPPED_CHECK } from '../../src/load/run/runner.js';
import { EXIT } from '../../src/cli/exit-codes.js';
import { renderJson } from '../../src/report/index.js';
import type { RunReport } from '../../src/report/model.js';
import { cleanEnv, cleanUpCli, cli, runFolders, startCli, tempDir as cliTempDir, waitUntil } from '../helpers/cli.js';
import { minimalReport } from '../helpers/load.js';

afterAll(cleanUpCli);

const tempDir = () => cliTempDir('keysim-run-cli-');

const SHORT = ['--duration', '2s', '--warmup', '0', '--rate', '50'];
const scenarioNames = Object.keys(SCENARIOS);

describe.concurrent('usage errors and listing (no load sent)', () => {
  test('`run nope` → exit 2, naming the valid scenarios', async () => {
    const out = tempDir();
    const result = await cli(['run', 'nope', '--out', out]);
    expect(result.code, result.stderr).toBe(EXIT.usage);
    expect(result.stderr).toContain('"nope"');
    for (const name of scenarioNames) expect(result.stderr).toContain(name);
    expect(runFolders(out)).toEqual([]);
  });

  test('`run smoke --threshold bogus` → exit 2 with the threshold named', async () => {
    const out = tempDir();
    const result = await cli(['run', 'smoke', '--threshold', 'bogus', '--out', out, ...SHORT]);
    expect(result.code, result.stderr).toBe(EXIT.usage);
    expect(result.stderr).toContain('"bogus"');
    expect(runFolders(out)).toEqual([]);
  });

  test('`run smoke --duration soon` → exit 2', async () => {
    const result = await cli(['run', 'smoke', '--duration', 'soon', '--out', tempDir()]);
    expect(result.code, result.stderr).toBe(EXIT.usage);
    expect(result.stderr).toMatch(/--duration "soon"/);
  });

  test('`--skew` where no live history is recorded, or negative → exit 2 (never silently ignored)', async () => {
    const [onSim, negative] = await Promise.all([
      cli(['run', 'smoke', '--history', '--skew', '50', '--out', tempDir()]),
      cli(['run', 'smoke', '--target', 'http://127.0.0.1:9', '--history', '--skew', '-5', '--out', tempDir()]),
    ]);
    expect(onSim.code, onSim.stderr).toBe(EXIT.usage);
    expect(onSim.stderr).toMatch(/--skew bounds a live target's clock skew in the run's history: it needs --history and a URL --target/);
    expect(negative.code, negative.stderr).toBe(EXIT.usage);
    expect(negative.stderr).toMatch(/--skew must be a number of milliseconds ≥ 0, got -5/);
  });

  test('a live loopback target without KEYSIM_ROOT_KEY → exit 2, saying how to give the key', async () => {
    const out = tempDir();
    const result = await cli(['run', 'smoke', '--target', 'http://127.0.0.1:9', '--out', out, ...SHORT]);
    expect(result.code, result.stderr).toBe(EXIT.usage);
    expect(result.stderr).toContain('KEYSIM_ROOT_KEY');
    expect(runFolders(out)).toEqual([]);
  });

  test('an unreachable target → exit 3 and no report folder', async () => {
    const out = join(tempDir(), 'reports');
    const result = await cli(
      ['run', 'smoke', '--target', 'http://127.0.0.1:1', '--out', out, ...SHORT],
      cleanEnv({ KEYSIM_ROOT_KEY: 'root_cli_test_0123456789' }),
    );
    expect(result.code, result.stderr).toBe(EXIT.targetUnreachable);
    expect(result.stderr).toContain('http://127.0.0.1:1');
    expect(result.stderr).toMatch(/not reachable/);
    expect(result.stderr + result.stdout).not.toContain('root_cli_test_0123456789');
    // --out is checked (and created) before any load; no run folder is left in it.
    expect(runFolders(out)).toEqual([]);
  });

  test('a bad generator limit → exit 2 before any load, naming what to write', async () => {
    const out = tempDir();
    const [share, delay] = await Promise.all([
      cli(['run', 'smoke', ...SHORT, '--max-late-share', '5', '--out', out]),
      cli(['run', 'smoke', ...SHORT, '--max-loop-delay', 'soon', '--out', out]),
    ]);
    expect(share.code, share.stderr).toBe(EXIT.usage);
    expect(share.stderr).toContain('--max-late-share must be a share between 0 and 1');
    expect(delay.code, delay.stderr).toBe(EXIT.usage);
    expect(delay.stderr).toContain('--max-loop-delay "soon" is not a duration');
    expect(runFolders(out)).toEqual([]);
  });

  test('a non-loopback target without --yes and no TTY → exit 2 with a message about --yes', async () => {
    const out = tempDir();
    // 192.0.2.0/24 is TEST-NET-1: nothing is ever sent there, the CLI refuses first.
    const result = await cli(
      ['run', 'smoke', '--target', 'http://192.0.2.10:8080', '--out', out, ...SHORT],
      cleanEnv({ KEYSIM_ROOT_KEY: 'root_cli_test_0123456789' }),
    );
    expect(result.code, result.stderr).toBe(EXIT.usage);
    expect(result.stderr).toContain('--yes');
    expect(result.stderr).toContain('192.0.2.10');
    expect(runFolders(out)).toEqual([]);
  });

  test('`--help` names every exit code, 100 for an invariant violated or an oracle difference', async () => {
    const result = await cli(['--help']);
    expect(result.code, result.stderr).toBe(EXIT.ok);
    const help = result.stdout.replace(/\s+/g, ' ');
    expect(help).toContain(`${EXIT.invariantViolated} invariant violated or oracle difference`);
    for (const code of Object.values(EXIT)) expect(help).toMatch(new RegExp(`[:,] ${code} [a-z]`));
  });

  test('`list` prints every scenario', async () => {
    const result = await cli(['list']);
    expect(result.code, result.stderr).toBe(EXIT.ok);
    const lines = result.stdout.trim().split('\n');
    expect(lines).toHaveLength(scenarioNames.length);
    for (const [name, scenario] of Object.entries(SCENARIOS)) {
      expect(lines.some((line) => line.startsWith(`${name} `) && line.includes(scenario.description))).toBe(true);
    }
  });

  test('`report <folder> --format md` prints the report as Markdown', async () => {
    const folder = tempDir();
    const report = minimalReport({ operations: [{ operation: 'keys.verifyKey', latenciesMs: [1, 2, 3, 40], codes: { VALID: 4 } }] });
    writeFileSync(join(folder, 'report.json'), renderJson(report));
    const result = await cli(['report', folder, '--format', 'md']);
    expect(result.code, result.stderr).toBe(EXIT.ok);
    expect(result.stdout).toMatch(/^#/m);
    expect(result.stdout).toContain('fixture');
    expect(result.stdout).toContain('keys.verifyKey');
    expect(result.stdout).not.toMatch(/<html/i);
  });

  test('`report` of a folder without report.json → exit 2', async () => {
    const result = await cli(['report', tempDir(), '--format', 'md']);
    expect(result.code, result.stderr).toBe(EXIT.usage);
    expect(result.stderr).toMatch(/report\.json/);
  });
});

describe('runs against the embedded simulator', () => {
  // Each run has its own embedded simulator and its verdict does not depend on the pace: the first two side by side.
  test.concurrent('a threshold that must fail → exit 99, summary printed, report.json/md/html written', async () => {
    const out = tempDir();
    // Limits no pace can exceed: on a busy machine the generator would otherwise make the latency threshold inconclusive (exit 97).
    const result = await cli(['run', 'smoke', ...SHORT, '--threshold', 'p50 < 0.001ms', '--max-late-share', '1', '--max-loop-delay', 'off', '--out', out]);
    expect(result.code, `stdout: ${result.stdout}\nstderr: ${result.stderr}`).toBe(EXIT.thresholdFailed);
    expect(result.stdout).toContain('FAIL  threshold p50 < 0.001ms');
    const folders = runFolders(out);
    expect(folders).toHaveLength(1);
    const folder = folders[0] as string;
    expect(readdirSync(folder).sort()).toEqual(['hgrm', 'report.html', 'report.json', 'report.md']);
    const report = JSON.parse(readFileSync(join(folder, 'report.json'), 'utf8')) as RunReport;
    expect(report.status).toBe('completed');
    expect(report.scenario.name).toBe('smoke');
    expect(report.settings).toMatchObject({ rate: 50, durationMs: 2_000, warmupMs: 0 });
    expect(report.totals.requests).toBe(100);
    expect(report.thresholds).toContainEqual(expect.objectContaining({ expression: 'p50 < 0.001ms', passed: false }));
    // Markdown escapes the `<`.
    expect(readFileSync(join(folder, 'report.md'), 'utf8')).toMatch(/p50 \\?< 0\.001ms/);
    expect(readFileSync(join(folder, 'report.html'), 'utf8')).toMatch(/<html/i);
  });

  test.concurrent(
    'a generator that could not keep its schedule and a threshold its lag may explain → exit 97 (not 99), a banner at the top of the summary, report.md and report.html',
    async () => {
      const out = tempDir();
      // A loop-delay limit of 0 ms: timers never fire to the nanosecond, so the generator is over it on
      // any machine. A throughput threshold that fails has no figure free of the lag: inconclusive
      // whatever the machine's pace (a latency one could be failed over the sends made on time).
      const result = await cli([
        'run',
        'smoke',
        ...SHORT,
        '--threshold',
        'rps > 1000000',
        '--threshold',
        'errors == 0',
        '--threshold',
        'p99 < 3600s',
        '--max-loop-delay',
        '0ms',
        '--out',
        out,
      ]);
      expect(result.code, `stdout: ${result.stdout}\nstderr: ${result.stderr}`).toBe(EXIT.generatorLimited);
      expect(result.stdout.split('\n')[0]).toMatch(/^!!! INCONCLUSIVE — the load generator was the bottleneck/);
      expect(result.stdout).toContain('INCONCLUSIVE  threshold rps > 1000000');
      // A latency threshold the lag can only have made worse that passes is passed.
      expect(result.stdout).toContain('pass  threshold p99 < 3600s');
      expect(result.stdout).toContain('pass  threshold errors == 0');
      const folder = runFolders(out)[0] as string;
      const report = JSON.parse(readFileSync(join(folder, 'report.json'), 'utf8')) as RunReport;
      expect(report.generator).toMatchObject({ limited: true, limits: { loopDelayP99Ms: 0 } });
      const markdown = readFileSync(join(folder, 'report.md'), 'utf8');
      expect(markdown.indexOf('INCONCLUSIVE')).toBeLessThan(markdown.indexOf('## Totals'));
      const html = readFileSync(join(folder, 'report.html'), 'utf8');
      expect(html.indexOf('banner inconclusive')).toBeGreaterThan(0);
      expect(html.indexOf('banner inconclusive')).toBeLessThan(html.indexOf('class="cards"'));
    },
  );

  test('SIGINT during the load → exit 130 well before the planned end, and a report.json marked interrupted', async () => {
    const out = tempDir();
    const running = startCli(['run', 'credits-drain', '--duration', '20s', '--warmup', '0', '--rate', '50', '--out', out]);
    const loadStarted = /phase "[^"]+": \d+ requests/;
    await waitUntil(() => loadStarted.test(running.stderr()) || loadStarted.test(running.stdout()), 'the load phase to start', running, 30_000);
    await new Promise((resolve) => setTimeout(resolve, 700));
    const signalledAt = performance.now();
    running.child.kill('SIGINT');
    const result = await running.exited;
    const tookMs = performance.now() - signalledAt;

    expect(result.code, `stdout: ${result.stdout}\nstderr: ${result.stderr}`).toBe(EXIT.interrupted);
    // Stopped, not run to its end (the plan had 19 s left); how fast (~2 s) is the machine's pace, not asserted.
    expect(tookMs).toBeLessThan(10_000);
    expect(result.stderr).toMatch(/SIGINT/);
    const folders = runFolders(out);
    expect(folders).toHaveLength(1);
    const report = JSON.parse(readFileSync(join(folders[0] as string, 'report.json'), 'utf8')) as RunReport;
    expect(report.status).toBe('interrupted');
    expect(report.totals.requests).toBeGreaterThan(0);
    expect(report.totals.requests).toBeLessThan(1_000);
    // The late share counts the sends that came due before the stop, not the 1,000 planned.
    const phase = report.generator?.phases[0];
    expect(phase?.scheduledSends).toBeLessThan(1_000);
    expect(phase?.scheduledSends).toBeGreaterThanOrEqual(report.totals.requests);
  });
});

describe('exitCodeOf: the worst outcome wins', () => {
  const base = minimalReport({ operations: [{ operation: 'keys.verifyKey', latenciesMs: [1] }] });
  const failedCheck: RunReport['checks'] = [{ name: 'c', passed: false, detail: '' }];
  const failedThreshold: RunReport['thresholds'] = [{ expression: 'p99 < 1ms', passed: false, actual: 2, detail: '' }];
  const leftBehind: NonNullable<RunReport['resources']> = {
    tag: 'keysim-t-1',
    disposal: 'cleaned',
    kinds: [{ kind: 'keys', created: 2, deleted: 0, left: 2, leftExpected: 0 }],
    unexpectedlyLeft: 2,
    notes: [],
  };
  const violated = { verdict: 'violated', invariants: [], violations: [] } as unknown as NonNullable<RunReport['invariants']>;

  test.each<[string, RunReport, number]>([
    [
      'all passed',
      { ...base, checks: [{ name: 'c', passed: true, detail: '' }], thresholds: [{ expression: 'errors == 0', passed: true, actual: 0, detail: '' }] },
      EXIT.ok,
    ],
    ['a threshold failed', { ...base, thresholds: failedThreshold }, EXIT.thresholdFailed],
    ['a check failed', { ...base, checks: failedCheck }, EXIT.checkFailed],
    ['a check and a threshold failed', { ...base, checks: failedCheck, thresholds: failedThreshold }, EXIT.checkFailed],
    ['interrupted, with failures', { ...base, status: 'interrupted', checks: failedCheck, thresholds: failedThreshold }, EXIT.interrupted],
    ['resources left and an invariant violated', { ...base, resources: leftBehind, invariants: violated }, EXIT.resourcesLeft],
    // A dead target left its resources behind as a consequence: the outage is the finding.
    [
      'the target stopped answering and left resources behind',
      { ...base, checks: [{ name: TARGET_STOPPED_CHECK, passed: false, detail: '' }], resources: leftBehind },
      EXIT.targetStopped,
    ],
  ])('%s', (_name, report, code) => {
    expect(exitCodeOf(report)).toBe(code);
  });

  test('the codes are distinct', () => {
    expect(new Set(Object.values(EXIT)).size).toBe(Object.keys(EXIT).length);
    expect(EXIT).toMatchObject({ usage: 2, targetUnreachable: 3, checkFailed: 98, thresholdFailed: 99, interrupted: 130 });
  });
});
