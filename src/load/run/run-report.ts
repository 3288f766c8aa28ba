/**
 * The end of a run, once the load is over: its figures, its checks (the per-response checks, a
 * target that stopped answering, the scenario's own end-of-run checks) and the RunReport they are
 * assembled into, thresholds last since they read the rest of the report.
 */
import { type RuleTally, judgedRuleCoverage } from '../rules/index.js';
import { cpus, totalmem } from 'node:os';
import {
  type CheckResult,
  type GeneratorSection,
  type InvariantsSection,
  type Measure,
  type OperationStats,
  REPORT_SCHEMA,
  REPORT_VERSION,
  type ResourcesSection,
  type RulesSection,
  type RunReport,
} from '../../report/model.js';
import { type TargetStoppedVerdict, describeTargetStopped } from '../answers/index.js';
import type { Recorder } from '../metrics/index.js';
import { LATE_THRESHOLD_MS, type RunOptions } from './run-options.js';
import type { PhasesOutcome } from './run-phases.js';
import type { Operation, RunResults, Scenario, ScenarioContext } from '../scenario/index.js';
import { evaluateThresholds } from './thresholds.js';
import { TARGET_STOPPED_CHECK } from '../../report/verdict.js';
import { answersPassedText } from '../../report/checks-text.js';

// The failed check that marks a run ended early because the target stopped answering (exit 96).
export { TARGET_STOPPED_CHECK } from '../../report/verdict.js';

/** The recorder's figures over the measured phases. */
export type RunFigures = ReturnType<Recorder['finish']>;

function environment(version: string): RunReport['environment'] {
  const cpu = cpus();
  return {
    keysimVersion: version,
    node: process.version,
    platform: process.platform,
    arch: process.arch,
    cpus: cpu.length,
    cpuModel: cpu[0]?.model.trim() ?? 'unknown',
    totalMemoryBytes: totalmem(),
  };
}

/** Closes the recorder's figures and gives them to the scenario's end-of-run checks as RunResults. */
export function runResults(recorder: Recorder, phases: PhasesOutcome): { figures: RunFigures; results: RunResults } {
  const { late, dropped, measuredMs } = phases;
  const figures = recorder.finish(measuredMs);
  const byOp = new Map(figures.operations.map((o) => [o.operation, o]));
  const results: RunResults = {
    operations: figures.operations,
    overall: figures.overall,
    totals: {
      requests: recorder.requests,
      errors: recorder.errors,
      cutOff: recorder.cutOff,
      ratePerSec: figures.overall.ratePerSec,
      late,
      lateThresholdMs: LATE_THRESHOLD_MS,
      dropped,
    },
    operation: (op: Operation): OperationStats | undefined => byOp.get(op),
  };
  return { figures, results };
}

/** How the load ended, as far as the end-of-run checks are concerned. */
export interface RunEnd {
  scenario: Scenario<unknown>;
  ctx: ScenarioContext;
  fixtures: unknown;
  results: RunResults;
  recorder: Recorder;
  interrupted: boolean;
  targetStopped: TargetStoppedVerdict | undefined;
  /** Monotonic ms at which the load began, and its planned length: the dead-target verdict names both. */
  runStartMs: number;
  totalMs: number;
  /** A segment of a shared set-up: the target's state holds every segment's effects, not this one's alone. */
  sharedSetUp?: boolean;
}

/**
 * The run's checks, and the notes that say why some were skipped: the scenario's end-of-run
 * checks ask the target, so an interrupted run or a dead target skips them.
 */
export async function endOfRunChecks(end: RunEnd): Promise<{ checks: CheckResult[]; notes: string[] }> {
  const { recorder, targetStopped, scenario } = end;
  const checks: CheckResult[] = [];
  const notes: string[] = [];
  // Requests without an answer are not answers that passed: the counts and the detail keep them
  // apart. No answer is a transport error, or an answer that is not the service's (a gateway's
  // 502/504, a body cut short: unknown-outcome.ts), whose check was not asked (run-phases.ts).
  const lost = recorder.unanswered + recorder.notJudged;
  const unanswered = lost > 0 ? { unanswered: lost } : {};
  if (recorder.checkFailures > 0) {
    checks.push({
      name: 'per-response checks',
      passed: false,
      detail:
        `${recorder.checkFailures} answers failed their check, e.g. ${recorder.checkFailureExamples.slice(0, 3).join('; ')}` +
        (lost > 0 ? `; ${lost} not judged (their answer never came)` : ''),
      counts: { failed: recorder.checkFailures, total: recorder.requests, ...unanswered },
    });
  } else if (recorder.requests > 0) {
    const detail = answersPassedText(recorder.requests, lost);
    checks.push({ name: 'per-response checks', passed: true, detail, counts: { failed: 0, total: recorder.requests, ...unanswered } });
  }
  if (targetStopped !== undefined) {
    const verdict = describeTargetStopped(targetStopped, end.runStartMs, end.totalMs);
    checks.push({ name: TARGET_STOPPED_CHECK, passed: false, detail: verdict });
    notes.push(`${verdict} End-of-run checks were skipped: they ask the target.`);
  }
  if (end.interrupted) {
    notes.push('Interrupted (SIGINT): the figures cover only what ran; end-of-run checks were skipped.');
  } else if (targetStopped !== undefined) {
    // Nothing to ask a target that stopped answering.
  } else if (end.sharedSetUp === true && scenario.finish !== undefined) {
    // Its checks reconcile the target's state with this run's answers; the other segments changed that state too.
    notes.push(
      "The scenario's end-of-run checks were skipped: with a shared set-up they would see every segment's effects, not this segment's (keysim check over all the segments' histories judges the invariants across them).",
    );
  } else if (scenario.finish !== undefined) {
    try {
      checks.push(...(await scenario.finish(end.ctx, end.fixtures, end.results)));
    } catch (error) {
      checks.push({ name: 'end-of-run checks', passed: false, detail: `could not run: ${error instanceof Error ? error.message : String(error)}` });
    }
  }
  return { checks, notes };
}

