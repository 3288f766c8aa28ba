/**
 * The marked examples of README.md and docs/*.md (`<!-- keysim-example: <path> -->` before a code
 * fence) are run in a project that installed the packed keysim (test/package/). Here, quickly: every
 * marker is followed by a code block, the README keeps its two examples, and the blocks import only
 * what a user's project has — so a broken marker fails in seconds, not after a pack and install.
 */
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';
import { docExamples, examplesOf } from '../package/doc-examples.js';

const repo = fileURLToPath(new URL('../..', import.meta.url));

test('every marker is followed by a code block, and the README marks its test and its scenario', () => {
  const examples = docExamples(repo);
  expect(
    examples
      .filter((e) => e.doc === 'README.md')
      .map((e) => e.path)
      .sort(),
  ).toEqual(['checks/leap-refill.ts', 'test/leap-refill.test.ts']);
  expect(new Set(examples.map((e) => e.path)).size, 'two examples write the same file').toBe(examples.length);
});

test('marked examples import only keysim, vitest and the official SDK', () => {
  for (const { doc, line, path, text } of docExamples(repo)) {
    const specifiers = [...text.matchAll(/from '([^']+)'/g)].map((m) => m[1]);
    expect(specifiers.length, `${doc}:${line} ${path}`).toBeGreaterThan(0);
    for (const s of specifiers) expect(['keysim', 'vitest', '@unkey/api'], `${doc}:${line} ${path} imports ${s}`).toContain(s);
  }
});

test('a marker without a code block after it is an error naming the document and line', () => {
  expect(() => examplesOf('docs/x.md', 'intro\n<!-- keysim-example: a.ts -->\ntext\n')).toThrow('docs/x.md:2');
});
