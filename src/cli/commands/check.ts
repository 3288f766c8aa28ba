/**
 * `keysim check <history.jsonl.gz | run folder>…`: re-checks a saved history offline and prints the
 * verdict per invariant, with the witnesses of each violation. Several histories of one run (its
 * set-up's and its segments') are combined and judged as one (docs/checking.md#across-segments);
 * histories of different runs are refused (exit 2). Given one run's folder it also replays the
 * journal the run saved (the oracle) and re-judges the thresholds from its report.json, and exits as
 * the run did (recheck-run.ts); otherwise exit 0 when clean, 100 when an invariant is violated. 94
 * when the history was cut short (a killed run) and the part that could be judged is clean, 2 when
 * the file is missing or not a history. Prints no secret: a history
 * holds none, and only its known fields are shown.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs';
import { type InvariantReport, judgeInvariants } from '../../load/invariants/index.js';
import {
  type CheckablePrefix,
  DEFAULT_HOST_SKEW_MS,
  DEFAULT_WALL_SKEW_MS,
  HISTORY_FILE,
  HistoryCombineError,
  type HistoryEvent,
  HistoryFileError,
  type HistoryHeader,
  type HistoryPart,
  checkablePrefix,
  combineHistories,
  readHistory,
} from '../../load/history/index.js';
import { describeOutcome, describeRequest } from '../../load/invariants/index.js';
import { formatInstant } from '../../report/format.js';
import { measureLine } from '../../report/index.js';
import { EXIT, type ExitCode, UsageError } from '../exit-codes.js';
import { example } from '../help-example.js';
import { type RunRecheck, recheckRun, renderRecheck, runReportIn } from '../recheck-run.js';
import { type LineStyle, lineStyle, verdictLine } from '../verdict-line.js';
import { type PromiseArgs, promiseOptions, promisesOf } from '../promise-flags.js';

interface CheckArgs extends PromiseArgs {
  paths: string[];
  skew?: number;
  /** With several histories from several machines: how far their wall clocks may be apart, ms. */
  hostSkew?: number;
  compat: 'interface' | 'production';
  json: boolean;
}

/**
 * One witness line: what was asked, what came back (worded as the report's witness rows word them),
 * and when (wall, and service clock if known).
 */
export function describeEvent(e: HistoryEvent): string {
  const service =
    e.serviceInvokeMs === undefined && e.serviceCompleteMs === undefined
      ? ''
      : `; service clock ${e.serviceInvokeMs === undefined ? '?' : formatInstant(e.serviceInvokeMs)} … ${e.serviceCompleteMs === undefined ? '?' : formatInstant(e.serviceCompleteMs)}`;
  const took = (e.completeMs - e.invokeMs).toFixed(1);
  const origin = e.origin === undefined ? '' : ` (${e.origin})`;
  return `#${e.seq}${origin} ${e.op} ${describeRequest(e)} → ${describeOutcome(e)}  [sent ${formatInstant(e.invokeMs)}, ${e.outcome === 'unknown' ? 'given up' : 'answered'} +${took} ms${service}]`;
}

/** What a truncated history's verdict must say: how much was read, and how much was judged. */
export interface Truncation {
  read: number;
  prefix: CheckablePrefix;
}

function truncationLines(t: Truncation): string[] {
  const until = t.prefix.untilMs === undefined ? '' : ` (those completed by ${formatInstant(t.prefix.untilMs)})`;
  return [
    `TRUNCATED: the history was cut short (the run was killed or the disk filled while it was written).`,
    `  ${t.read} complete operations were read; ${t.prefix.events.length} were checked${until}. ${t.prefix.leftOut} later ${t.prefix.leftOut === 1 ? 'one was' : 'ones were'} left out: an operation the file lost may have changed what ${t.prefix.leftOut === 1 ? 'it' : 'they'} saw.`,
  ];
}

