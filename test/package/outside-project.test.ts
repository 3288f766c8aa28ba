/**
 * keysim in a user's own project, as a user gets it: packed the way npm publishes it, installed
 * by name into a temporary project, `keysim init` there, the vitest test it writes, the scenario
 * files run with `npx keysim run` (a file, a glob of two, a folder listed), broken files refused
 * before any load, the user's files typechecked against the packed declarations, and the marked
 * examples of README.md and docs/*.md run verbatim. Once for an ES module project, and the
 * scenario run for a CommonJS one.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { docExamples } from './doc-examples.js';
import { brokenPackedLinks } from './packed-links.js';
import { REPO, makeProject, packKeysim, removeTemps, run, runFolders, shownRun, writeProjectFile } from './project.js';

/** Short runs whose verdict does not depend on the machine's pace (the generator's limits off). */
const QUICK = ['--duration', '2s', '--warmup', '0', '--rate', '20', '--quiet', '--max-late-share', '1', '--max-loop-delay', 'off'];
const SETUP_MS = 12 * 60_000;
const STEP_MS = 6 * 60_000;

const SECOND = `import { createKey, createTaggedApi, defineScenario, okData } from 'keysim';

export default defineScenario({
  name: 'second-check',
  description: 'An unlimited key stays valid',
  async setup(ctx) {
    const { key } = await createKey(ctx, { apiId: await createTaggedApi(ctx, 'second') });
    return { key };
  },
  mix: [{ weight: 1, build: (f) => ({ op: 'keys.verifyKey', body: { key: f.key } }), check: (r) => { const d = okData(r); return typeof d === 'string' ? d : d.valid === true ? undefined : 'not valid'; } }],
  thresholds: ['errors == 0', 'checks == 0'],
});
`;

let tarball: string;
let esm: string;
let cjs: string;

beforeAll(async () => {
  tarball = await packKeysim();
  [esm, cjs] = await Promise.all([makeProject(tarball, 'esm'), makeProject(tarball, 'cjs')]);
}, SETUP_MS);
afterAll(() => removeTemps(), SETUP_MS);

async function keysim(dir: string, args: string[]) {
  return run('npx', ['--no-install', 'keysim', ...args], dir);
}

function report(dir: string, out: string, scenario: string): { checks: Array<{ name: string; passed: boolean }> } {
  const folder = runFolders(join(dir, out)).find((f) => f.endsWith(`-${scenario}`));
  expect(folder, `no run folder of ${scenario} under ${out}`).toBeDefined();
  return JSON.parse(readFileSync(join(dir, out, folder as string, 'report.json'), 'utf8')) as { checks: Array<{ name: string; passed: boolean }> };
}

