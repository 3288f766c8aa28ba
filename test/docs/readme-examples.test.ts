/**
 * The README's examples that a user pastes as files are marked `<!-- keysim-example: <path> -->`
 * on the line before their code fence. Here: every marker names a file and is followed by its code
 * block, the blocks import only what a user's project has (keysim, vitest, the official SDK), and
 * each block is, apart from its import path, the very file this repository runs as a test — so a
 * README example that changes without its test, or the other way round, fails here.
 */
import { readFileSync } from 'node:fs';
import { expect, test } from 'vitest';

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

interface MarkedExample {
  path: string;
  code: string;
}

function markedExamples(markdown: string): MarkedExample[] {
  const lines = markdown.split('\n');
  const out: MarkedExample[] = [];
  lines.forEach((line, i) => {
    const marker = /^<!-- keysim-example: (\S+) -->$/.exec(line);
    if (marker === null) return;
    const fence = lines[i + 1] ?? '';
    if (!/^```(ts|js)$/.test(fence)) throw new Error(`README line ${i + 1}: the marker for ${marker[1]} is not followed by a ts or js code fence`);
    const end = lines.findIndex((l, j) => j > i + 1 && l === '```');
    if (end === -1) throw new Error(`README line ${i + 2}: the code block of ${marker[1]} never ends`);
    out.push({ path: marker[1] ?? '', code: `${lines.slice(i + 2, end).join('\n')}\n` });
  });
  return out;
}

/** The file's text from its first import on (the header comment says why the file exists). */
function fromFirstImport(text: string): string {
  const at = text.search(/^import /m);
  if (at === -1) throw new Error('no import in the file');
  return text.slice(at);
}

const examples = markedExamples(readme);
const example = (path: string): string => {
  const found = examples.find((e) => e.path === path);
  if (found === undefined) throw new Error(`README has no example marked ${path}; marked: ${examples.map((e) => e.path).join(', ')}`);
  return found.code;
};

test('the README marks its two examples, each once', () => {
  expect(examples.map((e) => e.path).sort()).toEqual(['checks/leap-refill.ts', 'test/leap-refill.test.ts']);
});

test('marked examples import only keysim, vitest and the official SDK', () => {
  for (const { path, code } of examples) {
    const specifiers = [...code.matchAll(/from '([^']+)'/g)].map((m) => m[1]);
    expect(specifiers.length, path).toBeGreaterThan(0);
    for (const s of specifiers) expect(['keysim', 'vitest', '@unkey/api'], `${path} imports ${s}`).toContain(s);
  }
});

test('the vitest example is the test that runs here (test/docs/readme-example.test.ts)', () => {
  const here = readFileSync(new URL('./readme-example.test.ts', import.meta.url), 'utf8');
  expect(fromFirstImport(here)).toBe(example('test/leap-refill.test.ts').replace("from 'keysim'", "from '../../src/index.js'"));
});

test('the scenario example is the scenario that runs here (test/docs/examples/leap-refill.ts)', () => {
  const here = readFileSync(new URL('./examples/leap-refill.ts', import.meta.url), 'utf8');
  expect(here).toBe(example('checks/leap-refill.ts').replace("from 'keysim'", "from './keysim.js'"));
});