/** The verdict as text. */
export function renderVerdict(
  file: string,
  header: HistoryHeader,
  operations: number,
  report: InvariantReport,
  truncation?: Truncation,
  recheck?: RunRecheck,
  style: LineStyle = { marks: false, color: false },
): string {
  const lines: string[] = [];
  const run = header.run;
  const about =
    run === undefined
      ? ''
      : ` (${[run.scenario, run.seed === undefined ? undefined : `seed ${run.seed}`, run.target].filter((x) => x !== undefined).join(', ')})`;
  lines.push(`history: ${file}${about}`);
  if (header.combined !== undefined) lines.push(`combined from ${header.combined.length} histories: ${header.combined.join(', ')}`);
  if (truncation !== undefined) lines.push(...truncationLines(truncation));
  const n = (count: number, what: string) => `${count} ${what}${count === 1 ? '' : 's'}`;
  lines.push(
    `${n(operations, 'operation')}; checked ${n(report.checked.keys, 'key')}, ${n(report.checked.verifications, 'verification')}, ${n(report.checked.rateLimitChecks, 'rate-limit decision')}`,
  );
  if (report.promises !== undefined)
    lines.push(`promise set: ${report.promises.text}; ${report.promises.regions} regions (from the ${report.promises.regionsFrom})`);
  lines.push('');
  const width = Math.max(...report.invariants.map((i) => i.id.length));
  for (const inv of report.invariants) {
    const state = inv.passed
      ? inv.checked === 0
        ? 'passed (nothing to check)'
        : inv.state === 'within-promise'
          ? `passed, within promise (${inv.checked} checks): ${inv.measured ?? ''}`
          : `passed (${inv.checked} checks)`
      : `VIOLATED (${inv.violations} subject${inv.violations === 1 ? '' : 's'})${inv.measured === undefined ? '' : `: ${inv.measured}`}`;
    lines.push(`${inv.id.padEnd(width)}  ${state}`);
    if (inv.passed) continue;
    lines.push(`  ${inv.title}`);
    for (const v of report.violations.filter((x) => x.invariant === inv.id)) {
      lines.push(`  ${v.subject}: ${v.message}${v.occurrences > 1 ? ` (${v.occurrences} answers broke it; the earliest is shown)` : ''}`);
      for (const e of v.witness) lines.push(`    ${describeEvent(e)}`);
    }
  }
  // Without a run's report to re-check, the checkers' own measures (with one, renderRecheck shows the run's).
  if (recheck === undefined && (report.measures ?? []).length > 0) lines.push('', ...(report.measures ?? []).map((m) => `measure  ${measureLine(m)}`));
  if (report.notes.length > 0) {
    lines.push('');
    for (const note of report.notes) lines.push(`note: ${note}`);
  }
  if (recheck !== undefined) lines.push('', ...renderRecheck(recheck));
  lines.push('');
  // The final line, as after keysim run: PASS / FAIL / INCONCLUSIVE, the exit code and why. When more
  // than the invariants decides the code (the oracle, a threshold, a check), the run's verdict is said.
  const violations = `${report.violations.length} violation${report.violations.length === 1 ? '' : 's'}`;
  const invariantsCode = report.passed ? EXIT.ok : EXIT.invariantViolated;
  if (recheck !== undefined && recheck.exitCode !== invariantsCode) {
    const invariants = report.passed ? 'every invariant holds' : violations;
    lines.push(verdictLine(recheck.exitCode, `the run's verdict: ${recheck.verdict}; ${invariants}`, style));
  } else if (!report.passed)
    lines.push(
      verdictLine(
        EXIT.invariantViolated,
        truncation === undefined ? violations : `${violations}, in the part of a truncated history that could be judged`,
        style,
      ),
    );
  else if (truncation !== undefined)
    lines.push(verdictLine(EXIT.historyTruncated, 'PARTIAL — the part that could be judged holds every invariant; the rest of the run was not checked', style));
  else lines.push(verdictLine(EXIT.ok, 'all invariants hold', style));
  return `${lines.join('\n')}\n`;
}

/** The history file a path names: the file itself, or `history.jsonl.gz` in a run folder. */
export function historyFileOf(path: string): string {
  if (!existsSync(path)) throw new UsageError(`${path} does not exist: give a run folder (reports/<run>) or its ${HISTORY_FILE}.`);
  const file = statSync(path).isDirectory() ? join(path, HISTORY_FILE) : path;
  if (!existsSync(file)) {
    // An --out folder holds its run folders: name the ones with a history, the usual slip.
    const inside = statSync(path).isDirectory() ? readdirSync(path).filter((name) => existsSync(join(path, name, HISTORY_FILE))) : [];
    if (inside.length > 0)
      throw new UsageError(
        `${path} has no ${HISTORY_FILE}, but its run folder${inside.length === 1 ? '' : 's'} ${inside.map((n) => join(path, n)).join(', ')} ${inside.length === 1 ? 'has one' : 'have one'}: give the run folder (e.g. ${join(path, '*')}).`,
      );
    throw new UsageError(`${path} has no ${HISTORY_FILE}: the run did not record a history.`);
  }
  return file;
}

