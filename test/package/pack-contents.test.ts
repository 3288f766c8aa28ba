/**
 * What `npm pack` puts in the tarball, from npm's own list (`npm pack --dry-run --json`, no build:
 * the pages do not depend on dist/): the README, the LICENSE that package.json's "license" names,
 * and every page the README links to. The installed tarball is checked the same way by
 * outside-project.test.ts.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { brokenPackedLinks } from './packed-links.js';
import { REPO } from './project.js';

let packedOnce: Set<string> | undefined;

/** npm's list, asked once for both tests (the same command gives the same list). */
function packedFiles(): Set<string> {
  packedOnce ??= listPacked();
  return new Set(packedOnce);
}

function listPacked(): Set<string> {
  const packed = spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts', '--loglevel=error'], { cwd: REPO, encoding: 'utf8', timeout: 120_000 });
  expect(packed.status, packed.stderr).toBe(0);
  const [entry] = JSON.parse(packed.stdout) as Array<{ files: Array<{ path: string }> }>;
  return new Set((entry?.files ?? []).map((f) => f.path));
}

test('the packed README linked to docs/, which was not packed: every relative link of the packed README and docs resolves inside the tarball', () => {
  const files = packedFiles();
  expect([...files].filter((f) => f.startsWith('docs/')).length).toBeGreaterThan(5);
  expect(brokenPackedLinks(files, (path) => readFileSync(join(REPO, path), 'utf8'))).toEqual([]);
  // It can fail: without docs/ the README's links are reported.
  const withoutDocs = new Set([...files].filter((f) => !f.startsWith('docs/')));
  expect(brokenPackedLinks(withoutDocs, (path) => readFileSync(join(REPO, path), 'utf8'))).toContain(
    'README.md: docs/running.md → docs/running.md is not in the package',
  );
}, 150_000);

test('package.json says MIT and the tarball holds the MIT LICENSE, and no build stamp', () => {
  const files = packedFiles();
  const pkg = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { license: string };
  expect(pkg.license).toBe('MIT');
  expect(files.has('LICENSE')).toBe(true);
  const license = readFileSync(join(REPO, 'LICENSE'), 'utf8');
  expect(license).toMatch(/^MIT License\n\nCopyright \(c\) 2026 keysim contributors\n/);
  expect(license).toContain('THE SOFTWARE IS PROVIDED "AS IS"');
  expect([...files].filter((f) => f.includes('build-stamp'))).toEqual([]);
}, 150_000);
