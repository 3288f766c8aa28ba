/** `keysim run <scenario…>`: fires scenarios at the embedded simulator or a live deployment. */
import { readdirSync, rmSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs';
import { DEFAULT_SCENARIO } from '../../../scenarios/index.js';
import { resolveScenarios } from '../scenario-files.js';
import { clockStartMs, requiresClock } from '../../load/scenario/index.js';
import { ScenarioFailedError, ScenarioRefusedError, TargetUnreachableError, runScenario } from '../../load/run/index.js';
import { RESOURCES_FILE } from '../../load/resources/index.js';
import { HISTORY_FILE } from '../../load/history/index.js';
import type { LoadSettings, Scenario } from '../../load/scenario/index.js';
import { embeddedClockOption } from '../../load/time/index.js';
import { type Target, detectUrlTarget, isLoopback, liveTarget, startEmbeddedSimulator } from '../../load/target/index.js';
import { type Threshold, parseThreshold } from '../../load/run/index.js';
import type { RunReport } from '../../report/model.js';
import { keysimVersion } from '../../version.js';
import { EXIT, type ExitCode, UsageError } from '../exit-codes.js';
import { VerdictReasons, lineStyle } from '../verdict-line.js';
import { ReportWriteError, reportFolderName, writeReport } from '../report-files.js';
import { renderSummary } from '../summary.js';
import { type LoadFlags, deadAfterFlag, generatorLimitsOf, settingsFor } from '../run-settings.js';
import { faultsFromFlags } from '../fault-flags.js';
import { loadRunConfig } from '../config-file.js';
import { withConfig } from '../run-config.js';
import { readCaFile } from '../ca-file.js';
import { bytesNeeded, createRunFolder, prepareOutFolder } from '../out-folder.js';
import { RunOutputs, writeHgrmFiles } from '../run-outputs.js';
import { type BaselineFlags, compareWithBaseline, prepareBaselines } from '../run-baseline.js';
import { type SetUpOnce, runWorkers } from '../workers.js';
import { runFlagOptions } from '../run-flags.js';
import { fixturesWriter, readFixturesFile } from '../fixtures-file.js';
import { segmentFlag, segmentSettings, startAtFlag, WORKER_CHILD_ENV } from '../segment-flags.js';
import { confirmRemote } from '../confirm-remote.js';
import { progressPrinter } from '../progress-printer.js';
import { historyLineOf } from '../history-line.js';
import { worseExitCode as worse } from '../exit-severity.js';

interface RunArgs extends LoadFlags, BaselineFlags {
  scenario: string[];
  target: string;
  seed: number;
  out: string;
  threshold: string[];
  yes: boolean;
  keep: boolean;
  quiet: boolean;
  rootKey?: string | undefined;
  /** --ca: the PEM file of the CA(s) to trust for an https target. */
  ca?: string | undefined;
  history: boolean;
  /** Set when the root key's variable comes from the configuration file (named in the error when unset). */
  rootKeyEnv?: string;
  /** With --history on the simulator: compare every answer with a replay of its journal. */
  oracle: boolean;
  /** With --history on a live target: the clock-skew bound, ms, instead of measuring it. */
  skew?: number;
  fault: string[];
  /** The generator's limits: above them the report says the generator lagged, and a threshold its lag may explain is inconclusive (exit 97). */
  maxLateShare?: number;
  maxLoopDelay?: string;
  /** JUnit XML of every run's thresholds, checks and invariants. */
  junit?: string;
  /** Per-second NDJSON of every run. */
  series?: string;
  /** HOST:PORT of a Prometheus endpoint during the runs. */
  metrics?: string;
  /** `i/N`: send this segment's striped share of the plan and write a partial report. */
  segment?: string;
  /** ISO instant at which the load starts (segments of one plan share it). */
  startAt?: string;
  /** Run the plan as this many segment processes on this machine, merged at the end. */
  workers?: number;
  /** Run the setup only and write its fixtures to --fixtures. */
  setupOnly?: boolean;
  /** The fixtures file: written by --setup-only, read (setup skipped) otherwise. */
  fixtures?: string;
}

// Where the exit code of a report is decided; re-exported for the commands and tests that import it from here.
export { exitCodeOf } from '../exit-code-of.js';

/** The flags as given: those with no value yet are filled from the configuration file, then the built-in defaults. */
type GivenArgs = Omit<RunArgs, 'target' | 'seed' | 'out' | 'history' | 'timeout' | 'pipelining'> &
  Partial<Pick<RunArgs, 'target' | 'seed' | 'out' | 'history' | 'timeout' | 'pipelining'>> & { config?: string | boolean };

export async function runCommand(given: GivenArgs): Promise<ExitCode> {
  const config = await loadRunConfig(given.config);
  const args = withConfig(given, config);
  const names = args.scenario.length === 0 ? [DEFAULT_SCENARIO] : args.scenario;
  const thresholds: Threshold[] = args.threshold.map((expression) => {
    const parsed = parseThreshold(expression);
    if (!parsed.ok) throw new UsageError(parsed.error);
    return parsed.threshold;
  });
  // Files are loaded and checked here, before any load and before any prompt.
  const scenarios = (await resolveScenarios(names)).map((s) => s.scenario);
  const settings = scenarios.map((s) => settingsFor(s, args, config?.shape));
  const deadTargetMs = deadAfterFlag(args.deadAfter);
  if (!Number.isSafeInteger(args.seed)) throw new UsageError(`--seed must be an integer, got ${String(args.seed)}.`);
  if (args.skew !== undefined && !(Number.isFinite(args.skew) && args.skew >= 0))
    throw new UsageError(`--skew must be a number of milliseconds ≥ 0, got ${String(args.skew)}.`);
  if (args.skew !== undefined && (!args.history || args.target === 'sim')) {
    throw new UsageError(
      "--skew bounds a live target's clock skew in the run's history: it needs --history and a URL --target (the simulator records its own clock).",
    );
  }
  if (args.workers !== undefined && (args.segment !== undefined || args.startAt !== undefined)) {
    throw new UsageError(
      '--workers runs the segments itself (it gives each child its --segment and --start-at): drop --segment and --start-at, or drop --workers to run one segment.',
    );
  }
  if (args.workers !== undefined && names.length !== 1)
    throw new UsageError(`--workers runs one scenario at a time, got ${names.length} (${names.join(', ')}).`);
  // Each worker would move the one simulator's clock on its own schedule.
  if (args.workers !== undefined && scenarios[0] !== undefined && requiresClock(scenarios[0]))
    throw new UsageError(
      `--workers cannot run "${scenarios[0].name}": it moves the service clock, which its segments would move each on their own. Run it in one process.`,
    );
  if (args.setupOnly === true && args.fixtures === undefined) throw new UsageError('--setup-only writes the fixtures to a file: name it with --fixtures FILE.');
  if ((args.setupOnly === true || args.fixtures !== undefined) && (names.length !== 1 || args.target === 'sim' || args.workers !== undefined)) {
    throw new UsageError(
      '--setup-only and --fixtures share one set-up of one scenario between segments on a target that outlives the run: give one scenario and a URL --target (keysim serve, or a deployment), without --workers.',
    );
  }
  // Matched by the scenario's name, as --setup-only wrote it (a scenario file is given by its path).
  const sharedFixtures =
    args.fixtures !== undefined && args.setupOnly !== true ? readFixturesFile(args.fixtures, (scenarios[0] as Scenario<unknown>).name) : undefined;
  const segment = segmentFlag(args.segment);
  const startAt = startAtFlag(args.startAt, Date.now(), process.env[WORKER_CHILD_ENV] === '1');
  if (segment !== undefined) {
    for (const [i, s] of settings.entries()) settings[i] = segmentSettings(s, segment, (scenarios[i] as Scenario<unknown>).name);
  }
  const generatorLimits = generatorLimitsOf(args);
  const outputs = new RunOutputs(args);
  const baselines = prepareBaselines(args, names);

  let makeTarget: (scenario: Scenario<unknown>) => Promise<Target>;
  // The embedded simulator, or a URL target that turned out to be a simulator whose clock keysim may move.
  let clockControl = args.target === 'sim';
  if (args.fault.length > 0 && args.target !== 'sim') {
    throw new UsageError(
      '--fault injects faults into the embedded simulator: it needs --target sim (for a running keysim serve, use its --fault or /_sim/faults.set).',
    );
  }
  const faults = faultsFromFlags(args.fault);
  if (!faults.ok) throw new UsageError(faults.message);
  // The last check, before any prompt and before anything is sent (it creates the folder if missing).
  let outFolder: string | undefined;
  const checkOut = () => prepareOutFolder(args.out, bytesNeeded(settings, args.history));
  if (args.target === 'sim') {
    // A scenario with clock.startAt gets a simulator created at that instant (its fixtures then exist before it).
    makeTarget = (scenario) => {
      const startMs = clockStartMs(scenario);
      // clockMode 'running': the simulator's clock follows real time (windows roll, refills fall due).
      return startEmbeddedSimulator({
        seed: args.seed,
        ...embeddedClockOption(scenario),
        ...(startMs === undefined ? {} : { startMs }),
        ...(args.fault.length > 0 ? { faults: faults.config } : {}),
      });
    };
  } else {
    let url: URL;
    try {
      url = new URL(args.target);
    } catch {
      throw new UsageError(`--target must be "sim" or a URL such as https://api.example.com, got "${args.target}".`);
    }
    const fromEnv = process.env.KEYSIM_ROOT_KEY;
    const rootKey = args.rootKey ?? (fromEnv === '' ? undefined : fromEnv);
    if (rootKey === undefined) {
      throw new UsageError(
        args.rootKeyEnv === undefined
          ? 'A live target needs a root key: set KEYSIM_ROOT_KEY (recommended) or pass --root-key.'
          : `A live target needs a root key: the configuration file names the variable ${args.rootKeyEnv}, which is not set (or set KEYSIM_ROOT_KEY, or pass --root-key).`,
      );
    }
    outFolder = checkOut();
    if (!isLoopback(url)) await confirmRemote(url.origin, args.yes);
    const ca = readCaFile(args.ca);
    try {
      liveTarget(args.target, rootKey);
    } catch (error) {
      throw new UsageError(error instanceof Error ? error.message : String(error));
    }
    const detected = await detectUrlTarget(args.target, rootKey, undefined, ca);
    if (detected.note !== undefined) process.stderr.write(`keysim: ${detected.note}\n`);
    clockControl = detected.target.clockControl;
    makeTarget = async () => detected.target;
  }
  outFolder ??= checkOut();
  // Listening before any load: a bad or busy address is a usage error with nothing sent.
  await outputs.startMetrics(args.metrics, (line) => process.stderr.write(`keysim: ${line}\n`));

  const controller = new AbortController();
  let sigints = 0;
  const onSigint = () => {
    sigints++;
    if (sigints > 1) process.exit(EXIT.interrupted);
    process.stderr.write('\nkeysim: stopping (SIGINT); writing a partial report. Press Ctrl-C again to quit at once.\n');
    controller.abort();
  };
  process.on('SIGINT', onSigint);

  if (args.workers !== undefined) {
    const scenario = scenarios[0] as Scenario<unknown>;
    const target = await makeTarget(scenario);
    // The setup once here, the segments in `between`, then the teardown once (docs/distributed.md#workers).
    const setUp: SetUpOnce = ({ historyPath, between }) =>
      runScenario({
        scenario,
        target,
        settings: settings[0] as LoadSettings,
        seed: args.seed,
        thresholds: [],
        keep: args.keep,
        signal: controller.signal,
        log: args.quiet ? () => undefined : (line) => process.stderr.write(`  ${line}\n`),
        warn: (line) => process.stderr.write(`keysim: ${line}\n`),
        resourcesDir: args.out,
        keysimVersion: keysimVersion(),
        oracle: false,
        generatorLimits,
        setupOnly: between,
        ...(historyPath === undefined ? {} : { historyPath }),
        ...(args.skew === undefined ? {} : { wallSkewMs: args.skew }),
      });
    try {
      return await runWorkers({
        workers: args.workers,
        scenario: scenario.name,
        seed: args.seed,
        argv: process.argv.slice(2),
        outFolder,
        target,
        quiet: args.quiet,
        history: args.history,
        setUp,
        signal: controller.signal,
      });
    } finally {
      process.off('SIGINT', onSigint);
      await target.close();
      await outputs.close();
    }
  }

  let exit: ExitCode = EXIT.ok;
  const reasons = new VerdictReasons();
  // Several scenarios: the final line names the one that decided the exit code.
  const label = (name: string) => (scenarios.length > 1 ? name : undefined);
  let ran = 0;
  try {
    for (const [i, scenario] of scenarios.entries()) {
      if (controller.signal.aborted) break;
      if (requiresClock(scenario) && !clockControl) {
        process.stderr.write(
          `keysim: skipping "${scenario.name}": it moves the service clock, which only a simulator allows (--target sim, or the URL of a keysim serve).\n`,
        );
        continue;
      }
      ran++;
      const target = await makeTarget(scenario);
      let report: RunReport;
      // The run's folder exists from the start and the history is written into it as the run goes:
      // a run that is killed leaves it there, findable, for keysim check.
      const folder = createRunFolder(
        outFolder,
        reportFolderName(new Date().toISOString(), segment === undefined ? scenario.name : `${scenario.name}-segment-${segment.index}of${segment.count}`),
      );
      const historyPath = args.history ? join(folder, HISTORY_FILE) : undefined;
      const metrics = outputs.metricsFor(basename(folder), scenario.name);
      try {
        if (!args.quiet)
          process.stderr.write(
            `keysim: running "${scenario.name}" against ${target.kind === 'live' ? target.url : target.remote === true ? `the simulator at ${target.url}` : 'the embedded simulator'}\n`,
          );
        if (historyPath !== undefined && !args.quiet) process.stderr.write(`  history: ${historyPath}\n`);
        report = await runScenario({
          scenario,
          target,
          settings: settings[i] as LoadSettings,
          seed: args.seed,
          thresholds: [...(scenario.thresholds ?? []).map((t) => parseThreshold(t)).flatMap((p) => (p.ok ? [p.threshold] : [])), ...thresholds],
          // A set-up only leaves what it created to the segments (keysim cleanup --tag deletes it after them).
          // Segments of a shared set-up leave it all to the one teardown after the last of them.
          keep: args.keep || args.setupOnly === true || sharedFixtures !== undefined,
          signal: controller.signal,
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
          ...(deadTargetMs === undefined ? {} : { deadTargetMs }),
          generatorLimits,
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
          ...(metrics.onMeasured === undefined ? {} : { onMeasured: metrics.onMeasured }),
        });
      } catch (error) {
        // Nothing ran: no report, and no folder left that looks like a run.
        if (historyPath !== undefined) rmSync(historyPath, { force: true });
        if (readdirSync(folder).length === 0) rmSync(folder, { recursive: true, force: true });
        if (process.stderr.isTTY === true && !args.quiet) process.stderr.write('\n');
        if (error instanceof TargetUnreachableError || error instanceof ScenarioFailedError) outputs.addFailure(scenario.name, error.message);
        if (error instanceof TargetUnreachableError) {
          process.stderr.write(`keysim: ${error.message}\n`);
          exit = worse(exit, EXIT.targetUnreachable);
          reasons.note(EXIT.targetUnreachable, `${scenario.name}: the target did not answer`);
          continue;
        }
        if (error instanceof ScenarioFailedError) {
          process.stderr.write(`keysim: ${error.message}\n`);
          // A refusal (an unknown operation, a clock the scenario cannot run on) is a usage error.
          const refused = error instanceof ScenarioRefusedError ? EXIT.usage : EXIT.failure;
          const code = (error.resources?.unexpectedlyLeft ?? 0) > 0 ? EXIT.resourcesLeft : refused;
          exit = worse(exit, code);
          const what = error instanceof ScenarioRefusedError ? 'was refused before its load' : 'failed before its load';
          reasons.note(code, `${scenario.name}: the scenario ${what} (${error.message.split('\n')[0] ?? ''})`);
          continue;
        }
        throw error;
      } finally {
        metrics.finish();
        await target.close();
      }
      if (process.stderr.isTTY === true && !args.quiet) process.stderr.write('\n');
      const historyLine = historyLineOf(historyPath);
      let written;
      try {
        written = writeReport(report, folder);
      } catch (error) {
        if (!(error instanceof ReportWriteError)) throw error;
        // The figures are not lost: the summary still goes to the terminal.
        process.stdout.write(`${renderSummary(report)}\n${historyLine}\n`);
        process.stderr.write(`keysim: ${error.message} The report of "${scenario.name}" was not saved.\n`);
        exit = worse(exit, EXIT.failure);
        reasons.note(EXIT.failure, `the report of "${scenario.name}" was not saved`);
        outputs.addReport(report, folder);
        continue;
      }
      process.stdout.write(`${renderSummary(report)}\nreport: ${written.html}\n${historyLine}\n`);
      exit = worse(exit, reasons.report(report, label(scenario.name)));
      try {
        writeHgrmFiles(report, folder);
      } catch (error) {
        if (!(error instanceof ReportWriteError)) throw error;
        // The report is saved; the files beside it are not.
        process.stderr.write(`keysim: ${error.message}\n`);
        exit = worse(exit, EXIT.failure);
        reasons.note(EXIT.failure, 'a file beside the report could not be written');
      }
      outputs.addReport(report, folder);
      if (baselines !== undefined) {
        const write = (text: string) => process.stdout.write(text);
        const compared = compareWithBaseline(baselines, report, folder, write, (text) => process.stderr.write(text));
        exit = worse(exit, compared);
        if (compared === EXIT.compareWorse) reasons.note(compared, `${scenario.name}: a watched figure is worse than the baseline's`);
      }
    }
  } finally {
    process.off('SIGINT', onSigint);
    await outputs.close();
  }
  if (outputs.writeFailed) {
    exit = worse(exit, EXIT.failure);
    reasons.note(EXIT.failure, 'an output file (--junit, --series) could not be written');
  }
  if (ran === 0 && !controller.signal.aborted) {
    // A QA job gating on the exit code must not go green having tested nothing.
    process.stderr.write(
      `keysim: nothing was tested: every requested scenario was skipped (${names.join(', ')}). Run them against the simulator (--target sim), or choose scenarios that run on a live target (keysim list).\n`,
    );
    return EXIT.usage;
  }
  // One verdict, said once, after every scenario: what a CI log is searched for.
  process.stdout.write(`${reasons.line(exit, lineStyle(process.stdout))}\n`);
  return exit;
}

export const runCommandModule: CommandModule<object, GivenArgs> = {
  command: 'run [scenario..]',
  describe: `Run scenarios (default: ${DEFAULT_SCENARIO}) and write reports`,
  builder: (y: Argv) => runFlagOptions(y) as unknown as Argv<GivenArgs>,
  handler: async (args: ArgumentsCamelCase<GivenArgs>) => {
    process.exitCode = await runCommand(args);
  },
};