/** A history read for checking; a file that is not a history is a usage error. */
async function readForCheck(file: string): Promise<Awaited<ReturnType<typeof readHistory>>> {
  try {
    return await readHistory(file, { allowTruncated: true });
  } catch (error) {
    if (error instanceof HistoryFileError) throw new UsageError(`${error.message} — not a readable keysim history.`);
    throw error;
  }
}

/** What the checkers judge: one history, or several of one run combined (docs/checking.md#across-segments). */
interface Judged {
  name: string;
  header: HistoryHeader;
  events: HistoryEvent[];
  wallSkewMs: number;
  truncation: Truncation | undefined;
  notes: string[];
  /** One segment's history alone: judged as the segment judged it (docs/checking.md#one-segments-own-verdict). */
  segment?: boolean;
}

async function judgedHistories(files: readonly string[], args: CheckArgs): Promise<Judged> {
  if (files.length === 1) {
    const file = files[0] as string;
    const history = await readForCheck(file);
    const truncation: Truncation | undefined = history.truncated ? { read: history.events.length, prefix: checkablePrefix(history.events) } : undefined;
    const wallSkewMs = args.skew ?? history.header.wallSkewMs ?? DEFAULT_WALL_SKEW_MS;
    const segment = history.header.run?.segment;
    // One segment alone misses the others' calls on the same keys and limits.
    const notes =
      segment === undefined
        ? []
        : [`This is segment ${segment.index}/${segment.count} alone: give the set-up's and every segment's history to judge the invariants across segments.`];
    return {
      name: file,
      header: history.header,
      events: truncation?.prefix.events ?? history.events,
      wallSkewMs,
      truncation,
      notes,
      segment: segment !== undefined,
    };
  }
  const parts: HistoryPart[] = [];
  for (const file of files) parts.push({ name: file, ...(await readForCheck(file)) });
  let combined;
  try {
    combined = combineHistories(parts, {
      ...(args.skew === undefined ? {} : { wallSkewMs: args.skew }),
      ...(args.hostSkew === undefined ? {} : { hostSkewMs: args.hostSkew }),
    });
  } catch (error) {
    if (error instanceof HistoryCombineError) throw new UsageError(`These histories cannot be checked together: ${error.message}`);
    throw error;
  }
  const t = combined.truncated;
  const truncation: Truncation | undefined =
    t === undefined ? undefined : { read: t.read, prefix: { events: combined.events, leftOut: t.leftOut, untilMs: t.untilMs } };
  return { name: files.join(' + '), header: combined.header, events: combined.events, wallSkewMs: combined.wallSkewMs, truncation, notes: combined.notes };
}

/**
 * One run, one verdict: when the run's report was judged against another promise set than this
 * check, say so and how to judge as the run did (docs/consistency.md).
 */
function promiseMismatch(run: string | undefined, check: string | undefined): string | undefined {
  if (run === check) return undefined;
  const name = (text: string | undefined) => (text === undefined ? 'exact (the default)' : text);
  const how = run === undefined ? 'leave out --consistency and --promise' : `pass --consistency ${run.split(' ')[0] ?? ''} and the same --promise figures`;
  return `The run was judged against the promise set ${name(run)}; this check judges against ${name(check)}. To judge as the run did, ${how}.`;
}

