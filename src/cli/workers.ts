/**
 * `keysim run SCENARIO --workers N`: the scenario's setup once in this process, then the plan's N
 * segments as N child processes on this machine — the same command line with `--segment i/N
 * --start-at <now + margin> --fixtures <the set-up's>` — then the teardown once, and a merge into
 * one report (docs/distributed.md#workers). A second way past one core for the load generator.
 *
 * The children must load one target: against the embedded simulator, this process starts it and
 * hands its URL (and root key, in the environment) to every child. Ctrl-C is passed on to every
 * child; each writes its partial report marked interrupted, and the merge says the result is partial.
 */
import type { PromiseSet } from '../load/promises/index.js';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HISTORY_FILE } from '../load/history/index.js';
import { parseDurationMs } from '../load/plan/index.js';
import { RESOURCES_FILE, readOpenResources } from '../load/resources/index.js';
import { ResourceLedger, type ResourceEntry, ledgerPath } from '../load/resources/index.js';
import { ScenarioFailedError, type SharedFixtures, TargetUnreachableError } from '../load/run/index.js';
import type { Target } from '../load/target/index.js';
import type { RunReport } from '../report/model.js';
import { EXIT, type ExitCode, UsageError } from './exit-codes.js';
import { createRunFolder } from './out-folder.js';
import { reportFolderName, writeReport } from './report-files.js';
import { renderSummary } from './summary.js';
import { mergeExitCode, mergeParts, mergeVerdictLine, readPart } from './commands/merge.js';
import { writeHgrmFiles } from './run-outputs.js';
import { crossCheckMerged, partHistoryFile } from './cross-check.js';
import { FIXTURES_SCHEMA, writeFixturesFile } from './fixtures-file.js';
import { WORKER_CHILD_ENV } from './segment-flags.js';

/**
 * How long after the launch the segments start together: time for N processes to start and set up
 * on a busy machine (KEYSIM_WORKERS_START_MARGIN, e.g. `40s`, gives more). A worker that starts
 * after it anyway starts late and says so; it does not refuse.
 */
export const WORKERS_START_MARGIN_MS = 20_000;

/** The margin in force: KEYSIM_WORKERS_START_MARGIN when set (a duration: `40s`, `500ms`), else the default. */
export function workersStartMarginMs(env: NodeJS.ProcessEnv = process.env): number {
  const text = env.KEYSIM_WORKERS_START_MARGIN;
  if (text === undefined || text.trim() === '') return WORKERS_START_MARGIN_MS;
  const ms = parseDurationMs(text.trim());
  if (ms === undefined || ms < 0) throw new UsageError(`KEYSIM_WORKERS_START_MARGIN="${text}" is not a duration: write e.g. 40s or 1500ms.`);
  return ms;
}

/** Flags a child must not get: the parent sets them per child, or they belong to the parent alone. */
const PARENT_FLAGS = new Set([
  '--workers',
  '--segment',
  '--start-at',
  '--out',
  '--target',
  '--fault',
  '--junit',
  '--series',
  '--metrics',
  '--fixtures',
  '--keep',
  '--oracle',
  '--no-oracle',
  '--no-keep',
]);
/** Those of them that take no value: what follows is the next argument. */
const PARENT_SWITCHES = new Set(['--keep', '--oracle', '--no-oracle', '--no-keep']);

/** The command line without the parent's own flags (`--flag value` and `--flag=value` forms). */
export function childArguments(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const name = arg.startsWith('--') ? (arg.split('=')[0] as string) : undefined;
    if (name !== undefined && PARENT_FLAGS.has(name)) {
      // `--flag value`: skip the value too (a value never starts with --, a fault KEY=VALUE neither).
      if (!PARENT_SWITCHES.has(name) && !arg.includes('=') && i + 1 < argv.length && !(argv[i + 1] as string).startsWith('--')) i++;
      continue;
    }
    out.push(arg);
  }
  return out;
}

/**
 * Runs the scenario's setup once in this process (recording its history to `historyPath` when
 * given), awaits `between` with the fixtures — the segments run in it — then the teardown, once.
 * Resolves to the set-up's report.
 */
export type SetUpOnce = (options: {
  historyPath: string | undefined;
  between: (fixtures: SharedFixtures) => Promise<readonly ResourceEntry[]>;
}) => Promise<RunReport>;

export interface WorkersRun {
  workers: number;
  scenario: string;
  seed: number;
  argv: readonly string[];
  outFolder: string;
  /** The target every child loads: a URL (the embedded simulator was started by the caller). */
  target: Target;
  quiet: boolean;
  /** Whether the runs record histories (the set-up's too): the invariants are then judged across segments. */
  history: boolean;
  setUp: SetUpOnce;
  signal: AbortSignal;
  /** The promise set the verdict across segments judges against (each child reads the same flags). */
  promises?: PromiseSet;
}

