/**
 * What `keysim check` re-judges of a run besides the invariants, so that it reaches the run's own
 * verdict and exit code: the oracle, replayed again from the journal the run saved
 * (load/journal-file.ts), and the thresholds, re-judged from the histograms in its report.json.
 * What needs the live answers or the target — per-response checks, resources left on it, the
 * target stopping, the generator's pace — cannot be re-checked from files: it is taken from the
 * report and said to be so.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { HistoryEvent } from '../load/history/index.js';
import { JOURNAL_FILE, type JournalEnd, openJournalFile } from '../load/history/index.js';
import { OracleReplay } from '../load/oracle/index.js';
import { TARGET_STOPPED_CHECK } from '../load/run/index.js';
import { evaluateThresholds, parseThreshold, type Threshold } from '../load/run/index.js';
import { parseReport } from '../report/index.js';
import type { Measure, OracleSection, RunReport, ThresholdResult } from '../report/model.js';
import { measureLine, withHistoryMeasures } from '../report/index.js';
import { exitCodeOf } from './exit-code-of.js';
import { runVerdict } from '../report/verdict.js';
import { EXIT, type ExitCode } from './exit-codes.js';

/** The oracle judged again from the saved journal, or why it could not be. */
export interface OracleRecheck {
  section?: OracleSection;
  /** Why it was not re-checked (no journal, an unreadable one). */
  notRechecked?: string;
}

/** Replays the run folder's saved journal and compares it with the history's answers. */
export async function recheckOracle(folder: string, events: readonly HistoryEvent[]): Promise<OracleRecheck> {
  const file = join(folder, JOURNAL_FILE);
  if (!existsSync(file)) {
    return {
      notRechecked: `the oracle is not re-checked: this run folder has no simulator journal (${JOURNAL_FILE}). Runs on the simulator with --history save it; a live target has none, and a run with --no-oracle or from an older keysim saved none.`,
    };
  }
  let journal;
  try {
    journal = await openJournalFile(file);
  } catch (error) {
    return { notRechecked: `the oracle is not re-checked: ${error instanceof Error ? error.message : String(error)}` };
  }
  let replay: OracleReplay;
  try {
    replay = OracleReplay.create(journal.start);
  } catch (error) {
    return {
      notRechecked: `the oracle is not re-checked: the saved journal's start cannot be replayed (${error instanceof Error ? error.message : String(error)})`,
    };
  }
  let failure: string | undefined;
  try {
    for await (const entry of journal.entries) replay.replay(entry);
  } catch (error) {
    failure = error instanceof Error ? error.message : String(error);
  }
  const saved = journal.end();
  // A journal cut short (a killed run) holds a correct prefix: what it lacks is skipped, as after an overflow.
  const end: JournalEnd = saved ?? { overflowed: true };
  if (failure !== undefined && end.failure === undefined) end.failure = failure;
  const section = replay.compare(events, end);
  if (saved === undefined)
    section.note = [`the saved journal was cut short (${replay.replayed} entries): answers after it were not compared`, section.note]
      .filter((n) => n !== undefined)
      .join('; ');
  return { section };
}

/** The run's report.json beside the history, when there is a readable one. */
export function runReportIn(folder: string): RunReport | undefined {
  const file = join(folder, 'report.json');
  if (!existsSync(file)) return undefined;
  const parsed = parseReport(readFileSync(file, 'utf8'));
  return parsed.ok ? parsed.report : undefined;
}

/**
 * The report's thresholds judged again from its own figures (histograms, counts), in the report's
 * order. One this keysim cannot parse (written by another version) keeps the report's own result,
 * its detail saying it was not re-judged: dropping it would turn its failure into a pass.
 */
export function rejudgeThresholds(report: RunReport): ThresholdResult[] {
  const parsed = report.thresholds.map((t) => ({ recorded: t, parsed: parseThreshold(t.expression) }));
  const thresholds: Threshold[] = parsed.flatMap((p) => (p.parsed.ok ? [p.parsed.threshold] : []));
  const judged = evaluateThresholds(thresholds, report);
  let next = 0;
  return parsed.map(({ recorded, parsed: p }) =>
    p.ok
      ? (judged[next++] as ThresholdResult)
      : { ...recorded, detail: `${recorded.detail} (not re-judged: this keysim cannot read the expression; the run's report's result)` },
  );
}

