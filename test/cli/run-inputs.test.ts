/**
 * Every input of `keysim run` is checked before any load: a usage error exits 2 before anything is
 * sent, names what was wrong and the valid choices, and leaves no run folder. Also: `--out` is
 * checked first (a file, an uncreatable folder, too little space), every requested scenario
 * skipped is a failure, and a refused root key is reported as refused, not as an unreachable URL.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { EXIT } from '../../src/cli/exit-codes.js';
import { type Simulator, createSimulator } from '../../src/http/index.js';
import { cleanEnv, cleanUpCli, cli, runFolders, tempDir } from '../helpers/cli.js';

afterAll(cleanUpCli);

const SHORT = ['--duration', '2s', '--warmup', '0'];

async function usageError(args: string[], message: RegExp): Promise<void> {
  const out = join(tempDir(), 'reports');
  const result = await cli(['run', ...args, '--out', out]);
  expect(result.code, result.stderr).toBe(EXIT.usage);
  expect(result.stderr).toMatch(message);
  expect(runFolders(out)).toEqual([]);
}

describe.concurrent('every input checked before any load (exit 2, nothing sent)', () => {
  test.each([
    [['smoke', '--threshold', 'p99(keys.verify) < 20ms', ...SHORT], /Unknown operation "keys\.verify".*keys\.verifyKey/],
    [['smoke', '--threshold', 'rate(VALIDATED) > 0.5', ...SHORT], /Unknown outcome "VALIDATED".*USAGE_EXCEEDED/],
    [['smoke', '--threshold', 'p98 < 20ms', ...SHORT], /Unknown percentile "p98".*p50, p90, p95, p99, p999/],
    [['smoke', '--duration', '0s'], /--duration must be longer than 0/],
    [['smoke', '--duration', '10'], /--duration "10" has no unit: write e\.g\. 30s, 500ms/],
    [['smoke', '--warmup', '5'], /--warmup "5" has no unit/],
    [['smoke', '--timeout', '0', ...SHORT], /--timeout must be longer than 0.*there is no "no timeout"/],
    [['smoke', '--timeout', '0s', ...SHORT], /--timeout must be longer than 0/],
    [['smoke', '--dead-after', '0s', ...SHORT], /--dead-after must be longer than 0.*"off"/],
    [['smoke', '--model', 'closed', '--rate', '500', ...SHORT], /--rate sets the open model's arrival rate.*Drop --rate, or pass --model open/],
    [['smoke', '--fault', 'errorRate=2', ...SHORT], /--fault: .*errorRate/],
    [['smoke', '--fault', 'nonsense=1', ...SHORT], /unknown key "nonsense".*valid keys/],
  ])('run %j', async (args, message) => {
    await usageError(args, message);
  });

  test('serve refuses a bad --fault and an impossible --start with exit 2, as run does', async () => {
    const fault = await cli(['serve', '--port', '0', '--fault', 'errorRate=2']);
    expect(fault.code, fault.stderr).toBe(EXIT.usage);
    expect(fault.stderr).toMatch(/--fault: .*errorRate/);
    const start = await cli(['serve', '--port', '0', '--start', '2028-02-30']);
    expect(start.code, start.stderr).toBe(EXIT.usage);
    expect(start.stderr).toMatch(/day 30 does not exist in 2028-02/);
  });
});

describe.concurrent('--out is checked before any load', () => {
  test('--out naming a file → exit 2 "is a file, not a folder" (not a misleading EEXIST … mkdir)', async () => {
    const file = join(tempDir(), 'report.txt');
    writeFileSync(file, 'not a folder');
    const result = await cli(['run', 'smoke', '--out', file, ...SHORT]);
    expect(result.code, result.stderr).toBe(EXIT.usage);
    expect(result.stderr).toContain(`--out ${file} is a file, not a folder`);
    expect(result.stderr).not.toMatch(/EEXIST/);
  });

  test('--out under a file → exit 2 naming the file', async () => {
    const file = join(tempDir(), 'plain');
    writeFileSync(file, 'x');
    const result = await cli(['run', 'smoke', '--out', join(file, 'reports'), ...SHORT]);
    expect(result.code, result.stderr).toBe(EXIT.usage);
    expect(result.stderr).toContain(`${file} is a file`);
  });

  test.skipIf(process.platform !== 'linux')('--out /proc/x/reports fails at once with exit 2 (it used to spin forever, deaf to Ctrl-C)', async () => {
    const result = await cli(['run', 'smoke', '--out', '/proc/keysim-nope/reports', ...SHORT]);
    expect(result.signal).toBeNull();
    expect(result.code, result.stderr).toBe(EXIT.usage);
    expect(result.stderr).toMatch(/--out \/proc\/keysim-nope\/reports: the folder \/proc\/keysim-nope cannot be created \(E[A-Z]+\)/);
  });

  test('too little space for the history at the planned rate → exit 2 with the estimate', async () => {
    const out = join(tempDir(), 'reports');
    // 100,000 requests/s for 1,000 hours: petabytes of history, more than any test machine has.
    const result = await cli(['run', 'smoke', '--history', '--rate', '100000', '--duration', '1000h', '--warmup', '0', '--out', out]);
    expect(result.code, result.stderr).toBe(EXIT.usage);
    expect(result.stderr).toMatch(/MiB free in .*, but this run needs about \d+ MiB .*bytes per planned request/);
    expect(runFolders(out)).toEqual([]);
  });
});

describe('what the target says', () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await createSimulator({ seed: 5 });
  });
  afterAll(async () => {
    await sim.close();
  });

  test('a refused root key is reported as refused (exit 3), not as "not reachable … check the URL"', async () => {
    const out = join(tempDir(), 'reports');
    const result = await cli(['run', 'smoke', '--target', sim.url, '--out', out, ...SHORT], cleanEnv({ KEYSIM_ROOT_KEY: 'root_wrong_key_0123456789' }));
    expect(result.code, result.stderr).toBe(EXIT.targetUnreachable);
    expect(result.stderr).toMatch(/answered, but refused the root key \(HTTP 401\)/);
    expect(result.stderr).toMatch(/KEYSIM_ROOT_KEY/);
    expect(result.stderr).not.toMatch(/not reachable|Check the URL/);
    expect(result.stderr).not.toContain('root_wrong_key_0123456789');
    expect(runFolders(out)).toEqual([]);
  });

  test('every requested scenario skipped → no report and a non-zero exit (a QA gate must not go green having tested nothing)', async () => {
    const out = join(tempDir(), 'reports');
    const result = await cli(
      ['run', 'refill-month-end', '--target', 'http://127.0.0.1:1', '--out', out, ...SHORT],
      cleanEnv({ KEYSIM_ROOT_KEY: 'root_cli_test_0123456789' }),
    );
    expect(result.code, result.stderr).toBe(EXIT.usage);
    expect(result.stderr).toMatch(/skipping "refill-month-end"/);
    expect(result.stderr).toMatch(/nothing was tested: every requested scenario was skipped/);
    expect(runFolders(out)).toEqual([]);
  });
});
