/**
 * Runs one scenario against one target and returns its report:
 * reachability → fixtures → phases (each planned, then executed) → end-of-run checks →
 * thresholds → cleanup. The caller writes the report; nothing here prints secrets.
 *
 * Each stage past the set-up has its module: reachability.ts, run-phases.ts, run-invariants.ts
 * and run-report.ts; this one holds the run's state and the order of the stages.
 */
import { performance } from 'node:perf_hooks';
import type { RunReport } from '../../report/model.js';
import { Recorder } from '../metrics/index.js';
import { httpJsonClient, simulatorAdmin } from '../target/index.js';
import { DeadTargetWatch } from '../answers/index.js';
import { GeneratorMonitor } from '../metrics/index.js';
import { ResourceLedger, ledgerPath } from '../resources/index.js';
import { trackingAdmin } from '../resources/index.js';
import { checkReachable } from '../target/index.js';
import type { RunOptions } from './run-options.js';
import { planRun, runPhases } from './run-phases.js';
import { MeasureCollector, ScenarioRefusedError } from '../scenario/index.js';
import { mixOperationProblems } from '../scenario/index.js';
import {
  frozenClockAfterSetup,
  openModelExecutor,
  openRunHistory,
  refuseWrongClockMode,
  scenarioContext,
  setUpFixtures,
  startClockBeforeSetup,
  startRunOracle,
  waitForStartInstant,
} from './run-steps.js';
import { RunCleanup, loadedRunReport, setUpOnlyReport } from './run-finish.js';
import { LoadStop } from './run-stop.js';

// What other modules import from the runner, defined where each concept lives.
export { RootKeyRefusedError, TargetUnreachableError } from '../target/index.js';
export { LATE_THRESHOLD_MS, type ProgressSnapshot, type RunOptions, type SharedFixtures } from './run-options.js';
export { TARGET_STOPPED_CHECK } from './run-report.js';
export { ScenarioFailedError, ScenarioRefusedError } from '../scenario/index.js';

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
  await refuseWrongClockMode(scenario, admin, target.url, client);
  if (persistent) log(`what this run creates is named after its tag ${tag}; keysim cleanup --target ${target.url} --tag ${tag} deletes what a run leaves`);
  const { history, skew } = await openRunHistory(options, startedAt, tag, client, log);
  // Started before the setup, so that the fixtures are in the journal the oracle replays.
  const oracle = await startRunOracle(history, options, client);
  const measures = new MeasureCollector();
  const ctx = scenarioContext(options, { client, history, ledger, admin, tag, log, cleanups, measures });
  const cleanup = new RunCleanup(options, { persistent, cleanups, client, admin, ledger, log, warn });
  const recorder = new Recorder();
  recorder.onMeasured = options.onMeasured;
  // The generator measures itself over every measured phase (generator-monitor.ts).
  const generatorMonitor = new GeneratorMonitor();
  // Stops the load, for a SIGINT or a target that stopped answering (the closed model listens to it).
  const stop = new LoadStop(recorder);
  options.signal?.addEventListener('abort', stop.interrupt, { once: true });
  // A signal aborted before the run began fires no event.
  if (options.signal?.aborted === true) stop.interrupt();

  try {
    await startClockBeforeSetup(scenario, ctx);
    const fixtures = await setUpFixtures(scenario, ctx, options);
    if (options.setupOnly !== undefined) {
      return await setUpOnlyReport(options, { fixtures, tag, history, ledger, recorder, generatorMonitor, cleanup, startedAt, now, measures });
    }
    const plan = planRun(scenario, ctx, fixtures, settings, options.segment);
    const unknownOperations = mixOperationProblems(scenario, plan.specs, fixtures, seed);
    if (unknownOperations.length > 0) throw new ScenarioRefusedError(scenario.name, 'planning, before any load', unknownOperations.join('; '), false);
    await waitForStartInstant(options, now, log, warn);
    const clockFrozen = await frozenClockAfterSetup(scenario, target, ctx, plan);
    const runStartMs = performance.now();
    if (options.deadTargetMs !== undefined) {
      const watch = new DeadTargetWatch(options.deadTargetMs, runStartMs, (verdict) => stop.targetStoppedWith(verdict));
      recorder.onCompletion = (doneMs, failure, status, sentMs) => watch.observe(doneMs, failure, status, sentMs);
    }
    if (settings.model === 'open' && !stop.interrupted) stop.executor = openModelExecutor(target, settings);

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
      executor: stop.executor,
      stopSignal: stop.signal,
      interrupted: () => stop.interrupted,
      targetStopped: () => stop.targetStopped !== undefined,
      onProgress: options.onProgress,
      log,
    });

    return await loadedRunReport(options, {
      ctx,
      fixtures,
      plan,
      phases,
      recorder,
      generatorMonitor,
      stop,
      runStartMs,
      cleanup,
      history,
      oracle,
      skew,
      startedAt,
      now,
      measures,
    });
  } catch (error) {
    await cleanup.afterFailure(error);
    throw error;
  } finally {
    generatorMonitor.close();
    clearInterval(oracle.oracleTimer);
    await oracle.oracle?.stop();
    await history?.close().catch(() => undefined);
    options.signal?.removeEventListener('abort', stop.interrupt);
    await client.close();
  }
}
