/**
 * The README and docs/ stand alone: every relative link reaches a file of this repository and
 * every `#anchor` a heading of that file (GitHub's anchor rules), nothing points outside the
 * repository or to project-internal references, and the README's exit-code table lists exactly the
 * codes of src/cli/exit-codes.ts.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { EXIT } from '../../src/cli/exit-codes.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const pages = [
  'README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

/**
 * Pages written on other branches at the same time as this test; until they are merged, a link to
 * one of them may not resolve. Each entry goes once its page is here (the test below says so).
 */
const PAGES_WRITTEN_ELSEWHERE = new Set<string>([]);

/** Text outside fenced code blocks and inline code. */
function prose(markdown: string): string {
  return markdown.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '');
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to '-', repeats numbered. */
function anchorsOf(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  const withoutCode = markdown.replace(/^```[\s\S]*?^```/gm, '');
  for (const m of withoutCode.matchAll(/^#{1,6} (.+)$/gm)) {
    const base = (m[1] ?? '')
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/ /g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

describe.each(pages)('%s', (page) => {
  const text = readFileSync(join(root, page), 'utf8');

  test('every relative link reaches a file of the repository, and every anchor a heading', () => {
    const broken: string[] = [];
    for (const m of prose(text).matchAll(/\]\(([^)\s]+)\)/g)) {
      const link = m[1] ?? '';
      if (/^[a-z]+:/.test(link)) {
        broken.push(`${link}: links go to files of the repository only`);
        continue;
      }
      const [file = '', anchor] = link.split('#');
      const target = file === '' ? page : relative(root, resolve(dirname(join(root, page)), file));
      if (target.startsWith('..')) {
        broken.push(`${link}: outside the repository`);
        continue;
      }
      if (!existsSync(join(root, target))) {
        if (!PAGES_WRITTEN_ELSEWHERE.has(target)) broken.push(`${link}: ${target} does not exist`);
        continue;
      }
      if (anchor !== undefined && !anchorsOf(readFileSync(join(root, target), 'utf8')).has(anchor)) {
        broken.push(`${link}: ${target} has no heading with the anchor #${anchor}`);
      }
    }
    expect(broken).toEqual([]);
  });

  test('no project-internal references and no paths outside the repository', () => {
    const found = [...text.matchAll(/service-facts|service-interface|DESIGN(\.md| convention)|\bconvention \d|\bissue \d|§\s?\d|\.\.\/shared|\/work\//gi)].map(
      (m) => m[0],
    );
    expect(found).toEqual([]);
  });
});

test('pages written elsewhere are listed only while they are missing', () => {
  const arrived = [...PAGES_WRITTEN_ELSEWHERE].filter((p) => existsSync(join(root, p)));
  expect(arrived, 'these pages are here now: remove them from PAGES_WRITTEN_ELSEWHERE').toEqual([]);
});

test('the anchor rules agree with GitHub on headings with punctuation', () => {
  expect([...anchorsOf("## The journal\n## Limits, and what a restore checks\n## `keysim check`\n## The run's tag\n## Refill\n## Refill\n")]).toEqual([
    'the-journal',
    'limits-and-what-a-restore-checks',
    'keysim-check',
    'the-runs-tag',
    'refill',
    'refill-1',
  ]);
});

test("the README's exit-code table lists exactly the codes of src/cli/exit-codes.ts", () => {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Exit codes'));
  const table = section.slice(0, section.indexOf('\n## '));
  const codes = [...table.matchAll(/^\| (\d+) \|/gm)].map((m) => Number(m[1]));
  expect(codes).toEqual(Object.values(EXIT).sort((a, b) => a - b));
});
