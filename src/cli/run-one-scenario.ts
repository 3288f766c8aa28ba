/**
 * One scenario of `keysim run`: its run folder, the run against its target, then its report saved
 * and judged. A scenario that fails before its load, or whose report cannot be saved, is noted in
 * the tally and the next one runs.
 */
import { readdirSync, rmSync } from 'node:fs';
import { basename, join } from 'node:path';
import { ScenarioFailedError, ScenarioRefusedError, TargetUnreachableError, runScenario } from '../load/run/index.js';
import { RESOURCES_FILE } from '../load/resources/index.js';
import { HISTORY_FILE } from '../load/history/index.js';
import type { LoadSettings, Scenario } from '../load/scenario/index.js';
import type { Target } from '../load/target/index.js';
import { parseThreshold } from '../load/run/index.js';
import type { RunReport } from '../report/model.js';
import { keysimVersion } from '../version.js';
import { EXIT } from './exit-codes.js';
import { ReportWriteError, reportFolderName, writeReport } from './report-files.js';
import { renderSummary } from './summary.js';
import { createRunFolder } from './out-folder.js';
import { writeHgrmFiles } from './run-outputs.js';
import { compareWithBaseline } from './run-baseline.js';
import { fixturesWriter } from './fixtures-file.js';
import { progressPrinter } from './progress-printer.js';
import { historyLineOf } from './history-line.js';
import type { RunPlan } from './run-plan.js';
import type { RunTally } from './run-tally.js';

/** Where one scenario's run writes. */
interface RunPlace {
  /** The scenario's index in the plan (its settings). */
  index: number;
  scenario: Scenario<unknown>;
  target: Target;
  folder: string;
  historyPath: string | undefined;
  signal: AbortSignal;
  onMeasured: ((operation: string, latencyMs: number | undefined, isError: boolean) => void) | undefined;
}

/** `label`: the scenario's name in the final line when the run has several (undefined: one). */
export async function runOneScenario(
  plan: RunPlan,
  index: number,
  target: Target,
  outFolder: string,
  signal: AbortSignal,
  tally: RunTally,
  label: string | undefined,
): Promise<void> {
  const { args, outputs, segment } = plan;
  const scenario = plan.scenarios[index] as Scenario<unknown>;
  // The run's folder exists from the start and the history is written into it as the run goes:
  // a run that is killed leaves it there, findable, for keysim check.
  const folder = createRunFolder(
    outFolder,
    reportFolderName(new Date().toISOString(), segment === undefined ? scenario.name : `${scenario.name}-segment-${segment.index}of${segment.count}`),
  );
  const historyPath = args.history ? join(folder, HISTORY_FILE) : undefined;
  const metrics = outputs.metricsFor(basename(folder), scenario.name);
  let report: RunReport;
  try {
    if (!args.quiet)
      process.stderr.write(
        `keysim: running "${scenario.name}" against ${target.kind === 'live' ? target.url : target.remote === true ? `the simulator at ${target.url}` : 'the embedded simulator'}\n`,
      );
    if (historyPath !== undefined && !args.quiet) process.stderr.write(`  history: ${historyPath}\n`);
    report = await runScenario(scenarioOptions(plan, { index, scenario, target, folder, historyPath, signal, onMeasured: metrics.onMeasured }));
  } catch (error) {
    failedBeforeLoad(plan, scenario.name, folder, historyPath, tally, error);
    return;
  } finally {
    metrics.finish();
    await target.close();
  }
  if (process.stderr.isTTY === true && !args.quiet) process.stderr.write('\n');
  saveAndJudge(plan, report, scenario.name, folder, historyLineOf(historyPath), tally, label);
}

