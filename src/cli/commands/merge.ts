/**
 * `keysim merge PART… --out DIR`: one report from the partial reports of a plan's segments
 * (`keysim run --segment i/N`), with the thresholds evaluated on the merged figures and, when the
 * segments recorded histories, the invariants judged over their union (docs/distributed.md#merge).
 */
import { existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs';
import { MergeError, mergeReports, parseReport } from '../../report/index.js';
import type { RunReport } from '../../report/model.js';
import { type Threshold, evaluateThresholds, parseThreshold } from '../../load/run/index.js';
import { EXIT, type ExitCode, UsageError } from '../exit-codes.js';
import { ReportWriteError, writeReport } from '../report-files.js';
import { renderSummary } from '../summary.js';
import { writeHgrmFiles } from '../run-outputs.js';
import { exitCodeOf } from '../exit-code-of.js';
import { VerdictReasons, lineStyle } from '../verdict-line.js';
import { crossCheckMerged, partHistoryFile } from '../cross-check.js';
import { historyFileOf } from './check.js';
import { example } from '../help-example.js';
import { type PromiseArgs, promiseOptions, promisesOf } from '../promise-flags.js';

interface MergeArgs extends PromiseArgs {
  parts: string[];
  out: string;
  threshold: string[];
  quiet: boolean;
  /** More histories to judge with the segments' (the shared set-up's). */
  history: string[];
  /** With histories from several machines: how far their wall clocks may be apart, ms. */
  hostSkew?: number;
}

/**
 * Reads one partial report: a run folder or its report.json. A run folder without a report (a
 * segment killed before it could write one) is undefined: that segment counts as missing.
 */
export function readPart(path: string, warn: (line: string) => void = () => undefined): RunReport | undefined {
  if (!existsSync(path)) throw new UsageError(`${path} does not exist: give each segment's run folder or its report.json.`);
  const isFolder = statSync(path).isDirectory();
  const file = isFolder ? join(path, 'report.json') : path;
  if (!existsSync(file)) {
    warn(`${path} has no report.json (the segment was killed, or its report was lost): that segment counts as missing.`);
    return undefined;
  }
  const parsed = parseReport(readFileSync(file, 'utf8'));
  if (!parsed.ok) throw new UsageError(`${file}: ${parsed.error}`);
  return parsed.report;
}

/** The segments' thresholds (each expression once) and those given to the merge. */
function thresholdsOf(parts: readonly RunReport[], extra: readonly string[]): Threshold[] {
  const expressions = [...new Set([...parts.flatMap((p) => p.thresholds.map((t) => t.expression)), ...extra])];
  return expressions.map((expression) => {
    const parsed = parseThreshold(expression);
    if (!parsed.ok) throw new UsageError(parsed.error);
    return parsed.threshold;
  });
}

/** The merged report, thresholds evaluated on it. Throws a UsageError for parts that do not merge. */
export function mergeParts(parts: readonly RunReport[], extraThresholds: readonly string[] = []): RunReport {
  const thresholds = thresholdsOf(parts, extraThresholds);
  try {
    const merged = mergeReports(parts);
    return { ...merged, thresholds: evaluateThresholds(thresholds, merged) };
  } catch (error) {
    if (error instanceof MergeError) throw new UsageError(error.message);
    throw error;
  }
}

/** What a partial merge misses, e.g. `missing segments 2/4; incomplete segments 1/4`. */
function partialText(report: RunReport): string {
  const merge = report.merge;
  if (merge === undefined) return '';
  return [
    merge.missing.length > 0 ? `missing segments ${merge.missing.join(', ')}` : '',
    merge.incomplete.length > 0 ? `incomplete segments ${merge.incomplete.join(', ')}` : '',
  ]
    .filter((t) => t !== '')
    .join('; ');
}

/** The final line of a merge: the merged report's verdict, or the partial merge that outranks it. */
export function mergeVerdictLine(report: RunReport, code: ExitCode): string {
  const reasons = new VerdictReasons();
  if (report.merge?.partial === true) reasons.note(EXIT.mergePartial, `the merged report is partial (${partialText(report)})`);
  reasons.report(report);
  return reasons.line(code, lineStyle(process.stdout));
}

/** A merged report's exit code: a partial merge (92) outranks what its figures say, which miss part of the plan. */
export function mergeExitCode(report: RunReport): ExitCode {
  if (report.merge?.partial === true) return EXIT.mergePartial;
  return exitCodeOf(report);
}

export async function mergeCommand(args: MergeArgs): Promise<ExitCode> {
  const read = args.parts.map((path) => ({ path, report: readPart(path, (line) => process.stderr.write(`keysim: ${line}\n`)) }));
  const parts = read.filter((p): p is { path: string; report: RunReport } => p.report !== undefined);
  if (parts.length === 0)
    throw new UsageError("none of the parts has a report.json: there is nothing to merge (give the segments' run folders or report.json files).");
  if (args.hostSkew !== undefined && !(Number.isFinite(args.hostSkew) && args.hostSkew >= 0))
    throw new UsageError(`--host-skew must be a number of milliseconds ≥ 0, got ${String(args.hostSkew)}.`);
  const promises = promisesOf(args);
  const extraHistories = args.history.map(historyFileOf);
  let report = mergeParts(
    parts.map((p) => p.report),
    args.threshold,
  );
  try {
    mkdirSync(args.out, { recursive: true });
  } catch (error) {
    throw new UsageError(`--out ${args.out} cannot be created (${String((error as { code?: unknown }).code ?? error)}): name a folder you can write to.`);
  }
  // The invariants across segments: over the union of the histories, when the parts recorded them.
  report = await crossCheckMerged({
    merged: report,
    segmentHistories: parts.map((p) => partHistoryFile(p.path)),
    extraHistories,
    out: args.out,
    ...(args.hostSkew === undefined ? {} : { hostSkewMs: args.hostSkew }),
    ...(promises === undefined ? {} : { promises }),
  });
  // Judged across segments, the history's measures are the union's: thresholds naming them read those.
  report = {
    ...report,
    thresholds: evaluateThresholds(
      thresholdsOf(
        parts.map((p) => p.report),
        args.threshold,
      ),
      report,
    ),
  };
  try {
    const written = writeReport(report, args.out);
    writeHgrmFiles(report, args.out);
    if (!args.quiet) process.stdout.write(`${renderSummary(report)}\nreport: ${written.html}\n`);
  } catch (error) {
    if (!(error instanceof ReportWriteError)) throw error;
    process.stderr.write(`keysim: ${error.message}\n`);
    return EXIT.failure;
  }
  if (report.merge?.partial === true) {
    process.stderr.write(`keysim: the merged report is PARTIAL: ${partialText(report)} (exit ${EXIT.mergePartial}).\n`);
  }
  const code = mergeExitCode(report);
  if (!args.quiet) process.stdout.write(`${mergeVerdictLine(report, code)}\n`);
  return code;
}

export const mergeCommandModule: CommandModule<object, MergeArgs> = {
  command: 'merge <parts..>',
  describe: "Merge the partial reports of a plan's segments (keysim run --segment i/N) into one report",
  builder: (y: Argv) =>
    promiseOptions(y)
      .positional('parts', { type: 'string', array: true, demandOption: true, describe: "The segments' run folders or report.json files" })
      .option('out', { type: 'string', demandOption: true, describe: 'Folder for the merged report.json, report.md and report.html (created if missing)' })
      .option('threshold', {
        type: 'string',
        array: true,
        default: [],
        describe: "More thresholds to evaluate on the merged figures, beside the segments' own (repeatable)",
      })
      .option('quiet', { type: 'boolean', default: false, describe: 'No summary on the terminal' })
      .option('history', {
        type: 'string',
        array: true,
        default: [],
        describe: "More histories to judge with the segments' (repeatable): the shared set-up's run folder (keysim run --setup-only --history)",
      })
      .option('host-skew', {
        type: 'number',
        describe: 'With histories recorded on several machines: bound on how far their wall clocks are apart, ms (default 1000; 0 when they name one machine)',
      })
      .example(...example('$0 merge reports/*-segment-* --out reports/merged', 'one report from the four segments of a plan'))
      .example(
        ...example(
          '$0 merge reports/*-segment-* --history reports/setup/* --out reports/merged',
          "with the shared set-up's history: the invariants judged across the segments",
        ),
      ) as unknown as Argv<MergeArgs>,
  handler: async (args: ArgumentsCamelCase<MergeArgs>) => {
    process.exitCode = await mergeCommand(args);
  },
};
