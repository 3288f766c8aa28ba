/**
 * Scenario files from the sources (the packed flow is test/package/outside-project.test.ts):
 * globs, the checks of what a file exports, `clock.startAt`, and sweeps into the past refused
 * before setup.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, test } from 'vitest';
import { expandGlob, globRegExp } from '../../src/cli/glob.js';
import { requireAdmin } from '../../src/load/scenario/scenario-clock.js';
import { scenarioProblems } from '../../src/load/run/scenario-validate.js';
import { cleanUpCli, cli, runFolders, tempDir } from '../helpers/cli.js';

afterAll(() => cleanUpCli());

const KEYSIM = pathToFileURL(join(import.meta.dirname, '../../src/index.ts')).href;
const QUICK = ['--duration', '1s', '--warmup', '0', '--rate', '10', '--quiet', '--max-late-share', '1', '--max-loop-delay', 'off'];

function project(files: Record<string, string>): string {
  const dir = tempDir('keysim-files-');
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), text.replaceAll("'keysim'", `'${KEYSIM}'`));
  }
  return dir;
}

const verifyScenario = (name: string, extra = '') => `import { createKey, createTaggedApi, defineScenario } from 'keysim';
export default defineScenario({
  name: '${name}',
  description: 'verifies one key',
  ${extra}
  async setup(ctx) { return createKey(ctx, { apiId: await createTaggedApi(ctx, 'x') }); },
  mix: [{ weight: 1, build: (f) => ({ op: 'keys.verifyKey', body: { key: f.key } }) }],
});
`;

describe('globs', () => {
  test('*, ** and ? match as documented', () => {
    expect(globRegExp('checks/*.ts').test('checks/a.ts')).toBe(true);
    expect(globRegExp('checks/*.ts').test('checks/sub/a.ts')).toBe(false);
    expect(globRegExp('checks/**/*.ts').test('checks/a.ts')).toBe(true);
    expect(globRegExp('checks/**/*.ts').test('checks/x/y/a.ts')).toBe(true);
    expect(globRegExp('a?.ts').test('ab.ts')).toBe(true);
    expect(globRegExp('a?.ts').test('a/.ts')).toBe(false);
    expect(globRegExp('a.ts').test('abts')).toBe(false);
  });

  test('expandGlob walks from the fixed prefix, skipping node_modules, sorted', () => {
    const dir = project({ 'c/b.ts': '', 'c/a.ts': '', 'c/sub/d.ts': '', 'c/node_modules/e.ts': '', 'c/f.js': '' });
    expect(expandGlob('c/*.ts', dir)).toEqual(['c/a.ts', 'c/b.ts']);
    expect(expandGlob('c/**/*.ts', dir)).toEqual(['c/a.ts', 'c/b.ts', 'c/sub/d.ts']);
    expect(expandGlob(`${dir}/c/?.js`)).toEqual([`${dir}/c/f.js`]);
  });
});