/** The runner's options for one scenario of the plan. */
function scenarioOptions(plan: RunPlan, place: RunPlace): Parameters<typeof runScenario>[0] {
  const { args, sharedFixtures, segment, startAt, deadTargetMs, promises } = plan;
  const { scenario, target, folder, historyPath } = place;
  return {
    scenario,
    target,
    settings: plan.settings[place.index] as LoadSettings,
    seed: args.seed,
    thresholds: [...(scenario.thresholds ?? []).map((t) => parseThreshold(t)).flatMap((p) => (p.ok ? [p.threshold] : [])), ...plan.thresholds],
    // A set-up only leaves what it created to the segments (keysim cleanup --tag deletes it after them).
    // Segments of a shared set-up leave it all to the one teardown after the last of them.
    keep: args.keep || args.setupOnly === true || sharedFixtures !== undefined,
    signal: place.signal,
    onProgress: progressPrinter(args.quiet, scenario.name),
    log: args.quiet ? () => undefined : (line) => process.stderr.write(`  ${line}\n`),
    warn: (line) => process.stderr.write(`keysim: ${line}\n`),
    resourcesDir: args.out,
    // A segment of a shared set-up hands what its load created to the teardown after the last segment.
    ...(sharedFixtures === undefined ? {} : { resourcesFile: join(folder, RESOURCES_FILE) }),
    keysimVersion: keysimVersion(),
    ...(historyPath === undefined ? {} : { historyPath }),
    oracle: args.oracle,
    ...(args.skew === undefined ? {} : { wallSkewMs: args.skew }),
    ...(promises === undefined ? {} : { promises }),
    ...(deadTargetMs === undefined ? {} : { deadTargetMs }),
    generatorLimits: plan.generatorLimits,
    ...(segment === undefined ? {} : { segment }),
    ...(sharedFixtures === undefined
      ? {}
      : {
          fixtures: {
            value: sharedFixtures.fixtures,
            tag: sharedFixtures.tag,
            ...(sharedFixtures.keyIds === undefined ? {} : { keyIds: sharedFixtures.keyIds }),
          },
        }),
    ...(args.setupOnly === true && args.fixtures !== undefined ? { setupOnly: fixturesWriter(args.fixtures, scenario.name, args.seed, target.url) } : {}),
    ...(startAt === undefined ? {} : { startAt }),
    ...(place.onMeasured === undefined ? {} : { onMeasured: place.onMeasured }),
  };
}

/** The target did not answer, or the scenario failed or was refused before its load: noted; anything else is thrown on. */
function failedBeforeLoad(plan: RunPlan, name: string, folder: string, historyPath: string | undefined, tally: RunTally, error: unknown): void {
  // Nothing ran: no report, and no folder left that looks like a run.
  if (historyPath !== undefined) rmSync(historyPath, { force: true });
  if (readdirSync(folder).length === 0) rmSync(folder, { recursive: true, force: true });
  if (process.stderr.isTTY === true && !plan.args.quiet) process.stderr.write('\n');
  if (error instanceof TargetUnreachableError || error instanceof ScenarioFailedError) plan.outputs.addFailure(name, error.message);
  if (error instanceof TargetUnreachableError) {
    process.stderr.write(`keysim: ${error.message}\n`);
    tally.worsen(EXIT.targetUnreachable, `${name}: the target did not answer`);
    return;
  }
  if (error instanceof ScenarioFailedError) {
    process.stderr.write(`keysim: ${error.message}\n`);
    // A refusal (an unknown operation, a clock the scenario cannot run on) is a usage error.
    const refused = error instanceof ScenarioRefusedError ? EXIT.usage : EXIT.failure;
    const code = (error.resources?.unexpectedlyLeft ?? 0) > 0 ? EXIT.resourcesLeft : refused;
    const what = error instanceof ScenarioRefusedError ? 'was refused before its load' : 'failed before its load';
    tally.worsen(code, `${name}: the scenario ${what} (${error.message.split('\n')[0] ?? ''})`);
    return;
  }
  throw error;
}

/** The report written and summed up, its verdict tallied, the files beside it, the baseline's comparison. */
function saveAndJudge(plan: RunPlan, report: RunReport, name: string, folder: string, historyLine: string, tally: RunTally, label: string | undefined): void {
  const { outputs, baselines } = plan;
  let written;
  try {
    written = writeReport(report, folder);
  } catch (error) {
    if (!(error instanceof ReportWriteError)) throw error;
    // The figures are not lost: the summary still goes to the terminal.
    process.stdout.write(`${renderSummary(report)}\n${historyLine}\n`);
    process.stderr.write(`keysim: ${error.message} The report of "${name}" was not saved.\n`);
    tally.worsen(EXIT.failure, `the report of "${name}" was not saved`);
    outputs.addReport(report, folder);
    return;
  }
  process.stdout.write(`${renderSummary(report)}\nreport: ${written.html}\n${historyLine}\n`);
  tally.worsen(tally.reasons.report(report, label));
  try {
    writeHgrmFiles(report, folder);
  } catch (error) {
    if (!(error instanceof ReportWriteError)) throw error;
    // The report is saved; the files beside it are not.
    process.stderr.write(`keysim: ${error.message}\n`);
    tally.worsen(EXIT.failure, 'a file beside the report could not be written');
  }
  outputs.addReport(report, folder);
  if (baselines !== undefined) {
    const write = (text: string) => process.stdout.write(text);
    const compared = compareWithBaseline(baselines, report, folder, write, (text) => process.stderr.write(text));
    tally.worsen(compared, compared === EXIT.compareWorse ? `${name}: a watched figure is worse than the baseline's` : undefined);
  }
}