/**
 * The oracle's verdict `keysim check` goes by: a re-check can confirm the report's verdict or find
 * a worse one (a saved journal altered since); when it cannot judge (`not-run`, or not re-checked
 * at all) or would judge better than the run did, the report's own verdict stands and is said to
 * be taken from it. Never from a re-check that could not run: that would turn a run's `differs`
 * (exit 100) into a pass.
 */
export function oracleVerdictOf(
  rechecked: OracleSection | undefined,
  recorded: OracleSection | undefined,
): { section: OracleSection | undefined; fromReport: boolean } {
  if (rechecked === undefined || rechecked.verdict === 'not-run') return { section: recorded ?? rechecked, fromReport: recorded !== undefined };
  if (recorded === undefined || rechecked.verdict === 'differs' || recorded.verdict === 'agrees') return { section: rechecked, fromReport: false };
  return { section: recorded, fromReport: true };
}

/** What the files cannot re-check, with what the run's report says of it. */
export function notRecheckable(report: RunReport): string[] {
  const lines: string[] = [];
  const failedChecks = report.checks.filter((c) => !c.passed && c.name !== TARGET_STOPPED_CHECK);
  const stopped = report.checks.find((c) => c.name === TARGET_STOPPED_CHECK && !c.passed);
  lines.push(
    `per-response checks are not re-checked (they need the live answers): the run's report says ${failedChecks.length === 0 ? `all ${report.checks.length} passed` : failedChecks.map((c) => `"${c.name}" FAILED (${c.detail})`).join('; ')}`,
  );
  if (stopped !== undefined) lines.push(`the target stopped answering during the run (the run's report: ${stopped.detail}); not re-checked`);
  const left = report.resources?.unexpectedlyLeft ?? 0;
  if (left > 0) lines.push(`the run left ${left} resource${left === 1 ? '' : 's'} on the target (the run's report; not re-checked: it needs the target)`);
  if (report.generator?.limited === true) lines.push("the load generator could not keep its schedule (the run's report): the run is inconclusive");
  return lines;
}

/**
 * The exit code the run's verdict calls for, with the invariants, the oracle and the thresholds as
 * judged here and the rest as the report recorded it (interrupted or not: check judges what was saved).
 */
export function rerunVerdict(
  report: RunReport,
  judged: { violated: boolean; oracle: OracleSection | undefined; thresholds: ThresholdResult[] },
): { exitCode: ExitCode; reason: string } {
  const base = report.invariants ?? {
    verdict: 'clean' as const,
    operations: 0,
    checked: { keys: 0, verifications: 0, rateLimitChecks: 0 },
    invariants: [],
    violations: [],
    notes: [],
  };
  const { section: oracle } = oracleVerdictOf(judged.oracle, report.invariants?.oracle);
  const invariants = { ...base, verdict: judged.violated ? ('violated' as const) : ('clean' as const), ...(oracle === undefined ? {} : { oracle }) };
  const rejudged = { ...report, status: 'completed', invariants, thresholds: judged.thresholds } as RunReport;
  // The same reading as after the run (runVerdict), so check words its verdict as run did.
  return { exitCode: exitCodeOf(rejudged), reason: runVerdict(rejudged).reason };
}

/** What `keysim check` judged of one run besides its invariants, and the exit code it comes to. */
export interface RunRecheck {
  oracle: OracleRecheck;
  /** Re-judged from report.json; undefined without a readable one. */
  thresholds?: ThresholdResult[];
  /** What could not be re-checked, and what the report says of it. */
  notRechecked: string[];
  /** The run's measures as re-judged: the scenario's from its report, the history checkers' measured again; absent: none. */
  measures?: Measure[];
  exitCode: ExitCode;
  /** The exit code in words. */
  verdict: string;
}

const VERDICTS: Partial<Record<ExitCode, string>> = {
  [EXIT.ok]: 'passed',
  [EXIT.invariantViolated]: 'an invariant is violated or the oracle differs',
  [EXIT.checkFailed]: 'a per-response check failed',
  [EXIT.thresholdFailed]: 'a threshold failed',
  [EXIT.generatorLimited]: 'inconclusive: the load generator could not keep its schedule, or a check or the oracle judged nothing',
  [EXIT.resourcesLeft]: 'resources were left on the target',
  [EXIT.targetStopped]: 'the target stopped answering',
};

/**
 * Re-checks one run folder's oracle and thresholds; `invariantsHold`: the invariants' verdict here,
 * `historyMeasures`: what the checkers measured here (they replace the report's, thresholds read them).
 */
