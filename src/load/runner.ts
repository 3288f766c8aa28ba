/**
 * Runs one scenario against one target and returns its report:
 * reachability → fixtures → phases (each planned, then executed) → end-of-run checks →
 * thresholds → cleanup. The caller writes the report; nothing here prints secrets.
 */
import { cpus, totalmem } from 'node:os';
import { performance } from 'node:perf_hooks';
import { Random } from '../engine/index.js';
import { type CheckResult, type InvariantsSection, type OperationStats, type PhaseReport, REPORT_SCHEMA, REPORT_VERSION, type RunReport } from '../report/model.js';
import { weightedPicker } from './distributions.js';
import { OpenModelExecutor, type PlannedRequest } from './open-model.js';
import { planPhases } from './plan.js';
import { Recorder } from './recorder.js';
import type { LoadSettings, MixEntry, Operation, PhaseSpec, RunResults, Scenario, ScenarioContext } from './scenario.js';
import { ServiceCallError, httpJsonClient, serviceApi, simulatorAdmin } from './service-api.js';
import type { Target } from './target.js';
import { type Threshold, evaluateThresholds } from './thresholds.js';
import { classifyTransportError } from './transport-error.js';
import { runClosedPhase } from './closed-model.js';
import { DEFAULT_WALL_SKEW_MS, HistoryWriter, readHistory } from './history.js';
import { type RunSkew, liveRunSkew, remeasuredRunSkew } from './clock-skew.js';
import { recordingServiceApi } from './history-recording.js';
import { checkHistory } from './checks/index.js';
import { ClockDriver, serviceClockProblem } from './clock-driver.js';
import { Oracle } from './oracle.js';
import { invariantsSection } from './invariants-section.js';
import { DeadTargetWatch, type TargetStoppedVerdict, describeTargetStopped } from './dead-target.js';
import { DEFAULT_GENERATOR_LIMITS, GeneratorMonitor, type GeneratorLimits } from './generator-monitor.js';
import { ResourceLedger, ledgerPath } from './resources.js';
import { trackingAdmin, trackingCheck, trackingServiceApi } from './resource-tracking.js';
import { cleanUpRun } from './run-cleanup.js';
import { runningClockBounds } from './running-clock.js';
import type { ResourcesSection } from '../report/model.js';

export const LATE_THRESHOLD_MS = 10;

/** The target did not answer before the run: no report is written. */
export class TargetUnreachableError extends Error {
  constructor(url: string, reason: string, message?: string) {
    super(message ?? `The target ${url} is not reachable: ${reason}. Check the URL (and that the service runs), then try again.`);
    this.name = 'TargetUnreachableError';
  }
}

/** The target answered, but refused the root key (401/403): reachable, and the key is what to fix. */
export class RootKeyRefusedError extends TargetUnreachableError {
  constructor(url: string, status: number) {
    super(
      url,
      `it refused the root key (HTTP ${status})`,
      `The target ${url} answered, but refused the root key (HTTP ${status}${status === 403 ? ': the key lacks a permission' : ''}). Set KEYSIM_ROOT_KEY (or --root-key) to a root key of that deployment with the permissions the scenarios need.`,
    );
    this.name = 'RootKeyRefusedError';
  }
}

/** The scenario could not set up or run: a clear message, no figures. */
export class ScenarioFailedError extends Error {
  /** What the run created, deleted and left before it failed (set by the runner). */
  resources: ResourcesSection | undefined;
  constructor(scenario: string, stage: string, cause: unknown) {
    super(`Scenario "${scenario}" failed during ${stage}: ${cause instanceof Error ? cause.message : String(cause)}`);
    this.name = 'ScenarioFailedError';
  }
}

export interface ProgressSnapshot {
  phase: string;
  elapsedMs: number;
  /** Planned duration of all phases, ms. */
  totalMs: number;
  requests: number;
  /** Completed requests per second over the last interval. */
  rps: number;
  p99Ms: number;
  errors: number;
}