describe('an ES module project ("type": "module")', () => {
  test(
    'keysim init writes a scenario and a test that pass as written, and refuses to overwrite them',
    async () => {
      const init = await keysim(esm, ['init']);
      expect(init.code, shownRun('keysim init', init)).toBe(0);
      expect(init.stdout).toContain('npx keysim run ./checks/first-check.ts');
      expect(existsSync(join(esm, 'checks/first-check.ts'))).toBe(true);

      const again = await keysim(esm, ['init']);
      expect(again.code).toBe(2);
      expect(again.stderr).toContain('checks/first-check.ts');
      expect(again.stderr).toContain('--force');

      const tested = await run('npx', ['--no-install', 'vitest', 'run', 'test/keysim.test.ts'], esm);
      expect(tested.code, shownRun('vitest run', tested)).toBe(0);

      const ran = await keysim(esm, ['run', './checks/first-check.ts', ...QUICK, '--out', 'reports-first']);
      expect(ran.code, shownRun('keysim run ./checks/first-check.ts', ran)).toBe(0);
      expect(report(esm, 'reports-first', 'first-check').checks.map((c) => [c.name, c.passed])).toContainEqual(['no more VALID than credits', true]);
    },
    STEP_MS,
  );

  test(
    'a quoted glob of two files runs both, and keysim list lists a folder',
    async () => {
      writeProjectFile(esm, 'checks/second-check.ts', SECOND);
      if (!existsSync(join(esm, 'checks/first-check.ts'))) expect((await keysim(esm, ['init', '--force'])).code).toBe(0);
      // The listing only reads the files: beside the run.
      const [ran, listed] = await Promise.all([keysim(esm, ['run', 'checks/*.ts', ...QUICK, '--out', 'reports-glob']), keysim(esm, ['list', './checks'])]);
      expect(ran.code, shownRun("keysim run 'checks/*.ts'", ran)).toBe(0);
      expect(
        runFolders(join(esm, 'reports-glob'))
          .map((f) => f.replace(/^.*?-(?=[a-z])/, ''))
          .sort(),
      ).toEqual(['first-check', 'second-check']);

      expect(listed.code, shownRun('keysim list ./checks', listed)).toBe(0);
      expect(listed.stdout).toMatch(/^first-check\s+A key with 100 credits/m);
      expect(listed.stdout).toMatch(/^second-check\s+An unlimited key stays valid/m);
    },
    STEP_MS,
  );

  test(
    'the user files typecheck against the packed declarations',
    async () => {
      writeProjectFile(esm, 'checks/second-check.ts', SECOND);
      if (!existsSync(join(esm, 'checks/first-check.ts'))) expect((await keysim(esm, ['init', '--force'])).code).toBe(0);
      const checked = await run('npx', ['--no-install', 'tsc', '--noEmit', '-p', '.'], esm);
      expect(checked.code, shownRun('tsc --noEmit', checked)).toBe(0);
      // It can fail: a scenario that breaks the contract does not typecheck.
      writeProjectFile(
        esm,
        'checks/typo.ts',
        "import { defineScenario } from 'keysim';\nexport default defineScenario({ name: 'typo', description: '', setup: async () => ({}), mix: [{ weight: 1, build: () => ({ op: 'keys.verifyKeys', body: {} }) }] });\n",
      );
      const refused = await run('npx', ['--no-install', 'tsc', '--noEmit', '-p', '.'], esm);
      expect(refused.code).not.toBe(0);
      expect(refused.stdout).toContain('checks/typo.ts');
      writeProjectFile(esm, 'checks/typo.ts', '');
    },
    STEP_MS,
  );

  test(
    'broken scenario files exit 2 naming the file and what is wrong, before any load',
    async () => {
      writeProjectFile(
        esm,
        'broken/empty-mix.ts',
        "import { defineScenario } from 'keysim';\nexport default defineScenario({ name: 'empty', description: '', setup: async () => ({}), mix: [] });\n",
      );
      writeProjectFile(esm, 'broken/throws.ts', "throw new Error('no database here');\nexport default {};\n");
      writeProjectFile(esm, 'broken/nothing.mjs', 'export const answer = 42;\n');
      const cases: Array<[string, string]> = [
        ['broken/empty-mix.ts', 'empty mix'],
        ['broken/throws.ts', 'no database here'],
        ['broken/nothing.mjs', 'exports no scenario'],
        ['missing/none.ts', 'no such file'],
      ];
      // Refused before any load: side by side.
      const runs = await Promise.all(cases.map(([file]) => keysim(esm, ['run', file, ...QUICK, '--out', 'reports-broken'])));
      for (const [i, [file, problem]] of cases.entries()) {
        const ran = runs[i] as Awaited<ReturnType<typeof keysim>>;
        expect(ran.code, shownRun(`keysim run ${file}`, ran)).toBe(2);
        expect(ran.stderr).toContain(file);
        expect(ran.stderr).toContain(problem);
      }
      expect(runFolders(join(esm, 'reports-broken'))).toEqual([]);
    },
    STEP_MS,
  );

  test(
    'the marked examples of README.md and docs/*.md run as written',
    async () => {
      const examples = docExamples(REPO);
      for (const example of examples) writeProjectFile(esm, example.path, example.text);
      // Each example its own process and reports folder: side by side.
      const runs = await Promise.all(
        examples.map((example, i) =>
          example.path.endsWith('.test.ts')
            ? run('npx', ['--no-install', 'vitest', 'run', example.path], esm)
            : keysim(esm, ['run', example.path, ...QUICK, '--out', `reports-docs-${i}`]),
        ),
      );
      for (const [i, example] of examples.entries()) {
        expect(
          runs[i]?.code,
          shownRun(`the example of ${example.doc} at line ${example.line} (${example.path})`, runs[i] as Awaited<ReturnType<typeof keysim>>),
        ).toBe(0);
      }
      // And they typecheck, as a user's editor would check them.
      if (examples.length > 0) {
        const checked = await run('npx', ['--no-install', 'tsc', '--noEmit', '-p', '.'], esm);
        expect(checked.code, shownRun(`tsc --noEmit over the examples (${examples.map((e) => `${e.doc}:${e.line}`).join(', ')})`, checked)).toBe(0);
      }
    },
    STEP_MS,
  );
});

test('the installed package holds its LICENSE, and every relative link of its README and docs resolves inside it', () => {
  const installed = join(esm, 'node_modules', 'keysim');
  const files = new Set(
    readdirSync(installed, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => relative(installed, join(e.parentPath, e.name)).split('\\').join('/'))
      .filter((f) => !f.startsWith('node_modules/')),
  );
  expect(files.has('LICENSE')).toBe(true);
  expect(files.has('docs/running.md')).toBe(true);
  expect(brokenPackedLinks(files, (path) => readFileSync(join(installed, path), 'utf8'))).toEqual([]);
});

describe('a CommonJS project (no "type")', () => {
  test(
    'keysim init, then its scenario runs with npx keysim run',
    async () => {
      expect((await keysim(cjs, ['init'])).code).toBe(0);
      const ran = await keysim(cjs, ['run', './checks/first-check.ts', ...QUICK, '--out', 'reports']);
      expect(ran.code, shownRun('keysim run ./checks/first-check.ts (CommonJS project)', ran)).toBe(0);
      expect(report(cjs, 'reports', 'first-check').checks.every((c) => c.passed)).toBe(true);
    },
    STEP_MS,
  );
});