/** Starts the N children, each `--segment i/N` with the shared fixtures file, and waits for them. */
async function runChildren(run: WorkersRun, segmentsOut: string, fixturesPath: string): Promise<Array<number | null>> {
  const { workers } = run;
  const startAt = new Date(Date.now() + workersStartMarginMs()).toISOString();
  const base = childArguments(run.argv);
  if (!run.quiet)
    process.stderr.write(
      `keysim: ${workers} workers (segments 0/${workers} … ${workers - 1}/${workers}) start at ${startAt}; their partial reports go to ${segmentsOut}\n`,
    );
  const children = Array.from({ length: workers }, (_, i) => {
    // The set-up's fixtures instead of a setup each; no oracle: each would restart the one simulator's journal.
    const args = [
      ...base,
      '--target',
      run.target.url,
      '--yes',
      '--quiet',
      '--segment',
      `${i}/${workers}`,
      '--start-at',
      startAt,
      '--out',
      segmentsOut,
      '--fixtures',
      fixturesPath,
      '--no-oracle',
    ];
    // The same Node and loader flags as this process (tsx under the sources), the same entry point.
    const child = spawn(process.execPath, [...process.execArgv, process.argv[1] as string, ...args], {
      env: { ...process.env, KEYSIM_ROOT_KEY: run.target.rootKey, [WORKER_CHILD_ENV]: '1' },
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
  return codes;
}

/**
 * What the workers' load created and left to the teardown: each worker's resources.json
 * (resource-handover.ts), and the ledger they all appended to under `segmentsOut` as they went, for
 * a worker killed before it wrote its file.
 */
export function handedBack(segmentsOut: string, tag: string, warn: (line: string) => void): ResourceEntry[] {
  const entries: ResourceEntry[] = [];
  const folders = existsSync(segmentsOut) ? readdirSync(segmentsOut).filter((name) => !name.startsWith('.')) : [];
  for (const name of folders) {
    const file = join(segmentsOut, name, RESOURCES_FILE);
    if (!existsSync(file)) continue;
    try {
      entries.push(...readOpenResources(file, tag).open);
    } catch (error) {
      warn(`${error instanceof Error ? error.message : String(error)}: what that worker created is not torn down`);
    }
  }
  const ledger = ledgerPath(segmentsOut, tag);
  if (existsSync(ledger)) entries.push(...ResourceLedger.read(ledger, tag, false).open);
  return entries;
}

/**
 * Runs the set-up once, the N segments as child processes sharing its fixtures, the teardown once,
 * then merges the partial reports into the run folder — the invariants judged over the union of
 * the set-up's and the segments' histories when they were recorded.
 */
export async function runWorkers(run: WorkersRun): Promise<ExitCode> {
  const { workers } = run;
  if (!Number.isSafeInteger(workers) || workers < 1 || workers > 64)
    throw new UsageError(`--workers must be a whole number from 1 to 64, got ${String(workers)}.`);
  const folder = createRunFolder(run.outFolder, reportFolderName(new Date().toISOString(), `${run.scenario}-workers-${workers}`));
  const segmentsOut = join(folder, 'segments');
  const setUpOut = join(folder, 'setup');
  mkdirSync(setUpOut, { recursive: true });
  const setUpHistory = run.history ? join(setUpOut, HISTORY_FILE) : undefined;
  // The fixtures may hold keys: a private temporary folder, deleted when the segments are done.
  const fixturesDir = mkdtempSync(join(tmpdir(), 'keysim-fixtures-'));
  const fixturesPath = join(fixturesDir, 'fixtures.json');
  let codes: Array<number | null> = [];
  let setUpReport: RunReport;
  try {
    setUpReport = await run.setUp({
      historyPath: setUpHistory,
      between: async ({ value, tag, keyIds }) => {
        writeFixturesFile(fixturesPath, {
          schema: FIXTURES_SCHEMA,
          version: 1,
          scenario: run.scenario,
          seed: run.seed,
          tag,
          target: run.target.url,
          fixtures: value,
          ...(keyIds === undefined ? {} : { keyIds }),
        });
        codes = await runChildren(run, segmentsOut, fixturesPath);
        // The keys the workers' load created are in their ledgers only: the teardown deletes them too.
        return handedBack(segmentsOut, tag, (line) => process.stderr.write(`keysim: ${line}\n`));
      },
    });
  } catch (error) {
    if (!(error instanceof ScenarioFailedError || error instanceof TargetUnreachableError)) throw error;
    process.stderr.write(`keysim: ${error.message}\n`);
    return error instanceof TargetUnreachableError ? EXIT.targetUnreachable : EXIT.failure;
  } finally {
    rmSync(fixturesDir, { recursive: true, force: true });
  }
  // The workers' shared ledger was handed to the teardown: once it left nothing, it is stale.
  if (setUpReport.resources?.cleanupCommand === undefined) rmSync(join(segmentsOut, '.resources'), { recursive: true, force: true });
  setUpReport = {
    ...setUpReport,
    notes: [`The set-up of ${workers} workers: its fixtures were shared with every segment, and its teardown ran once, after them.`],
  };
  writeReport(setUpReport, setUpOut);

  const paths = (existsSync(segmentsOut) ? readdirSync(segmentsOut) : []).filter((name) => !name.startsWith('.')).map((name) => join(segmentsOut, name));
  const parts = paths
    .map((path) => ({ path, report: readPart(path, (line) => process.stderr.write(`keysim: ${line}\n`)) }))
    .filter((p): p is { path: string; report: RunReport } => p.report !== undefined);
  if (parts.length === 0) {
    process.stderr.write(`keysim: no worker wrote a report (exit codes ${codes.map(String).join(', ')}): nothing to merge.\n`);
    return EXIT.failure;
  }
  // A worker that wrote no report (a usage error, a crash) is a missing segment: the merge says partial.
  let report = mergeParts(parts.map((p) => p.report));
  report = await crossCheckMerged({
    merged: report,
    segmentHistories: parts.map((p) => partHistoryFile(p.path)),
    extraHistories: setUpHistory === undefined ? [] : [setUpHistory],
    out: folder,
    ...(run.promises === undefined ? {} : { promises: run.promises }),
  });
  // The segments left what they used to the teardown: the set-up's section says what it created and deleted.
  if (setUpReport.resources !== undefined) report = { ...report, resources: setUpReport.resources };
  const written = writeReport(report, folder);
  writeHgrmFiles(report, folder);
  const code = mergeExitCode(report);
  process.stdout.write(`${renderSummary(report)}\nreport: ${written.html}\n\n${mergeVerdictLine(report, code)}\n`);
  return code;
}
