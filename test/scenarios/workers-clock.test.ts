/**
 * `keysim run mixed --workers 2` on the embedded simulator: mixed asks for a running clock
 * (clockMode 'running'), so that its per-user one-second windows roll; its segments, run as child
 * processes on one shared set-up, must see that clock run. One bounded CLI run; nothing about its
 * pace is asserted. The segments' start margin is a second (KEYSIM_WORKERS_START_MARGIN) instead
 * of 20: a segment a busy machine starts after it starts late and says so, which changes nothing
 * here, and the test no longer waits out 20 s.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, expect, test } from 'vitest';
import { EXIT } from '../../src/cli/exit-codes.js';
import { cleanEnv, cleanUpCli, cli, runFolders, tempDir } from '../helpers/cli.js';

afterAll(() => cleanUpCli());

/** The service-clock readings a history recorded around its requests. */
function serviceTimes(historyFile: string): number[] {
  const lines = gunzipSync(readFileSync(historyFile))
    .toString('utf8')
    .split('\n')
    .filter((l) => l !== '');
  return lines.flatMap((line) => {
    const event = JSON.parse(line) as { serviceInvokeMs?: unknown };
    return typeof event.serviceInvokeMs === 'number' ? [event.serviceInvokeMs] : [];
  });
}

test("mixed --workers 2 runs (its fixtures did not survive JSON) and its segments see the simulator's clock run, as mixed asks", async () => {
  const out = tempDir('keysim-workers-clock-');
  const args = [
    'run',
    'mixed',
    '--workers',
    '2',
    '--duration',
    '3s',
    '--warmup',
    '0',
    '--rate',
    '20',
    '--out',
    out,
    '--history',
    '--quiet',
    '--max-late-share',
    '1',
    '--max-loop-delay',
    'off',
  ];
  const finished = await cli(args, cleanEnv({ KEYSIM_WORKERS_START_MARGIN: '1s' }));
  const shown = `exit ${finished.code}\n${finished.stderr.slice(-3000)}\n${finished.stdout.slice(-2000)}`;
  expect(finished.code, shown).toBe(EXIT.ok);
  const run = runFolders(out)[0] as string;
  const segments = readdirSync(join(run, 'segments')).filter((name) => !name.startsWith('.'));
  expect(segments.length, shown).toBe(2);
  for (const segment of segments) {
    const times = serviceTimes(join(run, 'segments', segment, 'history.jsonl.gz'));
    expect(times.length, segment).toBeGreaterThan(0);
    // Three seconds of load: a frozen clock reads the same instant throughout, a running one moves.
    expect(Math.max(...times) - Math.min(...times), `${segment}: the service clock did not move during its load`).toBeGreaterThanOrEqual(1_000);
  }
});
