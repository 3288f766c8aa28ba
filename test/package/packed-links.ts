/**
 * The relative links of the packed README.md and docs/*.md, checked against the files of the
 * package: a user reading the README in node_modules/keysim (or on the registry's page) must not
 * meet a link to a page that was left out of the tarball.
 */
import { posix } from 'node:path';

/** Links in the text outside fenced blocks and inline code, without external URLs and bare anchors. */
function relativeLinks(markdown: string): string[] {
  const prose = markdown.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '');
  return [...prose.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => (m[1] ?? '').split('#')[0] as string).filter((link) => link !== '' && !/^[a-z]+:/i.test(link));
}

/**
 * Each broken link as "page: link → missing file", for the packed pages of `files` (paths inside
 * the package) whose text `read` gives.
 */
export function brokenPackedLinks(files: ReadonlySet<string>, read: (path: string) => string): string[] {
  const pages = [...files].filter((f) => f === 'README.md' || (f.startsWith('docs/') && f.endsWith('.md')));
  const broken: string[] = [];
  for (const page of pages) {
    for (const link of relativeLinks(read(page))) {
      const target = posix.normalize(posix.join(posix.dirname(page), link)).replace(/\/$/, '');
      const found = files.has(target) || [...files].some((f) => f.startsWith(`${target}/`));
      if (!found) broken.push(`${page}: ${link} → ${target} is not in the package`);
    }
  }
  return broken;
}