export interface RunOptions {
  scenario: Scenario<unknown>;
  target: Target;
  settings: LoadSettings;
  seed: number;
  thresholds: readonly Threshold[];
  /** Keep what the scenario created on a live target. */
  keep: boolean;
  /** Aborting stops the load within ~2 s; the report is marked interrupted. */
  signal?: AbortSignal;
  /** Called about once a second during the load. */
  onProgress?: (progress: ProgressSnapshot) => void;
  /** A line for the log (never a secret). */
  log?: (line: string) => void;
  /** A line that must be seen even when the log is silenced: what the run left on its target. */
  warn?: (line: string) => void;
  /**
   * The reports folder: on a target that outlives the run, the ledger of what it creates is
   * written under it (resources.ts, `keysim cleanup` reads it) until everything is deleted.
   */
  resourcesDir?: string;
  keysimVersion: string;
  /** For the run tag; default now. */
  now?: () => Date;
  /**
   * Record every call into this history file (history.jsonl.gz) and check the credit and
   * rate-limit invariants over it at the end (the report's invariants section).
   */
  historyPath?: string;
  /**
   * With a history on the simulator: replay the simulator's journal of the realised order through
   * a fresh engine and compare every answer (oracle.ts). Default true.
   */
  oracle?: boolean;
  /**
   * With a history on a live target: the bound on its clock's skew from ours, ms. Default:
   * measured from its Date headers before the run (clock-skew.ts).
   */
  wallSkewMs?: number;
  /**
   * End the run early when no request got an answer for this long while requests failed at the
   * transport level (dead-target.ts); ms. Undefined: fire until the planned end.
   */
  deadTargetMs?: number;
  /**
   * When the generator is judged not to have kept its schedule (the run is then inconclusive);
   * default DEFAULT_GENERATOR_LIMITS.
   */
  generatorLimits?: Partial<GeneratorLimits>;
}

/** The failed check that marks a run ended early because the target stopped answering (exit 96). */
export const TARGET_STOPPED_CHECK = 'target answering';

/** Checks that the target answers and that the root key is accepted, before anything is created. */
async function checkReachable(target: Target, timeoutMs: number): Promise<void> {
  const client = httpJsonClient(target, Math.min(timeoutMs, 10_000));
  try {
    const res = await client.post('/v2/identities.listIdentities', { limit: 1 }, 'root');
    if (res.status === 401 || res.status === 403 || (res.status === 400 && JSON.stringify(res.body).includes('authentication'))) {
      throw new RootKeyRefusedError(target.url, res.status === 400 ? 401 : res.status);
    }
    if (res.status >= 500) throw new TargetUnreachableError(target.url, `it answered ${res.status}`);
  } catch (error) {
    if (error instanceof TargetUnreachableError) throw error;
    throw new TargetUnreachableError(target.url, `${classifyTransportError(error)} (${error instanceof Error ? error.message : String(error)})`);
  } finally {
    await client.close();
  }
}

function defaultPhases<F>(settings: LoadSettings): Array<PhaseSpec<F>> {
  const phases: Array<PhaseSpec<F>> = [];
  if (settings.warmupMs > 0) phases.push({ name: 'warm-up', durationMs: settings.warmupMs, warmup: true });
  phases.push({ name: 'load', durationMs: settings.durationMs });
  return phases;
}

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

/**
 * Reads the saved history back, checks every invariant over it and compares the oracle's replay
 * (simulator only) with the answers recorded: the report's invariants section.
 */
async function invariantsReport(path: string, oracle: Oracle | undefined, notes: readonly string[], wallSkewMs?: number): Promise<InvariantsSection> {
  const { header, events } = await readHistory(path);
  const skew = wallSkewMs ?? header.wallSkewMs;
  const verdict = checkHistory(events, skew === undefined ? {} : { wallSkewMs: skew });
  return invariantsSection(verdict, {
    operations: events.length,
    notes,
    ...(oracle === undefined ? {} : { oracle: oracle.compare(events) }),
  });
}

