/**
 * The steps at a run's end that runner.ts takes: the cleanup (once, whatever happened), the
 * report of a set-up-only run, and a segment's own verdict over its history.
 */
import type { ResourcesSection, RunReport } from '../../report/model.js';
import type { RunSkew } from './clock-skew.js';
import { DEFAULT_GENERATOR_LIMITS, type GeneratorMonitor } from '../metrics/index.js';
import type { HistoryWriter } from '../history/index.js';
import type { Recorder } from '../metrics/index.js';
import type { ResourceLedger } from '../resources/index.js';
import { trackingServiceApi } from '../resources/index.js';
import { cleanUpRun } from '../resources/index.js';
import { type HistoryVerdict, historyInvariants } from './run-invariants.js';
import type { RunOptions } from './run-options.js';
import { assembleReport, endOfRunChecks, runResults, sendNotes } from './run-report.js';
import type { RunOracle } from './run-steps.js';
import type { PhasesOutcome, RunPlan } from './run-phases.js';
import type { LoadStop } from './run-stop.js';
import { ScenarioFailedError } from '../scenario/index.js';
import type { MeasureCollector, ScenarioContext, SimulatorAdmin } from '../scenario/index.js';
import { type HttpJsonClient, serviceApi } from '../target/index.js';

/**
 * The run's cleanup, done once: before the history closes (the cleanup's calls go into it),
 * whatever happened before.
 */
interface CleanupParts {
  persistent: boolean;
  cleanups: Array<() => Promise<void>>;
  client: HttpJsonClient;
  admin: SimulatorAdmin | undefined;
  ledger: ResourceLedger;
  log: (line: string) => void;
  warn: (line: string) => void;
}

export class RunCleanup {
  #resources: ResourcesSection | undefined;
  readonly options: RunOptions;
  readonly parts: CleanupParts;

  constructor(options: RunOptions, parts: CleanupParts) {
    this.options = options;
    this.parts = parts;
  }

  /** What the cleanup did, once it ran. */
  get resources(): ResourcesSection | undefined {
    return this.#resources;
  }

  async run(): Promise<ResourcesSection> {
    const { options } = this;
    const { client, ledger } = this.parts;
    this.#resources ??= await cleanUpRun({
      persistent: this.parts.persistent,
      keep: options.keep,
      cleanups: this.parts.cleanups,
      // The sweep's lookups are not part of the run: they stay out of the history.
      sweep: {
        api: trackingServiceApi(serviceApi(client), ledger),
        admin: this.parts.admin,
        ledger,
        namespaces: process.env.KEYSIM_NAMESPACE ? [process.env.KEYSIM_NAMESPACE] : [],
      },
      url: options.target.url,
      log: this.parts.log,
      warn: this.parts.warn,
      ...(options.resourcesFile === undefined ? {} : { handoverPath: options.resourcesFile }),
    });
    return this.#resources;
  }

  /** After a failed setup or phase: what was created is still deleted, while the history is open. */
  async afterFailure(error: unknown): Promise<void> {
    if (this.#resources !== undefined) return;
    const section = await this.run().catch((cleanupError: unknown) => {
      this.parts.warn(`cleanup failed: ${cleanupError instanceof Error ? cleanupError.message : String(cleanupError)}`);
      return undefined;
    });
    if (error instanceof ScenarioFailedError && section !== undefined) error.resources = section;
  }
}

/**
 * A set-up-only run: hands the fixtures to the segments (options.setupOnly), takes over what their
 * load created (resource-handover.ts), cleans up and reports that no load was sent.
 */
export async function setUpOnlyReport(
  options: RunOptions,
  parts: {
    fixtures: unknown;
    tag: string;
    history: HistoryWriter | undefined;
    ledger: ResourceLedger;
    recorder: Recorder;
    generatorMonitor: GeneratorMonitor;
    cleanup: RunCleanup;
    startedAt: Date;
    now: () => Date;
    /** What the set-up reported with ctx.measure. */
    measures: MeasureCollector;
  },
): Promise<RunReport> {
  const { scenario, target } = options;
  const { fixtures, tag } = parts;
  const setupOnly = options.setupOnly as NonNullable<RunOptions['setupOnly']>;
  const keyIds = parts.history?.keys.entries();
  const handedBack = await setupOnly({
    value: scenario.sharedFixtures === undefined ? fixtures : scenario.sharedFixtures.save(fixtures),
    tag,
    ...(keyIds === undefined ? {} : { keyIds }),
  });
  // What the segments' load created is deleted by this one teardown (resource-handover.ts).
  for (const entry of handedBack ?? []) parts.ledger.created(entry);
  const none = { phaseReports: [], late: 0, dropped: 0, measuredMs: 0 };
  const { figures, results } = runResults(parts.recorder, none);
  await parts.cleanup.run();
  const generator = parts.generatorMonitor.section({ ...DEFAULT_GENERATOR_LIMITS, ...options.generatorLimits });
  const notes = [
    `Set-up only: the fixtures were written for the segments; no load was sent. keysim cleanup --target ${target.url} --tag ${tag} deletes what the set-up and the segments created.`,
  ];
  // Nothing was sent: there is nothing for thresholds to judge.
  return assembleReport({
    options: { ...options, thresholds: [] },
    startedAt: parts.startedAt,
    finishedAt: parts.now(),
    status: 'completed',
    phases: none,
    figures,
    results,
    checks: [],
    invariants: undefined,
    generator,
    resources: parts.cleanup.resources,
    notes,
    measures: parts.measures.measures(),
  });
}