export async function recheckRun(
  folder: string,
  events: readonly HistoryEvent[],
  invariantsHold: boolean,
  historyMeasures?: readonly Measure[],
): Promise<RunRecheck> {
  const oracle = await recheckOracle(folder, events);
  const saved = runReportIn(folder);
  const measures = withHistoryMeasures(saved?.measures, historyMeasures);
  const report = saved === undefined ? undefined : withMeasures(saved, measures);
  const notRechecked: string[] = [];
  const said = report?.invariants?.oracle;
  if (oracle.notRechecked !== undefined) {
    notRechecked.push(
      said === undefined
        ? oracle.notRechecked
        : `${oracle.notRechecked} The run's report says the oracle ${said.verdict}${said.verdict === 'differs' ? ` (${said.differences} differences)` : ''}: the verdict takes that from the report.`,
    );
  } else if (said !== undefined && oracleVerdictOf(oracle.section, said).fromReport) {
    notRechecked.push(
      `the oracle's re-check ${oracle.section?.verdict === 'not-run' ? 'could not judge' : `says it ${oracle.section?.verdict ?? 'did not run'}`}, which cannot overrule the run's own verdict: the run's report says the oracle ${said.verdict}${said.verdict === 'differs' ? ` (${said.differences} differences)` : ''}, and the verdict takes that from the report.`,
    );
  }
  let exitCode: ExitCode;
  let thresholds: ThresholdResult[] | undefined;
  let reason: string | undefined;
  if (report === undefined) {
    notRechecked.push('thresholds and per-response checks are not re-checked: this folder has no readable report.json (a killed run writes none)');
    exitCode = !invariantsHold || oracle.section?.verdict === 'differs' ? EXIT.invariantViolated : EXIT.ok;
  } else {
    thresholds = rejudgeThresholds(report);
    notRechecked.push(...notRecheckable(report));
    const rejudged = rerunVerdict(report, { violated: !invariantsHold, oracle: oracle.section, thresholds });
    exitCode = rejudged.exitCode;
    reason = rejudged.reason;
  }
  return {
    oracle,
    ...(thresholds === undefined ? {} : { thresholds }),
    notRechecked,
    ...(measures === undefined ? {} : { measures }),
    exitCode,
    verdict: reason ?? VERDICTS[exitCode] ?? `exit ${exitCode}`,
  };
}

/** The report with these measures (none: without the field, as a report that measured nothing). */
function withMeasures(report: RunReport, measures: Measure[] | undefined): RunReport {
  const copy: RunReport = { ...report };
  if (measures === undefined) delete copy.measures;
  else copy.measures = measures;
  return copy;
}

/** The re-check as lines of text. */
export function renderRecheck(recheck: RunRecheck): string[] {
  const lines: string[] = [];
  const o = recheck.oracle.section;
  if (o !== undefined) {
    const counts = `${o.compared} answers compared with a replay of the saved journal (${JOURNAL_FILE}), ${o.skipped} skipped`;
    if (o.verdict === 'differs') {
      lines.push(`oracle  DIFFERS: ${o.differences} of ${counts}`);
      for (const d of o.examples) lines.push(`  #${d.seq} ${d.op} ${d.field}: expected ${d.expected} (replay), received ${d.received}`);
    } else lines.push(`oracle  ${o.verdict === 'agrees' ? 'agrees' : 'NOT RUN'}: ${counts}`);
    if (o.note !== undefined) lines.push(`  ${o.note}`);
  }
  if (recheck.thresholds !== undefined) {
    const failed = recheck.thresholds.filter((t) => !t.passed);
    lines.push(
      `thresholds  re-judged from report.json's histograms and counts: ${recheck.thresholds.length - failed.length} of ${recheck.thresholds.length} passed`,
    );
    for (const t of failed) lines.push(`  ${t.inconclusive === true ? 'INCONCLUSIVE' : 'FAILED'} ${t.expression}: ${t.detail}`);
    for (const t of recheck.thresholds)
      if (t.passed && t.detail.includes('(not re-judged')) lines.push(`  passed (not re-judged) ${t.expression}: ${t.detail}`);
  }
  for (const m of recheck.measures ?? [])
    lines.push(`measure  ${measureLine(m)}${m.source === 'history' ? ' (measured again over the history)' : " (the run's report)"}`);
  for (const line of recheck.notRechecked) lines.push(`note: ${line}`);
  return lines;
}
