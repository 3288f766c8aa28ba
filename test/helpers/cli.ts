/**
 * `keysim` as a child process, built (dist/, rebuilt first when a source changed: cli-build.ts), for the CLI tests:
 * start it, wait for its output, collect what it printed and how it ended. Children still running
 * at the end are killed, and the temporary folders removed, by `cleanUpCli` (call it in afterAll).
 */
import { type ChildProcessByStdio, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { CLI_ENTRY, ensureBuiltCli } from './cli-build.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
/**
 * A child that has not exited by then is killed and the test fails (the machine is slow and
 * shared, and two live files run at a time): a bound for a hang, under the live tier's 180 s
 * test limit so that the test still reports what the child printed.
 */
const CHILD_LIMIT_MS = 150_000;

type Child = ChildProcessByStdio<null, Readable, Readable>;

export interface Finished {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface Running {
  child: Child;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<Finished>;
}

ensureBuiltCli();

const children: Child[] = [];
const temps: string[] = [];

/** For afterAll: kills what still runs and removes the temporary folders. */
export function cleanUpCli(): void {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  for (const dir of temps) rmSync(dir, { recursive: true, force: true });
}

export function tempDir(prefix = 'keysim-cli-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  temps.push(dir);
  return dir;
}

/**
 * The parent's environment without what would change the child's behaviour: the root key and the
 * rate-limit namespace of the operator's shell are dropped unless the test gives its own.
 */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra };
  if (extra.KEYSIM_ROOT_KEY === undefined) delete env.KEYSIM_ROOT_KEY;
  if (extra.KEYSIM_NAMESPACE === undefined) delete env.KEYSIM_NAMESPACE;
  delete env.NODE_OPTIONS;
  return env;
}

export function startCli(args: string[], env: NodeJS.ProcessEnv = cleanEnv()): Running {
  // stdin ignored: no TTY, so nothing can prompt.
  const child = spawn(process.execPath, [CLI_ENTRY, ...args], { cwd: REPO, env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
  const exited = new Promise<Finished>((resolve) => {
    // A `keysim serve` lives as long as its test needs it (stopped by the test, or by cleanUpCli):
    // the limit would kill it under a test that runs longer than the limit on a busy machine.
    const timer = args[0] === 'serve' ? undefined : setTimeout(() => child.kill('SIGKILL'), CHILD_LIMIT_MS);
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout: out, stderr: err });
    });
  });
  return { child, stdout: () => out, stderr: () => err, exited };
}

export const cli = (args: string[], env?: NodeJS.ProcessEnv): Promise<Finished> => startCli(args, env).exited;

/** Polls until `ready()` holds (no pace assumed: only an upper bound, for a hung child). */
export async function waitUntil(ready: () => boolean, what: string, running?: Running, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!ready()) {
    if (running !== undefined && running.child.exitCode !== null) {
      throw new Error(`the CLI exited (${running.child.exitCode}) before ${what}.\nstdout: ${running.stdout()}\nstderr: ${running.stderr()}`);
    }
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}.${running === undefined ? '' : `\nstdout: ${running.stdout()}\nstderr: ${running.stderr()}`}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** The run folders under `out` (one per scenario run; not the hidden `.resources` ledgers). */
export function runFolders(out: string): string[] {
  return existsSync(out)
    ? readdirSync(out)
        .filter((name) => !name.startsWith('.'))
        .map((name) => join(out, name))
    : [];
}
