/**
 * Keys that the segments' own load creates are torn down (resource-handover.ts,
 * docs/distributed.md#set-up-once): a scenario whose load creates keys, in an API not named after
 * the run's tag (so that nothing but the segments' ledgers can find them), against `keysim serve`
 * (real process, port 0). `run --workers 2` leaves none of them; segments run with their own
 * reports folders (as on several machines) leave them to `keysim cleanup --resources`. The keys
 * left are counted in the simulator's snapshot. No pace is assumed: nothing is timed.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, test } from 'vitest';
import { EXIT } from '../../src/cli/exit-codes.js';
import { RESOURCES_FILE, type ResourcesFile } from '../../src/load/resources/resource-handover.js';
import type { RunReport } from '../../src/report/model.js';
import { cleanUpCli, cli, runFolders, tempDir } from '../helpers/cli.js';
import { keysOn, serveCli } from '../helpers/serve-cli.js';

afterAll(cleanUpCli);

const KEYSIM = pathToFileURL(join(import.meta.dirname, '../../src/index.ts')).href;
const readReport = (folder: string) => JSON.parse(readFileSync(join(folder, 'report.json'), 'utf8')) as RunReport;
const judged: number[] = [EXIT.ok, EXIT.generatorLimited, EXIT.thresholdFailed];
const QUICK = ['--rate', '10', '--duration', '1s', '--warmup', '0', '--quiet', '--yes', '--max-late-share', '1', '--max-loop-delay', 'off'];

/** A scenario whose every request creates a key, in an API whose name does not start with the tag. */
function loadCreatesKeys(dir: string): string {
  const file = join(dir, 'load-creates-keys.ts');
  writeFileSync(
    file,
    `import { defineScenario } from '${KEYSIM}';
export default defineScenario({
  name: 'load-creates-keys',
  description: 'each request creates a key',
  async setup(ctx) {
    const { apiId } = await ctx.api.data('apis.createApi', { name: 'untagged-api' });
    return { apiId };
  },
  mix: [{ weight: 1, build: (f) => ({ op: 'keys.createKey', body: { apiId: f.apiId } }) }],
});
`,
  );
  return file;
}

const readResources = (folder: string) => JSON.parse(readFileSync(join(folder, RESOURCES_FILE), 'utf8')) as ResourcesFile;

describe("what the segments' load creates", () => {
  test('run --workers 2: the teardown deletes the keys the workers created', { timeout: 300_000 }, async () => {
    const rootKey = 'root_workers_resources_0123456789';
    const served = await serveCli(rootKey);
    const { url, stop } = served;
    // A short start margin for the workers: one that a busy machine started after it starts late and says so.
    const env = { ...served.env, KEYSIM_WORKERS_START_MARGIN: '2s' };
    const dir = tempDir();
    const scenario = loadCreatesKeys(dir);
    const out = join(dir, 'reports');
    const result = await cli(['run', scenario, '--workers', '2', '--target', url, ...QUICK, '--out', out], env);
    expect(judged, result.stdout + result.stderr).toContain(result.code);
    const [folder] = runFolders(out);
    const segments = runFolders(join(folder as string, 'segments'));
    expect(segments).toHaveLength(2);
    // Each worker handed its keys over: ids only, under the set-up's tag.
    const handed = segments.map(readResources);
    const setUp = readReport(join(folder as string, 'setup'));
    const created = handed.reduce((n, f) => n + f.open.filter((e) => e.kind === 'keys').length, 0);
    expect(created).toBeGreaterThan(0);
    for (const f of handed) {
      expect(f.tag).toBe(setUp.resources?.tag);
      for (const e of f.open) expect(Object.keys(e).sort()).toEqual(e.kind === 'overrides' ? ['id', 'kind', 'namespace'] : ['id', 'kind']);
    }
    // The one teardown deleted them with the set-up's resources: the simulator holds no key.
    expect(setUp.resources?.kinds.find((k) => k.kind === 'keys')).toMatchObject({ created, deleted: created, left: 0 });
    expect(await keysOn(url, rootKey)).toBe(0);
    expect(readReport(folder as string).totals.requests).toBe(10);
    await stop();
  });

  test('segments on several machines: keysim cleanup --resources deletes the keys their load created', { timeout: 300_000 }, async () => {
    const rootKey = 'root_cleanup_resources_0123456789';
    const { url, env, stop } = await serveCli(rootKey);
    const dir = tempDir();
    const scenario = loadCreatesKeys(dir);
    const fixtures = join(dir, 'fixtures.json');
    const setup = await cli(['run', scenario, '--target', url, '--setup-only', '--fixtures', fixtures, '--quiet', '--out', join(dir, 'setup')], env);
    expect(setup.code, setup.stderr).toBe(EXIT.ok);
    const tag = (JSON.parse(readFileSync(fixtures, 'utf8')) as { tag: string }).tag;
    // Each segment its own reports folder, as on two machines: no ledger in common.
    const results = await Promise.all(
      [0, 1].map((i) =>
        cli(['run', scenario, '--target', url, '--fixtures', fixtures, ...QUICK, '--segment', `${i}/2`, '--out', join(dir, `machine${i}`)], env),
      ),
    );
    for (const r of results) expect(judged, r.stdout + r.stderr).toContain(r.code);
    const parts = [0, 1].flatMap((i) => runFolders(join(dir, `machine${i}`)));
    expect(parts).toHaveLength(2);
    for (const p of parts) expect(existsSync(join(p, RESOURCES_FILE))).toBe(true);
    const keysMade = parts.reduce((n, p) => n + readResources(p).open.filter((e) => e.kind === 'keys').length, 0);
    expect(keysMade).toBeGreaterThan(0);
    expect(await keysOn(url, rootKey)).toBe(keysMade);

    // The set-up's ledger alone cannot find them: the API does not list keys, and theirs is not named after the tag.
    const alone = await cli(['cleanup', '--target', url, '--tag', tag, '--out', join(dir, 'setup'), '--dry-run'], env);
    expect(alone.code, alone.stderr).toBe(EXIT.ok);
    expect(alone.stdout).not.toMatch(/would delete [^\n]*\bkeys?\b/);
    // A file of another run is refused before anything is deleted.
    const other = join(dir, 'other.json');
    writeFileSync(other, JSON.stringify({ ...readResources(parts[0] as string), tag: 'keysim-20990101T000000-1' }));
    const refused = await cli(['cleanup', '--target', url, '--tag', tag, '--out', join(dir, 'setup'), '--resources', other], env);
    expect(refused.code).toBe(EXIT.usage);
    expect(refused.stderr).toContain('lists what run keysim-20990101T000000-1 created');
    expect(await keysOn(url, rootKey)).toBe(keysMade);

    const cleanup = await cli(['cleanup', '--target', url, '--tag', tag, '--out', join(dir, 'setup'), '--resources', ...parts], env);
    expect(cleanup.code, cleanup.stdout + cleanup.stderr).toBe(EXIT.ok);
    expect(cleanup.stdout).toMatch(new RegExp(`Deleted from [^\\n]*${keysMade} keys`));
    expect(await keysOn(url, rootKey)).toBe(0);
    await stop();
  });
});