/** The run's ledger, written under `dir` when given; in memory (with a warning) if the folder cannot be written. */
function openLedger(tag: string, dir: string | undefined, warn: (line: string) => void): ResourceLedger {
  if (dir === undefined) return new ResourceLedger(tag);
  try {
    return new ResourceLedger(tag, ledgerPath(dir, tag));
  } catch (error) {
    warn(`cannot write the ledger of what this run creates under ${dir} (${error instanceof Error ? error.message : String(error)}): after a crash, keysim cleanup could not find its keys`);
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
    throw new RangeError('The closed model runs without pipelining: autocannon cannot tell which pipelined answer belongs to which request. Use the open model for pipelining.');
  }
  await checkReachable(target, settings.timeoutMs);

  const client = httpJsonClient(target, settings.timeoutMs);
  const cleanups: Array<() => Promise<void>> = [];
  const tag = `keysim-${runId}`;
  // A live deployment or a remote simulator keeps what the run creates; the embedded one is discarded.
  const persistent = target.kind === 'live' || target.remote === true;
  const ledger = openLedger(tag, persistent ? options.resourcesDir : undefined, warn);
  const admin = target.clockControl ? trackingAdmin(simulatorAdmin(client), ledger) : undefined;
  if (persistent) log(`what this run creates is named after its tag ${tag}; keysim cleanup --target ${target.url} --tag ${tag} deletes what a run leaves`);
  const recordHistory = options.historyPath !== undefined;
  // A live target records no service times: its decisions are placed by our clock ± this skew.
  let skew: RunSkew | undefined;
  if (recordHistory && target.kind === 'live') {
    skew = await liveRunSkew(target, { given: options.wallSkewMs, timeoutMs: settings.timeoutMs, fallbackMs: DEFAULT_WALL_SKEW_MS, plannedMs: settings.warmupMs + settings.durationMs });
    log(skew.note);
  }
  const history = recordHistory
    ? await HistoryWriter.create(options.historyPath as string, {
        startedAt: startedAt.toISOString(),
        run: { scenario: scenario.name, seed, target: target.kind },
        ...(skew === undefined ? {} : { wallSkewMs: skew.wallSkewMs }),
      }).catch(
        async (error: unknown) => {
          await client.close();
          throw error;
        },
      )
    : undefined;
  // Started before the setup, so that the fixtures are in the journal the oracle replays.
  let oracleProblem: string | undefined;
  const oracle =
    history !== undefined && target.kind === 'simulator' && options.oracle !== false
      ? await Oracle.start(client).catch((error: unknown) => {
          oracleProblem = error instanceof Error ? error.message : String(error);
          return undefined;
        })
      : undefined;
  // About once a second, so that the simulator's journal stays small.
  const oracleTimer = oracle === undefined ? undefined : setInterval(() => oracle.drainIfIdle(), 1000);
  oracleTimer?.unref();
  const ctx: ScenarioContext = {
    api: trackingServiceApi(history === undefined ? serviceApi(client) : recordingServiceApi(client, history, admin === undefined ? undefined : () => admin.clockNow()), ledger),
    admin,
    target: { kind: target.kind, url: target.url },
    random: new Random(seed),
    tag,
    settings,
    log,
    onCleanup: (fn) => cleanups.push(fn),
  };
  const notes: string[] = [];
  let resources: ResourcesSection | undefined;
  // Before the history closes (the cleanup's calls go into it), whatever happened before.
  const cleanUp = async (): Promise<ResourcesSection> => {
    resources ??= await cleanUpRun({
      persistent,
      keep: options.keep,
      cleanups,
      // The sweep's lookups are not part of the run: they stay out of the history.
      sweep: { api: trackingServiceApi(serviceApi(client), ledger), admin: ctx.admin, ledger, namespaces: process.env.KEYSIM_NAMESPACE ? [process.env.KEYSIM_NAMESPACE] : [] },
      url: target.url,
      log,
      warn,
    });
    return resources;
  };
  const recorder = new Recorder();
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
    let fixtures: unknown;
    try {
      fixtures = await scenario.setup(ctx);
    } catch (error) {
      throw new ScenarioFailedError(scenario.name, 'setup', error instanceof ServiceCallError ? error.message : error);
    }

    const specs = scenario.phases?.(ctx, fixtures) ?? defaultPhases<unknown>(settings);
    const planned = planPhases(specs.map((p) => ({ name: p.name, durationMs: p.durationMs, rate: p.rate ?? settings.rate, warmup: p.warmup === true })));
    for (const [i, spec] of specs.entries()) {
      const problem = spec.serviceClock === undefined ? undefined : serviceClockProblem({ ...spec.serviceClock, durationMs: planned[i]?.durationMs ?? 0 }, ctx.admin !== undefined);
      if (problem !== undefined) throw new ScenarioFailedError(scenario.name, `the service clock of phase "${spec.name}"`, problem);
    }
    const totalMs = planned.reduce((sum, p) => sum + p.durationMs, 0);
    // A remote simulator may run on the system clock, which moves during a phase by itself.
    const clockFrozen = target.kind === 'simulator' && (target.remote !== true || (ctx.admin !== undefined && (await ctx.admin.clockMode()) === 'manual'));
    const phaseReports: PhaseReport[] = [];
    let late = 0;
    let dropped = 0;
    let measuredMs = 0;
    let measuringStarted = false;
    const runStartMs = performance.now();
    if (options.deadTargetMs !== undefined) {
      const watch = new DeadTargetWatch(options.deadTargetMs, runStartMs, (verdict) => {
        targetStopped = verdict;
        executor?.stop();
        stopLoad.abort();
      });
      recorder.onCompletion = (doneMs, failure) => watch.observe(doneMs, failure);
    }

    if (settings.model === 'open' && !interrupted) {
      executor = new OpenModelExecutor({
        url: target.url,
        rootKey: target.rootKey,
        connections: settings.connections,
        pipelining: settings.pipelining,
        timeoutMs: settings.timeoutMs,
        lateThresholdMs: LATE_THRESHOLD_MS,
      });
    }

    let lastRequests = 0;
    let lastProgressMs = performance.now();
    let currentPhase = '';
    const progressTimer = setInterval(() => {
      const t = performance.now();
      const requests = recorder.requests;
      options.onProgress?.({
        phase: currentPhase,
        elapsedMs: t - runStartMs,
        totalMs,
        requests,
        rps: ((requests - lastRequests) * 1000) / Math.max(1, t - lastProgressMs),
        p99Ms: recorder.p99SoFarMs(),
        errors: recorder.errors,
      });
      lastRequests = requests;
      lastProgressMs = t;
    }, 1000);
    progressTimer.unref();
    // The service clock's sweep of the running phase, when it has a serviceClock (clock-driver.ts).
    let clockDriver: ClockDriver | undefined;

    try {
      for (const [i, phase] of planned.entries()) {
        if (interrupted || targetStopped !== undefined) break;
        const spec = specs[i] as PhaseSpec<unknown>;
        currentPhase = phase.name;
        try {
          await spec.before?.(ctx, fixtures);
        } catch (error) {
          throw new ScenarioFailedError(scenario.name, `the "before" step of phase "${phase.name}"`, error);
        }
        if (spec.serviceClock !== undefined) {
          try {
            clockDriver = await ClockDriver.start({ admin: ctx.admin, ...spec.serviceClock, durationMs: phase.durationMs });
          } catch (error) {
            throw new ScenarioFailedError(scenario.name, `the service clock of phase "${phase.name}"`, error);
          }
        }
        const clockFrom = clockDriver !== undefined ? new Date(clockDriver.fromMs).toISOString() : ctx.admin === undefined ? undefined : new Date(await ctx.admin.clockNow()).toISOString();
        const mix: ReadonlyArray<MixEntry<unknown>> = spec.mix ?? scenario.mix;
        const pick = weightedPicker(mix);
        const next = (): PlannedRequest => {
          const entry = pick(ctx.random);
          const request = entry.build(fixtures, ctx.random);
          const check = entry.check;
          // Figures are kept per API operation (what thresholds name); the entry's name labels check failures.
          return {
            operation: request.op,
            label: entry.name ?? request.op,
            spec: request,
            check: trackingCheck(request.op, request.body, request.auth, check === undefined ? undefined : (response) => check(response, fixtures), ledger),
          };
        };
        if (!phase.warmup) generatorMonitor.startPhase();
        const phaseStartMs = performance.now();
        if (!phase.warmup && !measuringStarted) {
          recorder.startMeasuring(phaseStartMs);
          measuringStarted = true;
        }
        log(`phase "${phase.name}": ${phase.count} requests at ${phase.rate}/s over ${phase.durationMs} ms${phase.warmup ? ' (warm-up, not measured)' : ''}`);
        // The embedded simulator's clock is manual: without a sweep it stands still during a phase
        // (only `before` moves it); with one, the driver brackets each request.
        const serviceMs = clockDriver === undefined && clockFrozen && clockFrom !== undefined ? Date.parse(clockFrom) : undefined;
        // A running service clock (a remote simulator on the system clock): bounds from one reading of it.
        const runningClock =
          history !== undefined && clockDriver === undefined && !clockFrozen && ctx.admin !== undefined ? await runningClockBounds(ctx.admin.clockNow) : undefined;
        const phaseHistory = history === undefined ? undefined : { writer: history, serviceMs, clock: clockDriver ?? runningClock };
        let schedule: { scheduledSends: number | null; lateSends: number | null } = { scheduledSends: null, lateSends: null };
        if (executor !== undefined) {
          const outcome = await executor.runPhase(phase, phaseStartMs, next, recorder, phaseHistory);
          if (!phase.warmup) {
            late += outcome.late;
            dropped += outcome.dropped;
          }
          schedule = { scheduledSends: outcome.sent + outcome.dropped, lateSends: outcome.late };
        } else if (settings.model === 'closed') {
          await runClosedPhase({ target, settings, phase, next, recorder, signal: stopLoad.signal, history: phaseHistory });
        }
        const phaseEndMs = performance.now();
        if (!phase.warmup) generatorMonitor.endPhase(phase.name, schedule);
        if (!phase.warmup) measuredMs += phaseEndMs - phaseStartMs;
        try {
          // The sweep ends exactly at toMs (an interrupted run leaves the clock where it got to).
          await (interrupted ? clockDriver?.cancel() : clockDriver?.finish());
        } catch (error) {
          throw new ScenarioFailedError(scenario.name, `the service clock of phase "${phase.name}"`, error);
        } finally {
          clockDriver = undefined;
        }
        const clockTo = ctx.admin === undefined ? undefined : new Date(await ctx.admin.clockNow()).toISOString();
        phaseReports.push({
          name: phase.name,
          startMs: Math.round(phaseStartMs - runStartMs),
          durationMs: Math.round(phaseEndMs - phaseStartMs),
          rate: settings.model === 'open' ? phase.rate : settings.connections,
          warmup: phase.warmup,
          ...(clockFrom === undefined ? {} : { serviceClockFrom: clockFrom }),
          ...(clockTo === undefined ? {} : { serviceClockTo: clockTo }),
        });
      }
    } finally {
      clearInterval(progressTimer);
      await clockDriver?.cancel();
      if (interrupted) recorder.freeze();
      await executor?.close();
    }

    const figures = recorder.finish(measuredMs);
    const byOp = new Map(figures.operations.map((o) => [o.operation, o]));
    const results: RunResults = {
      operations: figures.operations,
      overall: figures.overall,
      totals: { requests: recorder.requests, errors: recorder.errors, cutOff: recorder.cutOff, ratePerSec: figures.overall.ratePerSec, late, lateThresholdMs: LATE_THRESHOLD_MS, dropped },
      operation: (op: Operation): OperationStats | undefined => byOp.get(op),
    };

    const checks: CheckResult[] = [];
    if (recorder.checkFailures > 0) {
      checks.push({
        name: 'per-response checks',
        passed: false,
        detail: `${recorder.checkFailures} answers failed their check, e.g. ${recorder.checkFailureExamples.slice(0, 3).join('; ')}`,
      });
    } else if (recorder.requests > 0) {
      checks.push({ name: 'per-response checks', passed: true, detail: `all ${recorder.requests} answers passed` });
    }
    if (targetStopped !== undefined) {
      const verdict = describeTargetStopped(targetStopped, runStartMs, totalMs);
      checks.push({ name: TARGET_STOPPED_CHECK, passed: false, detail: verdict });
      notes.push(`${verdict} End-of-run checks were skipped: they ask the target.`);
    }
    if (interrupted) {
      notes.push('Interrupted (SIGINT): the figures cover only what ran; end-of-run checks were skipped.');
    } else if (targetStopped !== undefined) {
      // Nothing to ask a target that stopped answering.
    } else if (scenario.finish !== undefined) {
      try {
        checks.push(...(await scenario.finish(ctx, fixtures, results)));
      } catch (error) {
        checks.push({ name: 'end-of-run checks', passed: false, detail: `could not run: ${error instanceof Error ? error.message : String(error)}` });
      }
    }
    await cleanUp();
    let invariants: InvariantsSection | undefined;
    if (history !== undefined) {
      await history.close();
      if (interrupted) {
        invariants = invariantsSection(undefined, { operations: history.written, notes: ['Interrupted: the history was saved but not checked (run keysim check on it).'] });
      } else {
        if (oracle !== undefined) {
          clearInterval(oracleTimer);
          await oracle.drain();
        }
        const sectionNotes = oracleProblem === undefined ? [] : [`The oracle did not run: ${oracleProblem}`];
        // The bound must still hold at the end of the run: a wider one if the clocks drifted apart.
        if (skew !== undefined) skew = await remeasuredRunSkew(target, skew, { timeoutMs: settings.timeoutMs });
        if (skew !== undefined) sectionNotes.push(skew.note);
        if (oracle === undefined && target.kind === 'live') sectionNotes.push('No oracle on a live target: it replays the simulator\'s journal.');
        invariants = await invariantsReport(options.historyPath as string, oracle, sectionNotes, skew?.wallSkewMs);
      }
    }
    if (dropped > 0) notes.push(`${dropped} planned sends were dropped (the queue bound was reached or the run was stopped).`);
    if (late > 0) notes.push(`${late} sends started more than ${LATE_THRESHOLD_MS} ms after their intended time: the generator could not keep up; consider a lower --rate.`);

    const generator = generatorMonitor.section({ ...DEFAULT_GENERATOR_LIMITS, ...options.generatorLimits });

    const withoutThresholds: Omit<RunReport, 'thresholds'> = {
      schema: REPORT_SCHEMA,
      version: REPORT_VERSION,
      scenario: { name: scenario.name, description: scenario.description },
      status: interrupted ? 'interrupted' : targetStopped !== undefined ? 'failed' : 'completed',
      seed,
      startedAt: startedAt.toISOString(),
      finishedAt: now().toISOString(),
      measuredMs: Math.round(measuredMs),
      target: { kind: target.kind, url: target.url, ...(target.remote === true ? { remote: true } : {}) },
      settings: {
        model: settings.model,
        rate: settings.rate,
        connections: settings.connections,
        pipelining: settings.pipelining,
        durationMs: settings.durationMs,
        warmupMs: settings.warmupMs,
        timeoutMs: settings.timeoutMs,
      },
      environment: environment(options.keysimVersion),
      phases: phaseReports,
      totals: results.totals,
      overall: figures.overall,
      operations: figures.operations,
      timeline: figures.timeline,
      checks,
      ...(invariants === undefined ? {} : { invariants }),
      generator,
      ...(resources === undefined ? {} : { resources }),
      notes,
    };
    return { ...withoutThresholds, thresholds: evaluateThresholds(options.thresholds, withoutThresholds) };
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
