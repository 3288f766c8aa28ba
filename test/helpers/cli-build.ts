/**
 * The built CLI (dist/) for the tests that run `keysim` as a child process: built first when a
 * source is newer than dist's stamp (scripts/ensure-build.mjs, as `npm start` does), so that a
 * test never runs yesterday's build. Node starts dist/src/cli/main.js in about a second where the
 * sources under tsx take three or more (tsx compiles every module again in each child), and the
 * CLI tests start hundreds of children.
 *
 * Two test files importing this at once (two test workers) must not build at the same time: the
 * one that builds holds a lock folder, the other waits for it, then finds dist fresh.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
export const CLI_ENTRY = join(REPO, 'dist', 'src', 'cli', 'main.js');
/** A lock older than this was left by a killed process (a build takes well under it). */
const STALE_LOCK_MS = 10 * 60_000;
const LOCK = join(tmpdir(), `keysim-dist-build-${createHash('sha256').update(REPO).digest('hex').slice(0, 12)}`);

const pause = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

function lockAgeMs(): number | undefined {
  try {
    return Date.now() - statSync(LOCK).mtimeMs;
  } catch {
    return undefined;
  }
}

function takeLock(): void {
  for (;;) {
    try {
      mkdirSync(LOCK);
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const ageMs = lockAgeMs();
    if (ageMs === undefined) continue; // released meanwhile
    if (ageMs > STALE_LOCK_MS) rmSync(LOCK, { recursive: true, force: true });
    else pause(200);
  }
}

let ensured = false;

/** Builds dist/ if it is older than its sources (once per test file); throws what tsc said if the build fails. */
export function ensureBuiltCli(): void {
  if (ensured) return;
  takeLock();
  try {
    const built = spawnSync(process.execPath, [join(REPO, 'scripts', 'ensure-build.mjs')], { cwd: REPO, encoding: 'utf8' });
    if (built.status !== 0) throw new Error(`building dist/ for the CLI tests failed (npm run build shows why):\n${built.stdout}\n${built.stderr}`);
  } finally {
    rmSync(LOCK, { recursive: true, force: true });
  }
  ensured = true;
}
