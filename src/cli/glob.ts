/**
 * File globs for `keysim run` and `keysim list` (`'checks/**\/*.ts'`, quoted so the shell leaves
 * them): `*` any characters but `/`, `**` any number of folders, `?` one character but `/`.
 * Node 20 has no fs.glob, and these three are all a list of scenario files needs.
 */
import { readdirSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';

/** Whether `text` holds a glob character. */
export function isGlob(text: string): boolean {
  return /[*?]/.test(text);
}

/** The pattern as a regular expression over `/`-separated relative paths. */
export function globRegExp(pattern: string): RegExp {
  let out = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i] as string;
    if (c === '*' && pattern[i + 1] === '*') {
      // `**/` matches zero or more folders; a trailing `**` anything below.
      if (pattern[i + 2] === '/') {
        out += '(?:[^/]*/)*';
        i += 2;
      } else {
        out += '.*';
        i += 1;
      }
    } else if (c === '*') out += '[^/]*';
    else if (c === '?') out += '[^/]';
    else out += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${out}$`);
}

/** Files under `dir`, relative with `/`, skipping node_modules and dot-folders. */
function walk(dir: string, root: string, out: string[]): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name.startsWith('.')) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) walk(path, root, out);
    else if (entry.isFile()) out.push(relative(root, path).split(sep).join('/'));
  }
}

/**
 * The files matching `pattern` (relative to `cwd`, or absolute), sorted; paths are returned the
 * way the pattern starts (relative stays relative). Searches from the longest folder prefix
 * without glob characters.
 */
export function expandGlob(pattern: string, cwd = process.cwd()): string[] {
  const normal = pattern.split(sep).join('/');
  const parts = normal.split('/');
  const fixed: string[] = [];
  for (const part of parts) {
    if (isGlob(part)) break;
    fixed.push(part);
  }
  const base = fixed.join('/');
  const rest = parts.slice(fixed.length).join('/');
  const baseDir = base === '' ? cwd : resolve(cwd, base);
  const files: string[] = [];
  try {
    walk(baseDir, baseDir, files);
  } catch {
    return [];
  }
  const re = globRegExp(rest);
  return files
    .filter((f) => re.test(f))
    .sort()
    .map((f) => (base === '' ? f : `${base}/${f}`));
}
