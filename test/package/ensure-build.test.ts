/**
 * scripts/ensure-build.mjs, which `npm start` runs before the CLI: it builds dist/ when a source
 * is newer than dist's stamp, and not otherwise. Run on a tiny project of its own (the real tsc,
 * the real files); file times are set explicitly, so nothing depends on the clock's pace.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, test } from 'vitest';

const SCRIPT = fileURLToPath(new URL('../../scripts/ensure-build.mjs', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'keysim-ensure-build-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function write(path: string, text: string): void {
  mkdirSync(join(dir, path, '..'), { recursive: true });
  writeFileSync(join(dir, path), text);
}

function ensureBuild(...args: string[]): { code: number | null; stderr: string } {
  const ran = spawnSync(process.execPath, [SCRIPT, ...args], { cwd: dir, encoding: 'utf8', timeout: 240_000 });
  return { code: ran.status, stderr: ran.stderr };
}

/** Sets a file's modification time, in seconds since the epoch. */
const setTime = (path: string, seconds: number) => utimesSync(join(dir, path), seconds, seconds);

write('package.json', '{ "name": "tiny", "type": "module" }\n');
write('tsconfig.json', '{ "compilerOptions": { "strict": true, "module": "NodeNext", "moduleResolution": "NodeNext", "target": "ES2022", "types": [] } }\n');
write('tsconfig.build.json', '{ "extends": "./tsconfig.json", "compilerOptions": { "outDir": "dist", "rootDir": "." }, "include": ["src", "scenarios"] }\n');
write('src/a.ts', 'export const answer: number = 1;\n');
write('scenarios/b.ts', 'export const name: string = "b";\n');

test('npm start rebuilt dist every time: a fresh dist is not built again, a newer source is', () => {
  const first = ensureBuild();
  expect(first.code, first.stderr).toBe(0);
  expect(first.stderr).toContain('building dist/ (no build stamp in dist/)');
  expect(readFileSync(join(dir, 'dist/src/a.js'), 'utf8')).toContain('answer = 1');

  // Every source older than the stamp: nothing is built (dist/src/a.js is not written again).
  for (const path of ['package.json', 'tsconfig.json', 'tsconfig.build.json', 'src/a.ts', 'scenarios/b.ts']) setTime(path, 1_000_000);
  setTime('dist/.build-stamp', 2_000_000);
  setTime('dist/src/a.js', 2_000_000);
  const fresh = ensureBuild();
  expect(fresh.code, fresh.stderr).toBe(0);
  expect(fresh.stderr).toBe('');
  expect(statSync(join(dir, 'dist/src/a.js')).mtimeMs).toBe(2_000_000_000);

  // A scenario saved after the build: built again, and the output has the change.
  write('scenarios/b.ts', 'export const name: string = "changed";\n');
  setTime('scenarios/b.ts', 3_000_000);
  const stale = ensureBuild();
  expect(stale.code, stale.stderr).toBe(0);
  expect(stale.stderr).toContain('building dist/ (scenarios/b.ts changed since the last build)');
  expect(readFileSync(join(dir, 'dist/scenarios/b.js'), 'utf8')).toContain('changed');

  // A tsconfig changed: built again too.
  setTime('dist/.build-stamp', 4_000_000);
  setTime('tsconfig.json', 5_000_000);
  expect(ensureBuild().stderr).toContain('tsconfig.json changed since the last build');
}, 480_000);

test('a build that fails leaves no stamp, so the next start tries again (and --always builds regardless)', () => {
  write('src/a.ts', 'export const answer: number = "not a number";\n');
  rmSync(join(dir, 'dist'), { recursive: true, force: true });
  const failed = ensureBuild();
  expect(failed.code).not.toBe(0);
  expect(existsSync(join(dir, 'dist/.build-stamp'))).toBe(false);
  write('src/a.ts', 'export const answer: number = 2;\n');
  const forced = ensureBuild('--always');
  expect(forced.code, forced.stderr).toBe(0);
  expect(readFileSync(join(dir, 'dist/src/a.js'), 'utf8')).toContain('answer = 2');
  expect(existsSync(join(dir, 'dist/.build-stamp'))).toBe(true);
}, 480_000);
