#!/usr/bin/env node
/**
 * Builds dist/ (tsc -p tsconfig.build.json) only when it is older than its sources, so that
 * `npm start` does not spend ten seconds or more compiling what has not changed. `--always` builds
 * whatever the stamp says (`npm run build`).
 *
 * Sources: every file under src/ and scenarios/, tsconfig*.json and package.json. dist's stamp is
 * dist/.build-stamp, whose time is that of the start of the last successful build: a file saved
 * while tsc ran is newer than it, and the next start builds again.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';

const root = process.cwd();
const STAMP = join(root, 'dist', '.build-stamp');

/** The newest file under `path` (a file or a folder), or undefined when there is none. */
function newest(path) {
  if (!existsSync(path)) return undefined;
  const stat = statSync(path);
  if (!stat.isDirectory()) return { path, mtimeMs: stat.mtimeMs };
  let best;
  for (const entry of readdirSync(path)) {
    const found = newest(join(path, entry));
    if (found !== undefined && (best === undefined || found.mtimeMs > best.mtimeMs)) best = found;
  }
  return best;
}

function newestSource() {
  const tops = readdirSync(root).filter((f) => /^tsconfig.*\.json$/.test(f) || f === 'package.json');
  let best;
  for (const path of ['src', 'scenarios', ...tops].map((p) => join(root, p))) {
    const found = newest(path);
    if (found !== undefined && (best === undefined || found.mtimeMs > best.mtimeMs)) best = found;
  }
  return best;
}

/** Why dist must be built, or undefined when it is up to date. */
function staleness() {
  if (!existsSync(STAMP)) return 'no build stamp in dist/';
  const source = newestSource();
  const built = statSync(STAMP).mtimeMs;
  if (source !== undefined && source.mtimeMs > built) return `${relative(root, source.path)} changed since the last build`;
  return undefined;
}

const why = process.argv.includes('--always') ? 'asked to' : staleness();
if (why === undefined) process.exit(0);
if (!process.argv.includes('--always')) process.stderr.write(`keysim: building dist/ (${why})\n`);
const startedMs = Date.now();
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const built = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
if (built.status !== 0) process.exit(built.status ?? 1);
mkdirSync(join(root, 'dist'), { recursive: true });
writeFileSync(STAMP, 'the start of the last successful build of dist/ (scripts/ensure-build.mjs)\n');
utimesSync(STAMP, startedMs / 1000, startedMs / 1000);