describe('what a file exports', () => {
  test('scenarioProblems names each missing or wrong field', () => {
    expect(scenarioProblems(42)[0]).toContain('is not a scenario object');
    expect(scenarioProblems({ name: 'x', setup: async () => ({}), mix: [] })).toEqual(['has an empty mix: give it at least one { weight, build } entry']);
    expect(scenarioProblems({ name: 'x', mix: [{ weight: 0 }] })).toEqual([
      'has no setup function (async setup(ctx) { … return fixtures; })',
      'mix[0].weight must be a number > 0',
      'mix[0] has no build function',
    ]);
    expect(
      scenarioProblems({ name: 'x', setup: async () => ({}), mix: [{ weight: 1, build: () => ({}) }], thresholds: ['p99 <'], clock: { startAt: 'soon' } }),
    ).toHaveLength(2);
    expect(scenarioProblems({ name: 'x', description: 'd', setup: async () => ({}), mix: [{ weight: 1, build: () => ({}) }] })).toEqual([]);
  });

  test('requireAdmin on a live target says why and what to declare', () => {
    expect(() => requireAdmin({ admin: undefined }, 'leap-refill')).toThrow(
      /leap-refill moves the service clock, which only the simulator allows.*requires: \['clock'\]/,
    );
  });

  test('two scenarios of one name in one run exit 2 before any load, naming both files', async () => {
    const dir = project({ 'a.ts': verifyScenario('same'), 'b.ts': verifyScenario('same') });
    const out = join(dir, 'reports');
    const ran = await cli(['run', join(dir, 'a.ts'), join(dir, 'b.ts'), ...QUICK, '--out', out]);
    expect(ran.code).toBe(2);
    expect(ran.stderr).toContain('Two scenarios are named "same"');
    expect(ran.stderr).toContain('b.ts');
    expect(runFolders(out)).toEqual([]);
  }, 120_000);

  test('a folder runs every scenario file in it, named exports included, and keysim list lists them', async () => {
    const named = verifyScenario('named-one').replace('export default defineScenario', 'export const one = defineScenario');
    const dir = project({
      'checks/a.ts': verifyScenario('from-default'),
      'checks/b.ts': named,
      'checks/b.test.ts': 'throw new Error("not a scenario")',
      'checks/lib/x.ts': 'export const x = 1;',
    });
    const listed = await cli(['list', join(dir, 'checks')]);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toMatch(/^from-default\s+verifies one key/m);
    expect(listed.stdout).toMatch(/^named-one\s+verifies one key/m);
    const out = join(dir, 'reports');
    const ran = await cli(['run', join(dir, 'checks'), ...QUICK, '--out', out]);
    expect(ran.code, ran.stderr).toBe(0);
    expect(runFolders(out)).toHaveLength(2);
  }, 180_000);
});

describe('the service clock a scenario starts with', () => {
  test('clock.startAt: the embedded simulator is created there, so setup runs at that instant', async () => {
    const check = `async finish(ctx, f) { return [{ name: 'setup at startAt', passed: f.at === '2028-01-31T22:00:00.000Z', detail: f.at }]; },`;
    const file = `import { defineScenario, iso, requireAdmin } from 'keysim';
export default defineScenario({
  name: 'starts-at',
  description: 'records the clock in setup',
  clock: { startAt: '2028-01-31T22:00:00Z' },
  async setup(ctx) { return { at: iso(await requireAdmin(ctx).clockNow()) }; },
  mix: [{ weight: 1, build: () => ({ op: 'keys.verifyKey', body: { key: 'nope' } }) }],
  ${check}
});
`;
    const dir = project({ 's.ts': file });
    const ran = await cli(['run', join(dir, 's.ts'), ...QUICK, '--out', join(dir, 'reports')]);
    expect(ran.code, `${ran.stdout}\n${ran.stderr}`).toBe(0);
    expect(ran.stdout).toContain('pass  check setup at startAt: 2028-01-31T22:00:00.000Z');
  }, 120_000);

  test('a sweep into the past without clock.startAt fails before setup and says to set it', async () => {
    const file = `import { defineScenario } from 'keysim';
export default defineScenario({
  name: 'past-sweep',
  description: 'sweeps a month end long gone',
  requires: ['clock'],
  async setup() { throw new Error('setup must not run'); },
  mix: [{ weight: 1, build: () => ({ op: 'keys.verifyKey', body: { key: 'nope' } }) }],
  phases: (ctx) => [{ name: 'old month end', durationMs: ctx.settings.durationMs, serviceClock: { fromMs: Date.parse('2020-01-31T23:00:00Z'), toMs: Date.parse('2020-02-01T01:00:00Z') } }],
});
`;
    const dir = project({ 'p.ts': file });
    const ran = await cli(['run', join(dir, 'p.ts'), ...QUICK, '--out', join(dir, 'reports')]);
    expect(ran.code).toBe(1);
    expect(ran.stderr).toContain('failed during start');
    expect(ran.stderr).toContain('"old month end" from 2020-01-31T23:00:00.000Z');
    expect(ran.stderr).toContain("clock: { startAt: '2020-01-31T23:00:00.000Z' }");
    expect(ran.stderr).not.toContain('setup must not run');
  }, 120_000);
});
