/**
 * The outputs of `keysim run` beside the run folders: `--junit FILE` and `--series FILE` (one file
 * for all the scenarios of the invocation, rewritten after each, so a run stopped between two
 * scenarios keeps what finished), the `.hgrm` files of each run folder, and the `--metrics`
 * endpoint. Every path and the address are checked before any load is sent (exit 2).
 */
import { constants, accessSync, mkdirSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { type JunitRun, renderJunit } from '../report/junit.js';
import { renderSeries } from '../report/series.js';
import { hgrmFiles } from '../report/hgrm.js';
import type { RunReport } from '../report/model.js';
import { MetricsEndpoint, isLoopbackHost, parseMetricsAddress } from '../load/metrics/index.js';
import { UsageError } from './exit-codes.js';
import { ReportWriteError, writeFileChecked } from './report-files.js';

/** The folder of a run folder's `.hgrm` files. */
export const HGRM_FOLDER = 'hgrm';

/** Checks that `file` can be written (its folder exists and is writable, it is not a folder); returns its absolute path. */
export function checkOutputFile(flag: string, file: string): string {
  const path = resolve(file);
  const hint = `Name a file in an existing folder you can write to, e.g. ${flag} reports/${flag === '--junit' ? 'junit.xml' : 'series.ndjson'}.`;
  let isDirectory = false;
  try {
    isDirectory = statSync(path).isDirectory();
  } catch {
    // Not there yet: it is created.
  }
  if (isDirectory) throw new UsageError(`${flag} ${file} is a folder, not a file. ${hint}`);
  try {
    accessSync(dirname(path), constants.W_OK);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    throw new UsageError(
      `${flag} ${file}: its folder ${dirname(path)} ${code === 'ENOENT' ? 'does not exist' : `cannot be written (${String(code)})`}. ${hint}`,
    );
  }
  return path;
}

/** Writes the `.hgrm` files of a report into `<folder>/hgrm/`; returns that folder (undefined when no operation was answered). */
export function writeHgrmFiles(report: RunReport, folder: string): string | undefined {
  const files = hgrmFiles(report.operations, report.overall, report.settings.model);
  if (files.length === 0) return undefined;
  const dir = join(folder, HGRM_FOLDER);
  try {
    mkdirSync(dir, { recursive: true });
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    throw new ReportWriteError(dir, typeof code === 'string' ? code : String(error));
  }
  for (const file of files) writeFileChecked(join(dir, file.name), file.text);
  return dir;
}

export interface RunOutputFlags {
  junit?: string;
  series?: string;
  metrics?: string;
}

export class RunOutputs {
  readonly #junitPath: string | undefined;
  readonly #seriesPath: string | undefined;
  readonly #junitRuns: JunitRun[] = [];
  readonly #seriesRuns: Array<{ report: RunReport; run: string }> = [];
  #metrics: MetricsEndpoint | undefined;
  /** A `--junit` or `--series` write failed (the run then exits 1: an output CI reads is missing). */
  writeFailed = false;

  /** Checks the flags (throws a UsageError before any load). */
  constructor(flags: RunOutputFlags) {
    this.#junitPath = flags.junit === undefined ? undefined : checkOutputFile('--junit', flags.junit);
    this.#seriesPath = flags.series === undefined ? undefined : checkOutputFile('--series', flags.series);
  }

  /** Starts the `--metrics` endpoint when asked; a bad or busy address is a UsageError (exit 2). */
  async startMetrics(flag: string | undefined, warn: (line: string) => void): Promise<void> {
    if (flag === undefined) return;
    const parsed = parseMetricsAddress(flag);
    if (!parsed.ok) throw new UsageError(parsed.error);
    try {
      this.#metrics = await MetricsEndpoint.listen(parsed.address);
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      const why =
        code === 'EADDRINUSE'
          ? 'the port is in use (choose another, or 0 for any free port)'
          : code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND'
            ? "that address is not one of this machine's"
            : String(code ?? error);
      throw new UsageError(`--metrics ${flag}: cannot listen there: ${why}.`);
    }
    if (!isLoopbackHost(parsed.address.host)) {
      warn(
        `warning: --metrics listens on ${parsed.address.host}, beyond this machine: anyone who can reach it can read the run's figures (scenario names, operations, latencies). Use it only on a network you trust.`,
      );
    }
    warn(`metrics: ${this.#metrics.url}`);
  }

  /** The `onMeasured` listener of one run for the metrics endpoint, and what ends it. */
  metricsFor(run: string, scenario: string): { onMeasured?: (operation: string, latencyMs: number | undefined, isError: boolean) => void; finish: () => void } {
    if (this.#metrics === undefined) return { finish: () => undefined };
    const series = this.#metrics.run({ run, scenario });
    return { onMeasured: series.observe, finish: series.finish };
  }

  /** A finished run: rewrites the JUnit and series files with it. `folder` is its run folder. */
  addReport(report: RunReport, folder: string): void {
    this.#junitRuns.push({ report });
    this.#seriesRuns.push({ report, run: basename(folder) });
    this.#write();
  }

  /** A scenario that produced no report (target unreachable, set-up failed): an error in the JUnit file. */
  addFailure(scenario: string, message: string): void {
    this.#junitRuns.push({ scenario, error: message });
    this.#write();
  }

  #write(): void {
    for (const [path, render] of [
      [this.#junitPath, () => renderJunit(this.#junitRuns)],
      [this.#seriesPath, () => renderSeries(this.#seriesRuns)],
    ] as const) {
      if (path === undefined) continue;
      try {
        writeFileChecked(path, render());
      } catch (error) {
        if (!(error instanceof ReportWriteError)) throw error;
        this.writeFailed = true;
        process.stderr.write(`keysim: ${error.message}\n`);
      }
    }
  }

  /** Closes the metrics endpoint. */
  async close(): Promise<void> {
    await this.#metrics?.close();
    this.#metrics = undefined;
  }
}