/** The notes on what the generator could not send on time, or at all. */
export function sendNotes(phases: PhasesOutcome, generatorLimited: boolean): string[] {
  const notes: string[] = [];
  if (phases.dropped > 0) notes.push(`${phases.dropped} planned sends were dropped (the queue bound was reached or the run was stopped).`);
  // Whether they were too many is the generator verdict's call: the note must not contradict it.
  if (phases.late > 0) {
    notes.push(
      generatorLimited
        ? `${phases.late} sends started more than ${LATE_THRESHOLD_MS} ms after their intended time: the generator could not keep up; consider a lower --rate.`
        : `${phases.late} sends started more than ${LATE_THRESHOLD_MS} ms after their intended time, within the generator's limits: it kept its schedule.`,
    );
  }
  return notes;
}

/** Everything the report is assembled from, once every stage of the run is over. */
export interface ReportParts {
  options: RunOptions;
  startedAt: Date;
  finishedAt: Date;
  status: RunReport['status'];
  phases: PhasesOutcome;
  figures: RunFigures;
  results: RunResults;
  checks: CheckResult[];
  invariants: InvariantsSection | undefined;
  generator: GeneratorSection;
  resources: ResourcesSection | undefined;
  notes: string[];
  /** What the per-response checks judged per rule (the recorder's); absent: nothing was sent. */
  ruleTally?: RuleTally;
  /** The scenario's measures, then the history checkers'; empty or absent: the report has none. */
  measures?: Measure[];
}

/** The RunReport; its thresholds are evaluated over the rest of it. */
/** The checks the runner adds to a scenario's: they judge no rule of the service. */
const RUNNER_CHECKS: ReadonlySet<string> = new Set(['per-response checks', TARGET_STOPPED_CHECK, 'end-of-run checks']);

/**
 * What the run covered of the service's rules (rules.ts), as the report shows it: the declared
 * rules its checks, or the invariant checkers, judged at least one item of; the declared ones
 * nothing judged; the others.
 */
function rulesSection(
  declared: readonly string[],
  checks: readonly CheckResult[],
  tally: RuleTally | undefined,
  invariants: InvariantsSection | undefined,
): RulesSection {
  const invariantsChecked = new Map((invariants?.invariants ?? []).map((inv) => [inv.id, inv.checked - (inv.notJudged ?? 0)] as const));
  // The scenario's end-of-run checks only: the per-response ones are in the tally, and the runner's
  // own lines (a stopped target, checks that could not run) judge no rule.
  const own = checks.filter((c) => !RUNNER_CHECKS.has(c.name));
  const { total, exercised, notJudged, untouched } = judgedRuleCoverage({ declared, checks: own, tally, invariantsChecked });
  const ref = ({ id, title }: { id: string; title: string }) => ({ id, title });
  return { total, exercised: exercised.map(ref), notJudged: notJudged.map(ref), untouched: untouched.map(ref) };
}

export function assembleReport(parts: ReportParts): RunReport {
  const { scenario, seed, target, settings } = parts.options;
  const { figures, invariants, resources } = parts;
  const withoutThresholds: Omit<RunReport, 'thresholds'> = {
    schema: REPORT_SCHEMA,
    version: REPORT_VERSION,
    scenario: { name: scenario.name, description: scenario.description },
    status: parts.status,
    seed,
    startedAt: parts.startedAt.toISOString(),
    finishedAt: parts.finishedAt.toISOString(),
    measuredMs: Math.round(parts.phases.measuredMs),
    target: { kind: target.kind, url: target.url, ...(target.remote === true ? { remote: true } : {}) },
    settings: {
      model: settings.model,
      rate: settings.rate,
      connections: settings.connections,
      pipelining: settings.pipelining,
      durationMs: settings.durationMs,
      warmupMs: settings.warmupMs,
      timeoutMs: settings.timeoutMs,
      ...(settings.stages === undefined
        ? {}
        : { startRate: settings.startRate ?? 0, stages: settings.stages.map((st) => ({ durationMs: st.durationMs, target: st.target })) }),
    },
    environment: environment(parts.options.keysimVersion),
    phases: parts.phases.phaseReports,
    totals: parts.results.totals,
    overall: figures.overall,
    operations: figures.operations,
    timeline: figures.timeline,
    checks: parts.checks,
    ...(invariants === undefined ? {} : { invariants }),
    generator: parts.generator,
    ...(resources === undefined ? {} : { resources }),
    ...(parts.options.segment === undefined ? {} : { segment: { index: parts.options.segment.index, count: parts.options.segment.count } }),
    rules: rulesSection(scenario.rules ?? [], parts.checks, parts.ruleTally, invariants),
    // Absent when nothing was measured, so that a report without measures reads as before.
    ...(parts.measures === undefined || parts.measures.length === 0 ? {} : { measures: parts.measures }),
    notes: parts.notes,
  };
  return { ...withoutThresholds, thresholds: evaluateThresholds(parts.options.thresholds, withoutThresholds) };
}