export async function checkCommand(args: CheckArgs): Promise<ExitCode> {
  const files = args.paths.map(historyFileOf);
  if (args.skew !== undefined && !(Number.isFinite(args.skew) && args.skew >= 0))
    throw new UsageError(`--skew must be a number of milliseconds ≥ 0, got ${String(args.skew)}.`);
  if (args.hostSkew !== undefined && !(Number.isFinite(args.hostSkew) && args.hostSkew >= 0))
    throw new UsageError(`--host-skew must be a number of milliseconds ≥ 0, got ${String(args.hostSkew)}.`);
  const promises = promisesOf(args);
  const judged = await judgedHistories(files, args);
  const { events, truncation, wallSkewMs } = judged;
  const report = judgeInvariants(events, {
    wallSkewMs,
    refill: args.compat === 'production' ? 'production' : 'replace',
    ...(promises === undefined ? {} : { promises }),
    ...(judged.segment === true ? { segment: {} } : {}),
  });
  report.notes.push(...judged.notes);
  // Only wall-timed events depend on the skew: say which one judged them.
  if (events.some((e) => e.serviceInvokeMs === undefined || e.serviceCompleteMs === undefined)) {
    const source =
      args.skew !== undefined
        ? 'given (--skew)'
        : judged.header.wallSkewMs !== undefined
          ? `the history's (measured or given when it was recorded${files.length > 1 ? '; the largest of them' : ''})`
          : 'the default: the history names none';
    report.notes.unshift(`Operations without service-clock times were placed at their wall times ± ${wallSkewMs} ms of clock skew, ${source}.`);
  }
  // One run's folder: the oracle and the thresholds are judged again, the rest said to be the report's.
  const recheck = files.length === 1 ? await recheckRun(dirname(files[0] as string), events, report.passed, report.measures) : undefined;
  if (files.length === 1) {
    const mismatch = promiseMismatch(runReportIn(dirname(files[0] as string))?.invariants?.promises?.text, report.promises?.text);
    if (mismatch !== undefined) report.notes.unshift(mismatch);
  }
  if (files.length > 1)
    report.notes.push('The oracle and the thresholds are not re-checked across several histories: give one run folder to re-check its own.');
  if (args.json) {
    const cut =
      truncation === undefined
        ? {}
        : { truncated: true, read: truncation.read, checkedUntilMs: truncation.prefix.untilMs ?? null, leftOut: truncation.prefix.leftOut };
    const which = files.length === 1 ? { file: files[0] } : { files };
    const run = recheck === undefined ? {} : { run: recheck };
    process.stdout.write(`${JSON.stringify({ ...which, header: judged.header, operations: events.length, ...cut, ...report, ...run }, null, 2)}\n`);
  } else {
    process.stdout.write(renderVerdict(judged.name, judged.header, events.length, report, truncation, recheck, lineStyle(process.stdout)));
  }
  const code = recheck?.exitCode ?? (report.passed ? EXIT.ok : EXIT.invariantViolated);
  return code === EXIT.ok && truncation !== undefined ? EXIT.historyTruncated : code;
}

export const checkCommandModule: CommandModule<object, CheckArgs> = {
  command: 'check <paths..>',
  describe: `Re-check a saved run: the invariants over its history (${HISTORY_FILE}), the oracle from its saved journal, the thresholds from its report — or the histories of one run's segments together`,
  builder: (y: Argv) =>
    promiseOptions(y)
      .positional('paths', {
        type: 'string',
        array: true,
        demandOption: true,
        describe: `A run folder or its ${HISTORY_FILE}; several: the set-up's and segments' of one run, checked as one`,
      })
      .option('skew', {
        type: 'number',
        describe: `Bound on service-clock vs wall-clock skew in ms, for events without service times (default: the history's, else ${DEFAULT_WALL_SKEW_MS})`,
      })
      .option('host-skew', {
        type: 'number',
        describe: `With several histories: bound on how far the wall clocks that recorded them are apart, ms (default ${DEFAULT_HOST_SKEW_MS} across machines, 0 when they name one machine)`,
      })
      .option('compat', {
        choices: ['interface', 'production'] as const,
        default: 'interface' as const,
        describe: 'production: a refill leaves a balance ≥ its amount alone',
      })
      .option('json', { type: 'boolean', default: false, describe: 'Print the verdict as JSON' })
      .example(
        ...example(
          '$0 check --consistency production reports/20270115T120000Z-mixed',
          "judged by the production service's promises: an over-spend or over-admission within its documented bounds is within promise (exit 0), beyond them violated (exit 100)",
        ),
      )
      .example(
        ...example(
          '$0 check reports/20270115T120000Z-credits-drain',
          'exits as the run did: 0 when everything holds, 100 when an invariant is violated or the oracle differs, 99 for a failed threshold, 94 when a killed run left the history cut short',
        ),
      )
      .example(
        ...example(
          '$0 check reports/setup/* reports/*-segment-*',
          'the invariants across segments: a key spent by several segments obeys its bounds on the union of their calls',
        ),
      ) as unknown as Argv<CheckArgs>,
  handler: async (args: ArgumentsCamelCase<CheckArgs>) => {
    process.exitCode = await checkCommand(args);
  },
};