/** Closes the history and checks it (run-invariants.ts); a segment judges only its own share. */
export async function runHistoryInvariants(
  options: RunOptions,
  history: HistoryWriter,
  oracle: RunOracle,
  skew: RunSkew | undefined,
  interrupted: boolean,
): Promise<HistoryVerdict> {
  // Other segments' calls on the same keys and limits are not in a segment's history: it judges
  // only what stays sound without them (docs/checking.md#one-segments-own-verdict), so that a
  // segment never fails on a false alarm; the rest is judged across segments.
  const segment = options.segment === undefined ? undefined : { sharedKeyIds: (options.fixtures?.keyIds ?? []).map(([, keyId]) => keyId) };
  const verdict = await historyInvariants({
    history,
    path: options.historyPath as string,
    interrupted,
    oracle: oracle.oracle,
    oracleTimer: oracle.oracleTimer,
    oracleProblem: oracle.oracleProblem,
    skew,
    target: options.target,
    timeoutMs: options.settings.timeoutMs,
    ...(segment === undefined ? {} : { segment }),
    ...(options.promises === undefined ? {} : { promises: options.promises }),
  });
  if (options.segment !== undefined) {
    verdict.section.notes.unshift(
      "This segment's own verdict, over its own history: the other segments' operations on the same keys and rate limits are not in it (with a shared set-up, neither is the keys' creation), so it judges only what holds on part of the operations. keysim merge, or keysim check over the set-up's and every segment's history, judges every invariant across segments.",
    );
  }
  return verdict;
}

/**
 * The report of a run that sent its load: the end-of-run checks (before the cleanup, which deletes
 * what they read), the cleanup, the history's invariants, the generator's own section.
 */
export async function loadedRunReport(
  options: RunOptions,
  parts: {
    ctx: ScenarioContext;
    fixtures: unknown;
    plan: RunPlan;
    phases: PhasesOutcome;
    recorder: Recorder;
    generatorMonitor: GeneratorMonitor;
    stop: LoadStop;
    runStartMs: number;
    cleanup: RunCleanup;
    history: HistoryWriter | undefined;
    oracle: RunOracle;
    skew: RunSkew | undefined;
    startedAt: Date;
    now: () => Date;
    /** What the scenario reported with ctx.measure. */
    measures: MeasureCollector;
  },
): Promise<RunReport> {
  const { phases, recorder, stop, history } = parts;
  const { figures, results } = runResults(recorder, phases);
  const { checks, notes } = await endOfRunChecks({
    scenario: options.scenario,
    ctx: parts.ctx,
    fixtures: parts.fixtures,
    results,
    recorder,
    interrupted: stop.interrupted,
    targetStopped: stop.targetStopped,
    runStartMs: parts.runStartMs,
    totalMs: parts.plan.totalMs,
    sharedSetUp: options.fixtures !== undefined,
  });
  await parts.cleanup.run();
  // Read again: a SIGINT may have come during the checks or the cleanup.
  const judged = history === undefined ? undefined : await runHistoryInvariants(options, history, parts.oracle, parts.skew, stop.interrupted);
  const generator = parts.generatorMonitor.section({ ...DEFAULT_GENERATOR_LIMITS, ...options.generatorLimits });
  notes.push(...sendNotes(phases, generator.limited));
  const status: RunReport['status'] = stop.interrupted ? 'interrupted' : stop.targetStopped !== undefined ? 'failed' : 'completed';
  return assembleReport({
    options,
    startedAt: parts.startedAt,
    finishedAt: parts.now(),
    status,
    phases,
    figures,
    results,
    checks,
    invariants: judged?.section,
    generator,
    resources: parts.cleanup.resources,
    notes,
    ruleTally: recorder.rules,
    // The scenario's own measures first, then the history checkers'.
    measures: [...parts.measures.measures(), ...(judged?.measures ?? [])],
  });
}
