/**
 * Runs one scenario against one target and returns its report:
 * reachability → fixtures → phases (each planned, then executed) → end-of-run checks →
 * thresholds → cleanup. The caller writes the report; nothing here prints secrets.
 *
 * Each stage past the set-up has its module: reachability.ts, run-phases.ts, run-invariants.ts
 * and run-report.ts; this one holds the run's state and the order of the stages.
 */
import { dirname, join } from 'node:path';
import { hostname } from 'node:os';
import { performance } from 'node:perf_hooks';
import { Random } from '../../engine/index.js';
import type { InvariantsSection, ResourcesSection, RunReport } from '../../report/model.js';
import { OpenModelExecutor } from '../executors/index.js';
import { Recorder } from '../metrics/index.js';
import type { ScenarioContext } from '../scenario/index.js';
import { ServiceCallError, httpJsonClient, serviceApi, simulatorAdmin } from '../target/index.js';
import { DEFAULT_WALL_SKEW_MS, HistoryWriter } from '../history/index.js';
import { type RunSkew, liveRunSkew } from './clock-skew.js';
import { recordingServiceApi } from '../history/index.js';
import { Oracle } from '../oracle/index.js';
import { JOURNAL_FILE } from '../history/index.js';
import { DeadTargetWatch, type TargetStoppedVerdict } from '../answers/index.js';
import { DEFAULT_GENERATOR_LIMITS, GeneratorMonitor } from '../metrics/index.js';
import { ResourceLedger, ledgerPath } from '../resources/index.js';
import { trackingAdmin, trackingServiceApi } from '../resources/index.js';
import { cleanUpRun } from '../resources/index.js';
import { checkReachable } from '../target/index.js';
import { LATE_THRESHOLD_MS, type RunOptions } from './run-options.js';
import { planRun, runPhases } from './run-phases.js';
import { historyInvariants } from './run-invariants.js';
import { assembleReport, endOfRunChecks, runResults, sendNotes } from './run-report.js';
import { ScenarioFailedError, ScenarioRefusedError } from '../scenario/index.js';
import { clockModeRefusal } from '../time/index.js';
import { mixOperationProblems } from '../scenario/index.js';
import { UnknownOperationError } from '../scenario/index.js';
import { startServiceClock, sweepProblemBeforeSetup, sweepsInThePast } from '../scenario/index.js';

// What other modules import from the runner, defined where each concept lives.
export { RootKeyRefusedError, TargetUnreachableError } from '../target/index.js';
export { LATE_THRESHOLD_MS, type ProgressSnapshot, type RunOptions, type SharedFixtures } from './run-options.js';
export { TARGET_STOPPED_CHECK } from './run-report.js';
export { ScenarioFailedError, ScenarioRefusedError } from '../scenario/index.js';

/** Sleeps `ms`, or less when `signal` aborts. */
function abortableSleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted === true) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** The run's ledger, written under `dir` when given; in memory (with a warning) if the folder cannot be written. */
function openLedger(tag: string, dir: string | undefined, warn: (line: string) => void): ResourceLedger {
  if (dir === undefined) return new ResourceLedger(tag);
  try {
    return new ResourceLedger(tag, ledgerPath(dir, tag));
  } catch (error) {
    warn(
      `cannot write the ledger of what this run creates under ${dir} (${error instanceof Error ? error.message : String(error)}): after a crash, keysim cleanup could not find its keys`,
    );
    return new ResourceLedger(tag);
  }
}

