/**
 * The files `keysim init` writes, read back from disk: they show what a user should read (no
 * escape left over from the template literals they are written from) and they type-check as
 * strictly as keysim's own sources, with `keysim` resolved to this checkout's sources. (The packed
 * tarball's declarations are checked by test/package/outside-project.test.ts.)
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { afterAll, expect, test } from 'vitest';
import { INIT_FILES, initProject } from '../../src/cli/commands/init.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'keysim-init-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
initProject(dir, false);

const written = (path: string) => readFileSync(join(dir, path), 'utf8');

test('the starter test keysim init writes shows `data`, not a stray \\`data\\` (an escape left in the template)', () => {
  expect(written('test/keysim.test.ts')).toContain("the answer's `data`.");
  for (const { path } of INIT_FILES) {
    const text = written(path);
    // A backslash before a backtick or a `${`: a template literal's escape that reached the file.
    expect(text.match(/.*\\[`$].*/g) ?? [], path).toEqual([]);
  }
});

test('the files keysim init writes type-check (strict, keysim resolved to its sources)', () => {
  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    strict: true,
    noUncheckedIndexedAccess: true,
    exactOptionalPropertyTypes: true,
    skipLibCheck: true,
    noEmit: true,
    types: ['node'],
    typeRoots: [join(REPO, 'node_modules/@types')],
    // The written files live in a temporary folder: its imports are resolved to this checkout.
    paths: { keysim: [join(REPO, 'src/index.ts')], vitest: [join(REPO, 'node_modules/vitest')] },
  };
  const program = ts.createProgram(
    INIT_FILES.map((f) => join(dir, f.path)),
    options,
  );
  const problems = ts
    .getPreEmitDiagnostics(program)
    .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n') + (d.file === undefined ? '' : ` (${d.file.fileName})`));
  expect(problems).toEqual([]);
  // The files were checked, not skipped.
  for (const { path } of INIT_FILES)
    expect(
      program.getSourceFiles().some((f) => f.fileName === join(dir, path)),
      path,
    ).toBe(true);
}, 120_000);
