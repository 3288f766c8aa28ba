/**
 * The examples of README.md and docs/*.md that are marked to be run: a fenced code block right
 * after a line `<!-- keysim-example: <path> -->` is written verbatim at <path> in a user's
 * project and run there the way a user would (`*.test.ts` with vitest, other files with
 * `keysim run`).
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

export interface DocExample {
  /** The document, relative to the repository (e.g. docs/scenarios.md). */
  doc: string;
  /** The line of the marker, 1-based. */
  line: number;
  /** Where it goes in the project. */
  path: string;
  text: string;
}

const MARKER = /^<!--\s*keysim-example:\s*(\S+)\s*-->\s*$/;

/** The marked examples of one document's text; throws when a marker is not followed by a fenced block. */
export function examplesOf(doc: string, markdown: string): DocExample[] {
  const lines = markdown.split('\n');
  const out: DocExample[] = [];
  for (let i = 0; i < lines.length; i++) {
    const marker = MARKER.exec(lines[i] ?? '');
    if (marker === null) continue;
    let j = i + 1;
    while (j < lines.length && (lines[j] ?? '').trim() === '') j++;
    const fence = /^(```+|~~~+)/.exec(lines[j] ?? '');
    if (fence === null) throw new Error(`${doc}:${i + 1}: the keysim-example marker is not followed by a fenced code block`);
    const end = lines.findIndex((l, k) => k > j && l.startsWith(fence[1] as string));
    if (end === -1) throw new Error(`${doc}:${j + 1}: the fenced code block never closes`);
    out.push({ doc, line: i + 1, path: marker[1] as string, text: `${lines.slice(j + 1, end).join('\n')}\n` });
    i = end;
  }
  return out;
}

/** Every marked example of README.md and docs/*.md under `repo`. */
export function docExamples(repo: string): DocExample[] {
  const docs = ['README.md'];
  try {
    docs.push(
      ...readdirSync(join(repo, 'docs'))
        .filter((f) => f.endsWith('.md'))
        .sort()
        .map((f) => `docs/${f}`),
    );
  } catch {
    // No docs folder: the README's examples only.
  }
  return docs.flatMap((doc) => examplesOf(doc, readFileSync(join(repo, doc), 'utf8')));
}