export async function runScenario(options: RunOptions): Promise<RunReport> {
  const { scenario, target, settings, seed } = options;
  const log = options.log ?? (() => undefined);
  const warn = options.warn ?? log;
  const now = options.now ?? (() => new Date());
  const startedAt = now();
  const runId = `${startedAt.toISOString().replace(/[-:]/g, '').replace(/\..*$/, '')}-${seed}`;

  if (settings.model === 'closed' && settings.pipelining > 1) {
    throw new RangeError('The closed model runs without pipelining (one request in flight per connection: a closed load). Use the open model for pipelining.');
  }
  await checkReachable(target, settings.timeoutMs);

  const client = httpJsonClient(target, settings.timeoutMs);
  const cleanups: Array<() => Promise<void>> = [];
  // Segments sharing one set-up share its tag: what they create is named after it too.
  const tag = options.fixtures?.tag ?? `keysim-${runId}`;
  // A live deployment or a remote simulator keeps what the run creates; the embedded one is discarded.
  const persistent = target.kind === 'live' || target.remote === true;
  const ledger = openLedger(tag, persistent ? options.resourcesDir : undefined, warn);
  const admin = target.clockControl ? trackingAdmin(simulatorAdmin(client), ledger) : undefined;
  // Before anything that changes the target (the journal, the clock, the fixtures): a scenario
  // that needs a frozen clock is refused on a running one.
  const clockRefusal = await clockModeRefusal(scenario, admin, target.url).catch(async (error: unknown) => {
    await client.close();
    throw error;
  });
  if (clockRefusal !== undefined) {
    await client.close();
    throw new ScenarioRefusedError(scenario.name, 'its start', clockRefusal, true);
  }
  if (persistent) log(`what this run creates is named after its tag ${tag}; keysim cleanup --target ${target.url} --tag ${tag} deletes what a run leaves`);
  const recordHistory = options.historyPath !== undefined;
  // A live target records no service times: its decisions are placed by our clock ± this skew.
  let skew: RunSkew | undefined;
  if (recordHistory && target.kind === 'live') {
    skew = await liveRunSkew(target, {
      given: options.wallSkewMs,
      timeoutMs: settings.timeoutMs,
      fallbackMs: DEFAULT_WALL_SKEW_MS,
      plannedMs: settings.warmupMs + settings.durationMs,
    });
    log(skew.note);
  }
  const history = recordHistory
    ? await HistoryWriter.create(options.historyPath as string, {
        startedAt: startedAt.toISOString(),
        // What keysim check matches before it combines the histories of one run's segments.
        run: {
          scenario: scenario.name,
          seed,
          target: target.kind,
          tag,
          ...(options.segment === undefined ? {} : { segment: { index: options.segment.index, count: options.segment.count } }),
          setUp: options.setupOnly !== undefined ? 'setup-only' : options.fixtures !== undefined ? 'shared' : 'own',
        },
        host: hostname(),
        ...(skew === undefined ? {} : { wallSkewMs: skew.wallSkewMs }),
      }).catch(async (error: unknown) => {
        await client.close();
        throw error;
      })
    : undefined;
  // A segment's history names the set-up's keys by id from its first request on.
  if (history !== undefined && options.fixtures?.keyIds !== undefined) history.keys.learnDigests(options.fixtures.keyIds);
  // Started before the setup, so that the fixtures are in the journal the oracle replays.
  let oracleProblem: string | undefined;
  const oracle =
    history !== undefined && target.kind === 'simulator' && options.oracle !== false
      ? await Oracle.start(client, { journalPath: join(dirname(options.historyPath as string), JOURNAL_FILE) }).catch((error: unknown) => {
          oracleProblem = error instanceof Error ? error.message : String(error);
          return undefined;
        })
      : undefined;
  // About once a second, so that the simulator's journal stays small.
  const oracleTimer = oracle === undefined ? undefined : setInterval(() => oracle.drainIfIdle(), 1000);
  oracleTimer?.unref();
  const ctx: ScenarioContext = {
    api: trackingServiceApi(
      history === undefined ? serviceApi(client) : recordingServiceApi(client, history, admin === undefined ? undefined : () => admin.clockNow()),
      ledger,
    ),
    admin,
    target: { kind: target.kind, url: target.url, ...(target.ca === undefined ? {} : { ca: target.ca }) },
    random: new Random(seed),
    tag,
    settings,
    log,
    onCleanup: (fn) => cleanups.push(fn),
  };
  let resources: ResourcesSection | undefined;
  // Before the history closes (the cleanup's calls go into it), whatever happened before.
  const cleanUp = async (): Promise<ResourcesSection> => {
    resources ??= await cleanUpRun({
      persistent,
      keep: options.keep,
      cleanups,
      // The sweep's lookups are not part of the run: they stay out of the history.
      sweep: {
        api: trackingServiceApi(serviceApi(client), ledger),
        admin: ctx.admin,
        ledger,
        namespaces: process.env.KEYSIM_NAMESPACE ? [process.env.KEYSIM_NAMESPACE] : [],
      },
      url: target.url,
      log,
      warn,
      ...(options.resourcesFile === undefined ? {} : { handoverPath: options.resourcesFile }),
    });
    return resources;
  };
  const recorder = new Recorder();
  recorder.onMeasured = options.onMeasured;
  // The generator measures itself over every measured phase (generator-monitor.ts).
  const generatorMonitor = new GeneratorMonitor();
  let executor: OpenModelExecutor | undefined;
  let interrupted = false;
  // Stops the load, for a SIGINT or a target that stopped answering (the closed model listens to it).
  const stopLoad = new AbortController();
  const onAbort = () => {
    interrupted = true;
    // Answers still arriving after a stop are cut short: they are not figures.
    recorder.freeze();
    executor?.stop();
    stopLoad.abort();
  };
  let targetStopped: TargetStoppedVerdict | undefined;
  options.signal?.addEventListener('abort', onAbort, { once: true });
  // A signal aborted before the run began fires no event.
  if (options.signal?.aborted === true) onAbort();

  try {
    // The clock the run starts with, and the phases' sweeps checked against it, before setup.
    let clockMs: number | undefined;
    try {
      clockMs = await startServiceClock(scenario, ctx);
    } catch (error) {
      throw new ScenarioFailedError(scenario.name, 'start', error);
    }
    const early = sweepProblemBeforeSetup(scenario, ctx, clockMs);
    if (early !== undefined) throw new ScenarioFailedError(scenario.name, 'start', early);
    let fixtures: unknown;
    if (options.fixtures !== undefined) {
      fixtures = scenario.sharedFixtures === undefined ? options.fixtures.value : scenario.sharedFixtures.load(options.fixtures.value);
    } else {
      try {
        fixtures = await scenario.setup(ctx);
      } catch (error) {
        if (error instanceof UnknownOperationError) throw new ScenarioRefusedError(scenario.name, 'setup', error, false);
        throw new ScenarioFailedError(scenario.name, 'setup', error instanceof ServiceCallError ? error.message : error);
      }
    }

    if (options.setupOnly !== undefined) {
      const keyIds = history?.keys.entries();
      const handedBack = await options.setupOnly({
        value: scenario.sharedFixtures === undefined ? fixtures : scenario.sharedFixtures.save(fixtures),
        tag,
        ...(keyIds === undefined ? {} : { keyIds }),
      });
      // What the segments' load created is deleted by this one teardown (resource-handover.ts).
      for (const entry of handedBack ?? []) ledger.created(entry);
      const none = { phaseReports: [], late: 0, dropped: 0, measuredMs: 0 };
      const { figures, results } = runResults(recorder, none);
      await cleanUp();
      const generator = generatorMonitor.section({ ...DEFAULT_GENERATOR_LIMITS, ...options.generatorLimits });
      const notes = [
        `Set-up only: the fixtures were written for the segments; no load was sent. keysim cleanup --target ${target.url} --tag ${tag} deletes what the set-up and the segments created.`,
      ];
      // Nothing was sent: there is nothing for thresholds to judge.
      return assembleReport({
        options: { ...options, thresholds: [] },
        startedAt,
        finishedAt: now(),
        status: 'completed',
        phases: none,
        figures,
        results,
        checks: [],
        invariants: undefined,
        generator,
        resources,
        notes,
      });
    }
    const plan = planRun(scenario, ctx, fixtures, settings, options.segment);
    const unknownOperations = mixOperationProblems(scenario, plan.specs, fixtures, seed);
    if (unknownOperations.length > 0) throw new ScenarioRefusedError(scenario.name, 'planning, before any load', unknownOperations.join('; '), false);
    if (options.startAt !== undefined) {
      const waitMs = options.startAt.getTime() - now().getTime();
      if (waitMs > 0) {
        log(`waiting ${Math.round(waitMs)} ms for the start instant ${options.startAt.toISOString()}`);
        await abortableSleep(waitMs, options.signal);
      } else {
        // Setup took longer than the margin given: this segment's timeline starts late, the others' do not.
        warn(
          `the start instant ${options.startAt.toISOString()} passed ${Math.round(-waitMs)} ms before the load could start: this segment starts late (give --start-at more margin)`,
        );
      }
    }
    // A remote simulator may run on the system clock, which moves during a phase by itself.
    // The embedded simulator too, when the scenario asked for a running clock (clockMode: 'running').
    const clockFrozen = target.kind === 'simulator' && (ctx.admin === undefined ? target.remote !== true : (await ctx.admin.clockMode()) === 'manual');
    // Sweeps that need the fixtures to be known are checked here, still before any load (a clock
    // that runs by itself cannot sweep at all: the phase says so when it starts).
    if (clockFrozen && ctx.admin !== undefined) {
      const late = sweepsInThePast(plan.specs, await ctx.admin.clockNow(), 'after setup', scenario.clock !== undefined);
      if (late !== undefined) throw new ScenarioFailedError(scenario.name, 'planning', late);
    }
    const runStartMs = performance.now();
    if (options.deadTargetMs !== undefined) {
      const watch = new DeadTargetWatch(options.deadTargetMs, runStartMs, (verdict) => {
        targetStopped = verdict;
        executor?.stop();
        stopLoad.abort();
      });
      recorder.onCompletion = (doneMs, failure, status, sentMs) => watch.observe(doneMs, failure, status, sentMs);
    }

    if (settings.model === 'open' && !interrupted) {
      executor = new OpenModelExecutor({
        url: target.url,
        rootKey: target.rootKey,
        connections: settings.connections,
        pipelining: settings.pipelining,
        timeoutMs: settings.timeoutMs,
        lateThresholdMs: LATE_THRESHOLD_MS,
        ca: target.ca,
      });
    }

    const phases = await runPhases({
      scenario,
      target,
      settings,
      ctx,
      fixtures,
      plan,
      runStartMs,
      clockFrozen,
      history,
      ledger,
      recorder,
      generatorMonitor,
      executor,
      stopSignal: stopLoad.signal,
      interrupted: () => interrupted,
      targetStopped: () => targetStopped !== undefined,
      onProgress: options.onProgress,
      log,
    });

    const { figures, results } = runResults(recorder, phases);
    const { checks, notes } = await endOfRunChecks({
      scenario,
      ctx,
      fixtures,
      results,
      recorder,
      interrupted,
      targetStopped,
      runStartMs,
      totalMs: plan.totalMs,
      sharedSetUp: options.fixtures !== undefined,
    });
    await cleanUp();
    let invariants: InvariantsSection | undefined;
    if (history !== undefined) {
      // Other segments' calls on the same keys and limits are not in a segment's history: it judges
      // only what stays sound without them (docs/checking.md#one-segments-own-verdict), so that a
      // segment never fails on a false alarm; the rest is judged across segments.
      const segment = options.segment === undefined ? undefined : { sharedKeyIds: (options.fixtures?.keyIds ?? []).map(([, keyId]) => keyId) };
      invariants = await historyInvariants({
        history,
        path: options.historyPath as string,
        interrupted,
        oracle,
        oracleTimer,
        oracleProblem,
        skew,
        target,
        timeoutMs: settings.timeoutMs,
        ...(segment === undefined ? {} : { segment }),
      });
      if (options.segment !== undefined) {
        invariants.notes.unshift(
          "This segment's own verdict, over its own history: the other segments' operations on the same keys and rate limits are not in it (with a shared set-up, neither is the keys' creation), so it judges only what holds on part of the operations. keysim merge, or keysim check over the set-up's and every segment's history, judges every invariant across segments.",
        );
      }
    }
    const generator = generatorMonitor.section({ ...DEFAULT_GENERATOR_LIMITS, ...options.generatorLimits });
    notes.push(...sendNotes(phases, generator.limited));
    const status: RunReport['status'] = interrupted ? 'interrupted' : targetStopped !== undefined ? 'failed' : 'completed';
    return assembleReport({
      options,
      startedAt,
      finishedAt: now(),
      status,
      phases,
      figures,
      results,
      checks,
      invariants,
      generator,
      resources,
      notes,
      ruleTally: recorder.rules,
    });
  } catch (error) {
    // A failed setup or phase: what was created is still deleted, while the history is open.
    if (resources === undefined) {
      const section = await cleanUp().catch((cleanupError: unknown) => {
        warn(`cleanup failed: ${cleanupError instanceof Error ? cleanupError.message : String(cleanupError)}`);
        return undefined;
      });
      if (error instanceof ScenarioFailedError && section !== undefined) error.resources = section;
    }
    throw error;
  } finally {
    generatorMonitor.close();
    clearInterval(oracleTimer);
    await oracle?.stop();
    await history?.close().catch(() => undefined);
    options.signal?.removeEventListener('abort', onAbort);
    await client.close();
  }
}
