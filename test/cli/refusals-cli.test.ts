/**
 * The exit codes of the refusals before any load (test/load/refusals.test.ts has the runner's
 * side): a misspelt operation in a scenario file, and a scenario that moves the clock against a
 * keysim serve whose clock runs, both exit 2 (usage) with the fix in the message, no report.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, expect, test } from 'vitest';
import { cleanUpCli, cli, runFolders, tempDir } from '../helpers/cli.js';
import { keysOn, serveCli } from '../helpers/serve-cli.js';

afterAll(() => cleanUpCli());

const KEYSIM = pathToFileURL(join(import.meta.dirname, '../../src/index.ts')).href;
const QUICK = ['--duration', '1s', '--warmup', '0', '--rate', '10', '--quiet', '--max-late-share', '1', '--max-loop-delay', 'off'];

test('a scenario file with a misspelt operation (keys.verifyKye) exits 2 before any load, saying "did you mean keys.verifyKey?"', async () => {
  const dir = tempDir('keysim-refusals-');
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, 'typo.ts'),
    `import { createKey, createTaggedApi, defineScenario } from '${KEYSIM}';
export default defineScenario({
  name: 'typo',
  description: 'a misspelt operation',
  async setup(ctx) { return createKey(ctx, { apiId: await createTaggedApi(ctx, 'x') }); },
  mix: [{ weight: 1, build: (f) => ({ op: 'keys.verifyKye', body: { key: f.key } }) }],
});
`,
  );
  const out = join(dir, 'reports');
  const ran = await cli(['run', join(dir, 'typo.ts'), ...QUICK, '--out', out]);
  expect(ran.code).toBe(2);
  expect(ran.stderr).toContain('unknown operation "keys.verifyKye" (did you mean keys.verifyKey?)');
  expect(runFolders(out)).toEqual([]);
}, 120_000);

test('refill-month-end against a running-clock keysim serve exits 2 before setup, with how to run it; the server keeps its clock and holds no key', async () => {
  const rootKey = 'root_refusal_1234567890';
  const served = await serveCli(rootKey);
  try {
    const clockOf = async () => {
      const res = await fetch(`${served.url}/_sim/clock.get`, {
        method: 'POST',
        headers: { authorization: `Bearer ${rootKey}`, 'content-type': 'application/json' },
        body: '{}',
      });
      return ((await res.json()) as { data: { nowMs: number; mode: string } }).data;
    };
    const before = await clockOf();
    const out = join(tempDir('keysim-refusals-'), 'reports');
    const ran = await cli(['run', 'refill-month-end', '--target', served.url, '--yes', ...QUICK, '--out', out], served.env);
    expect(ran.code).toBe(2);
    expect(ran.stderr).toMatch(
      /refill-month-end" was refused at its start: it moves the service clock, which needs a frozen \(manual\) clock.*nothing was sent.*--clock manual/,
    );
    const after = await clockOf();
    expect(after.mode).toBe('system');
    // Real time only: the scenario would have set it to 2027 or later, years from now.
    expect(after.nowMs - before.nowMs).toBeLessThan(120_000);
    expect(await keysOn(served.url, rootKey)).toBe(0);
    expect(runFolders(out)).toEqual([]);
  } finally {
    await served.stop();
  }
}, 180_000);
