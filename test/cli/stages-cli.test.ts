/**
 * `keysim run --stage`: every malformed or contradictory stage is a usage error (exit 2) before
 * anything is sent, naming what was wrong; a small staged run records its stages in report.json.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { EXIT } from '../../src/cli/exit-codes.js';
import { cleanUpCli, cli, runFolders, tempDir } from '../helpers/cli.js';

afterAll(cleanUpCli);

async function usageError(args: string[], message: RegExp): Promise<void> {
  const out = join(tempDir(), 'reports');
  const result = await cli(['run', ...args, '--no-config', '--out', out]);
  expect(result.code, result.stderr).toBe(EXIT.usage);
  expect(result.stderr).toMatch(message);
  expect(runFolders(out)).toEqual([]);
}

describe.concurrent('--stage is checked before any load (exit 2)', () => {
  test.each([
    [['smoke', '--stage', '30s'], /--stage "30s" is not a stage: write DURATION:TARGET/],
    [['smoke', '--stage', '30:100'], /the duration "30" has no unit/],
    [['smoke', '--stage', 'soon:100'], /"soon" is not a duration/],
    [['smoke', '--stage', '10s:-5'], /target rate must be 0 or more/],
    [['smoke', '--stage', '10s:many'], /"many" is not a rate/],
    [['smoke', '--stage', '0s:100', '--stage', '0s:0'], /the stages last no time in total/],
    [['smoke', '--stage', '10s:100', '--rate', '50'], /--stage sets both the rate and the duration.*drop --rate/],
    [['smoke', '--stage', '10s:100', '--duration', '5s'], /--stage sets both the rate and the duration.*drop --duration/],
    [['smoke', '--stage', '10s:100', '--model', 'closed'], /Stages ramp the open model's arrival rate.*Pass --model open, or drop the stages/],
    [['smoke', '--start-rate', '10', '--duration', '2s'], /--start-rate is the rate the first stage ramps from: it needs stages/],
    [['smoke', '--stage', '1s:10', '--start-rate', '-1'], /start rate must be 0 or more/],
  ])('run %j', async (args, message) => {
    await usageError(args, message);
  });
});

describe('a staged run from the command line', () => {
  test('plans the integral of the stages and records them in report.json', async () => {
    const out = join(tempDir(), 'reports');
    const result = await cli(['run', 'smoke', '--no-config', '--quiet', '--stage', '1s:20', '--stage', '500ms:20', '--stage', '1s:0', '--out', out]);
    // 97: the generator was judged late on a busy machine — the counts still hold.
    expect([EXIT.ok, EXIT.generatorLimited], result.stderr).toContain(result.code);
    const [folder] = runFolders(out);
    const report = JSON.parse(readFileSync(join(folder as string, 'report.json'), 'utf8')) as {
      settings: { stages: unknown; startRate: number; durationMs: number; warmupMs: number };
      totals: { requests: number; dropped: number };
      phases: Array<{ name: string; stages?: unknown }>;
    };
    expect(report.settings.stages).toEqual([
      { durationMs: 1000, target: 20 },
      { durationMs: 500, target: 20 },
      { durationMs: 1000, target: 0 },
    ]);
    expect(report.settings).toMatchObject({ startRate: 0, durationMs: 2500, warmupMs: 0 });
    // 10 + 10 + 10, no warm-up: stages reset the scenario's warm-up to none.
    expect(report.totals.requests + report.totals.dropped).toBe(30);
    expect(report.phases.map((p) => p.name)).toEqual(['load']);
    expect(readFileSync(join(folder as string, 'report.md'), 'utf8')).toContain('Stages of load');
  });
});
