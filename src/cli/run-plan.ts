/**
 * `keysim run`'s plan, checked and resolved before any prompt and before anything is sent: the
 * configuration file, the scenarios (files loaded and checked here), their load settings, the
 * thresholds, the segment and shared fixtures, and the outputs. Every mistake in the flags is a
 * usage error here, in the order the checks were always made.
 */
import { DEFAULT_SCENARIO } from '../../scenarios/index.js';
import { resolveScenarios } from './scenario-files.js';
import { requiresClock } from '../load/scenario/index.js';
import type { LoadSettings, Scenario } from '../load/scenario/index.js';
import { type Threshold, parseThreshold } from '../load/run/index.js';
import { UsageError } from './exit-codes.js';
import { deadAfterFlag, generatorLimitsOf, settingsFor } from './run-settings.js';
import { loadRunConfig } from './config-file.js';
import { withConfig } from './run-config.js';
import { RunOutputs } from './run-outputs.js';
import { type Baselines, prepareBaselines } from './run-baseline.js';
import { type FixturesFile, readFixturesFile } from './fixtures-file.js';
import { segmentFlag, segmentSettings, startAtFlag, WORKER_CHILD_ENV } from './segment-flags.js';
import type { GivenArgs, RunArgs } from './run-args.js';
import { promisesOf } from './promise-flags.js';
import type { PromiseSet } from '../load/promises/index.js';

export interface RunPlan {
  args: RunArgs;
  /** The scenarios as named on the command line (the default one when none). */
  names: string[];
  scenarios: Array<Scenario<unknown>>;
  /** Each scenario's load settings, by index (this segment's share when --segment). */
  settings: LoadSettings[];
  /** The --threshold flags; a scenario's own are added to them. */
  thresholds: Threshold[];
  deadTargetMs: number | undefined;
  /** The set-up --setup-only wrote, read back (the set-up is then skipped). */
  sharedFixtures: FixturesFile | undefined;
  segment: ReturnType<typeof segmentFlag>;
  startAt: Date | undefined;
  generatorLimits: ReturnType<typeof generatorLimitsOf>;
  outputs: RunOutputs;
  baselines: Baselines | undefined;
  /** The promise set the invariants are judged against (--consistency, --promise, the config file); undefined: exact. */
  promises: PromiseSet | undefined;
}

export async function prepareRun(given: GivenArgs): Promise<RunPlan> {
  const config = await loadRunConfig(given.config);
  const args = withConfig(given, config);
  const promises = promisesOf(args, config?.promises);
  const names = args.scenario.length === 0 ? [DEFAULT_SCENARIO] : args.scenario;
  const thresholds: Threshold[] = args.threshold.map((expression) => {
    const parsed = parseThreshold(expression);
    if (!parsed.ok) throw new UsageError(parsed.error);
    return parsed.threshold;
  });
  const scenarios = (await resolveScenarios(names)).map((s) => s.scenario);
  const settings = scenarios.map((s) => settingsFor(s, args, config?.shape));
  const deadTargetMs = deadAfterFlag(args.deadAfter);
  checkFlagCombinations(args, names, scenarios);
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
  return { args, names, scenarios, settings, thresholds, deadTargetMs, sharedFixtures, segment, startAt, generatorLimits, outputs, baselines, promises };
}

/** The flags that contradict each other or the scenarios, each refused with what to drop or add. */
function checkFlagCombinations(args: RunArgs, names: readonly string[], scenarios: ReadonlyArray<Scenario<unknown>>): void {
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
}
