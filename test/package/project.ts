/**
 * A user's project outside keysim's repository, for the outside-project test: keysim packed the
 * way npm publishes it, installed by name into a temporary project beside vitest and TypeScript
 * (the versions of keysim's own lock, so npm's cache has them), and commands run there as a user
 * types them (`npx keysim …`). No stdin: nothing can prompt.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureBuiltCli } from '../helpers/cli-build.js';

export const REPO = fileURLToPath(new URL('../..', import.meta.url));
/** A command still running after this is killed (an upper bound for a hung child, not a pace). */
const COMMAND_LIMIT_MS = 8 * 60_000;

export interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The environment without what the test runner and the operator's shell would leak into the child. */
function childEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, CI: 'true', NO_COLOR: '1' };
  for (const name of Object.keys(env)) {
    if (name.startsWith('VITEST') || name.startsWith('KEYSIM_') || name === 'NODE_OPTIONS' || name === 'TEST' || name === 'NODE_ENV') delete env[name];
  }
  return env;
}

/** Runs `command args…` in `cwd` (no shell: a quoted glob reaches keysim as it is). */
export function run(command: string, args: readonly string[], cwd: string): Promise<Ran> {
  const child = spawn(command, args, { cwd, env: childEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), COMMAND_LIMIT_MS);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** What a failed command printed, for an assertion's message. */
export function shownRun(what: string, ran: Ran): string {
  return `${what} exited ${String(ran.code)}\n--- stdout\n${ran.stdout.slice(-4000)}\n--- stderr\n${ran.stderr.slice(-4000)}`;
}

const temps: string[] = [];

export function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  temps.push(dir);
  return dir;
}

/** For afterAll: removes the temporary folders (installed projects are large: give it time). */
export async function removeTemps(): Promise<void> {
  await Promise.all(temps.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
}

/**
 * `npm pack` of the repository; the tarball's path. Its `prepare` script would build dist/ again
 * whatever its state (a minute of tsc on a busy machine); instead dist/ is built here only when a
 * source is newer than its stamp (test/helpers/cli-build.ts: the CLI tests' build, usually already
 * done), and packed without the scripts. The tarball's files are the same.
 */
export async function packKeysim(): Promise<string> {
  ensureBuiltCli();
  const into = tempDir('keysim-pack-');
  const packed = await run('npm', ['pack', '--silent', '--ignore-scripts', '--pack-destination', into], REPO);
  if (packed.code !== 0) throw new Error(shownRun('npm pack', packed));
  const tarball = readdirSync(into).find((f) => f.endsWith('.tgz'));
  if (tarball === undefined) throw new Error(`npm pack wrote no tarball into ${into}:\n${packed.stdout}`);
  return join(into, tarball);
}

/** `name@version` from keysim's lock, so that the install finds it in npm's cache. */
function locked(name: string): string {
  const lock = JSON.parse(readFileSync(join(REPO, 'package-lock.json'), 'utf8')) as { packages: Record<string, { version?: string }> };
  const version = lock.packages[`node_modules/${name}`]?.version;
  if (version === undefined) throw new Error(`${name} is not in keysim's package-lock.json`);
  return `${name}@${version}`;
}

/**
 * A temporary project with keysim (from the tarball), vitest, @unkey/api, TypeScript and Node's
 * types installed; `"type": "module"` for an ES module project, none for CommonJS. Its tsconfig is
 * as strict as keysim's own.
 */
export async function makeProject(tarball: string, kind: 'esm' | 'cjs'): Promise<string> {
  const dir = tempDir(`keysim-user-${kind}-`);
  writeFileSync(
    join(dir, 'package.json'),
    `${JSON.stringify({ name: `keysim-user-${kind}`, version: '1.0.0', private: true, ...(kind === 'esm' ? { type: 'module' } : {}) }, null, 2)}\n`,
  );
  writeFileSync(
    join(dir, 'tsconfig.json'),
    `${JSON.stringify(
      {
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          noUncheckedIndexedAccess: true,
          exactOptionalPropertyTypes: true,
          skipLibCheck: true,
          noEmit: true,
          types: ['node'],
        },
        include: ['checks', 'test', 'docs-examples'],
      },
      null,
      2,
    )}\n`,
  );
  const installed = await run(
    'npm',
    [
      'install',
      '--prefer-offline',
      '--no-audit',
      '--no-fund',
      '--loglevel=error',
      tarball,
      locked('vitest'),
      locked('@unkey/api'),
      locked('typescript'),
      locked('@types/node'),
    ],
    dir,
  );
  if (installed.code !== 0) throw new Error(shownRun(`npm install in ${dir}`, installed));
  return dir;
}

/** Writes `text` at `path` inside the project, making its folders. */
export function writeProjectFile(dir: string, path: string, text: string): void {
  const file = join(dir, path);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
}

/** The run folders keysim wrote under `out` (not the hidden ledgers). */
export function runFolders(out: string): string[] {
  try {
    return readdirSync(out).filter((f) => !f.startsWith('.'));
  } catch {
    return [];
  }
}
