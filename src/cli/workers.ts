/**
 * `keysim run SCENARIO --workers N`: the plan's N segments as N child processes on this machine —
 * the same command line with `--segment i/N --start-at <now + margin>` — merged at the end into one
 * report (docs/distributed.md#workers). A second way past one core for the load generator.
 *
 * The children must load one target: against the embedded simulator, this process starts it and
 * hands its URL (and root key, in the environment) to every child. Ctrl-C is passed on to every
 * child; each writes its partial report marked interrupted, and the merge says the result is partial.
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Target } from '../load/target.js';
import type { RunReport } from '../report/model.js';
import { EXIT, type ExitCode, UsageError } from './exit-codes.js';
import { createRunFolder } from './out-folder.js';
import { reportFolderName, writeReport } from './report-files.js';
import { renderSummary } from './summary.js';
import { mergeExitCode, mergeParts, readPart } from './commands/merge.js';
import { writeHgrmFiles } from './run-outputs.js';

/** How long after the launch the segments start together: time for N processes to start and set up on a busy machine. */
export const WORKERS_START_MARGIN_MS = 20_000;

/** Flags a child must not get: the parent sets them per child, or they belong to the parent alone. */
const PARENT_FLAGS = new Set(['--workers', '--segment', '--start-at', '--out', '--target', '--fault', '--junit', '--series', '--metrics']);

/** The command line without the parent's own flags (`--flag value` and `--flag=value` forms). */
export function childArguments(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const name = arg.startsWith('--') ? arg.split('=')[0] as string : undefined;
    if (name !== undefined && PARENT_FLAGS.has(name)) {
      // `--flag value`: skip the value too (a value never starts with --, a fault KEY=VALUE neither).
      if (!arg.includes('=') && i + 1 < argv.length && !(argv[i + 1] as string).startsWith('--')) i++;
      continue;
    }
    out.push(arg);
  }
  return out;
}

export interface WorkersRun {
  workers: number;
  scenario: string;
  argv: readonly string[];
  outFolder: string;
  /** The target every child loads: a URL (the embedded simulator was started by the caller). */
  target: Target;
  quiet: boolean;
  signal: AbortSignal;
}

/** Runs the N segments as child processes, then merges their partial reports into the run folder. */
export async function runWorkers(run: WorkersRun): Promise<ExitCode> {
  const { workers } = run;
  if (!Number.isSafeInteger(workers) || workers < 1 || workers > 64) throw new UsageError(`--workers must be a whole number from 1 to 64, got ${String(workers)}.`);
  const folder = createRunFolder(run.outFolder, reportFolderName(new Date().toISOString(), `${run.scenario}-workers-${workers}`));
  const segmentsOut = join(folder, 'segments');
  const startAt = new Date(Date.now() + WORKERS_START_MARGIN_MS).toISOString();
  const base = childArguments(run.argv);
  if (!run.quiet) process.stderr.write(`keysim: ${workers} workers (segments 0/${workers} … ${workers - 1}/${workers}) start at ${startAt}; their partial reports go to ${segmentsOut}\n`);
  const children = Array.from({ length: workers }, (_, i) => {
    const args = [...base, '--target', run.target.url, '--yes', '--quiet', '--segment', `${i}/${workers}`, '--start-at', startAt, '--out', segmentsOut];
    // The same Node and loader flags as this process (tsx under the sources), the same entry point.
    const child = spawn(process.execPath, [...process.execArgv, process.argv[1] as string, ...args], {
      env: { ...process.env, KEYSIM_ROOT_KEY: run.target.rootKey },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      for (const line of chunk.split('\n')) if (line.trim() !== '') process.stderr.write(`[${i}/${workers}] ${line}\n`);
    });
    return child;
  });
  // Ctrl-C from a terminal reaches the children too; a SIGINT sent to this process alone is passed on.
  const stop = () => {
    for (const child of children) if (child.exitCode === null) child.kill('SIGINT');
  };
  run.signal.addEventListener('abort', stop, { once: true });
  const codes = await Promise.all(children.map((child) => new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)))));
  run.signal.removeEventListener('abort', stop);
  const parts = (existsSync(segmentsOut) ? readdirSync(segmentsOut) : [])
    .filter((name) => !name.startsWith('.'))
    .map((name) => join(segmentsOut, name))
    .map((path) => readPart(path, (line) => process.stderr.write(`keysim: ${line}\n`)))
    .filter((p): p is RunReport => p !== undefined);
  if (parts.length === 0) {
    process.stderr.write(`keysim: no worker wrote a report (exit codes ${codes.map(String).join(', ')}): nothing to merge.\n`);
    return EXIT.failure;
  }
  const report = mergeParts(parts);
  // A worker that wrote no report (a usage error, a crash) is a missing segment: the merge says partial.
  const written = writeReport(report, folder);
  writeHgrmFiles(report, folder);
  process.stdout.write(`${renderSummary(report)}\nreport: ${written.html}\n\n`);
  return mergeExitCode(report);
}
