/**
 * The steps of one phase of a run, which run-phases.ts takes in order: the progress timer, the
 * phase's start (its `before` step and its service-clock sweep), what the history records of the
 * service clock, the load in the open or the closed model, the sweep's end, and the phase's line
 * in the report.
 */
import { performance } from 'node:perf_hooks';
import type { PhaseReport } from '../../report/model.js';
import { ClockDriver } from '../time/index.js';
import { runClosedPhase } from '../executors/index.js';
import type { HistoryWriter } from '../history/index.js';
import type { PhaseHistory } from '../history/index.js';
import type { OpenModelExecutor } from '../executors/index.js';
import type { PlannedRequest } from '../executors/index.js';
import type { PlannedPhase } from '../plan/index.js';
import type { Recorder } from '../metrics/index.js';
import type { ProgressSnapshot } from './run-options.js';
import { runningClockBounds } from '../time/index.js';
import { ScenarioFailedError } from '../scenario/index.js';
import type { LoadSettings, PhaseSpec, ScenarioContext } from '../scenario/index.js';
import { stageText } from '../plan/index.js';
import type { Target } from '../target/index.js';

/** Tells `onProgress` once a second how far the run got; the caller clears the timer. */
export function startProgressTimer(
  recorder: Recorder,
  runStartMs: number,
  totalMs: number,
  currentPhase: () => string,
  onProgress: ((progress: ProgressSnapshot) => void) | undefined,
): NodeJS.Timeout {
  let lastRequests = 0;
  let lastProgressMs = performance.now();
  const progressTimer = setInterval(() => {
    const t = performance.now();
    const requests = recorder.requests;
    onProgress?.({
      phase: currentPhase(),
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
  return progressTimer;
}

/** Runs the phase's `before` step, then starts its service-clock sweep when it has one (clock-driver.ts). */
export async function startPhase(
  scenarioName: string,
  ctx: ScenarioContext,
  fixtures: unknown,
  spec: PhaseSpec<unknown>,
  phase: PlannedPhase,
): Promise<ClockDriver | undefined> {
  try {
    await spec.before?.(ctx, fixtures);
  } catch (error) {
    throw new ScenarioFailedError(scenarioName, `the "before" step of phase "${phase.name}"`, error);
  }
  if (spec.serviceClock === undefined) return undefined;
  try {
    return await ClockDriver.start({ admin: ctx.admin, ...spec.serviceClock, durationMs: phase.durationMs });
  } catch (error) {
    throw new ScenarioFailedError(scenarioName, `the service clock of phase "${phase.name}"`, error);
  }
}

/** The service clock as the phase starts (ISO): the sweep's start, or the target's clock; undefined without an admin. */
export async function phaseClockFrom(ctx: ScenarioContext, clockDriver: ClockDriver | undefined): Promise<string | undefined> {
  if (clockDriver !== undefined) return new Date(clockDriver.fromMs).toISOString();
  return ctx.admin === undefined ? undefined : new Date(await ctx.admin.clockNow()).toISOString();
}

/** The phase's log line: its requests, its rate or stages, and whether it is measured. */
export function phaseLine(phase: PlannedPhase): string {
  const shape =
    phase.stages === undefined ? `at ${phase.rate}/s` : `in stages ${phase.stages.stages.map(stageText).join(' ')} from ${phase.stages.startRate}/s`;
  return `phase "${phase.name}": ${phase.count} requests ${shape} over ${phase.durationMs} ms${phase.warmup ? ' (warm-up, not measured)' : ''}`;
}

/** Where the history places the phase's operations on the service clock; undefined without a history. */
export async function phaseHistoryOf(
  history: HistoryWriter | undefined,
  ctx: ScenarioContext,
  clockDriver: ClockDriver | undefined,
  clockFrozen: boolean,
  clockFrom: string | undefined,
): Promise<PhaseHistory | undefined> {
  // The embedded simulator's clock is manual: without a sweep it stands still during a phase
  // (only `before` moves it); with one, the driver brackets each request.
  const serviceMs = clockDriver === undefined && clockFrozen && clockFrom !== undefined ? Date.parse(clockFrom) : undefined;
  // A running service clock (a remote simulator on the system clock): bounds from one reading of it.
  const runningClock =
    history !== undefined && clockDriver === undefined && !clockFrozen && ctx.admin !== undefined ? await runningClockBounds(ctx.admin.clockNow) : undefined;
  return history === undefined ? undefined : { writer: history, serviceMs, clock: clockDriver ?? runningClock };
}

/** What the phase's load needs from the run. */
export interface PhaseLoad {
  target: Target;
  settings: LoadSettings;
  recorder: Recorder;
  executor: OpenModelExecutor | undefined;
  stopSignal: AbortSignal;
}

/** What a phase's load sent: its late and dropped sends (open model), and its schedule for the generator monitor. */
export interface PhaseSent {
  late: number;
  dropped: number;
  schedule: { scheduledSends: number | null; lateSends: number | null };
}

/** Sends the phase's load: in the open model on the executor, in the closed model on its own connections. */
export async function sendPhaseLoad(
  load: PhaseLoad,
  phase: PlannedPhase,
  phaseStartMs: number,
  next: () => PlannedRequest,
  phaseHistory: PhaseHistory | undefined,
): Promise<PhaseSent> {
  const { executor, settings, recorder } = load;
  if (executor !== undefined) {
    const outcome = await executor.runPhase(phase, phaseStartMs, next, recorder, phaseHistory);
    // The sends that came due: a Ctrl-C's undue sends are dropped, but were never late.
    return { late: outcome.late, dropped: outcome.dropped, schedule: { scheduledSends: outcome.due, lateSends: outcome.late } };
  }
  if (settings.model === 'closed') {
    await runClosedPhase({ target: load.target, settings, phase, next, recorder, signal: load.stopSignal, history: phaseHistory });
  }
  return { late: 0, dropped: 0, schedule: { scheduledSends: null, lateSends: null } };
}

/** Ends the phase's sweep exactly at its toMs; an interrupted run leaves the clock where it got to. */
export async function endPhaseClock(scenarioName: string, phase: PlannedPhase, clockDriver: ClockDriver | undefined, interrupted: boolean): Promise<void> {
  try {
    await (interrupted ? clockDriver?.cancel() : clockDriver?.finish());
  } catch (error) {
    throw new ScenarioFailedError(scenarioName, `the service clock of phase "${phase.name}"`, error);
  }
}

/** The phase's line in the report. */
export function phaseReport(
  phase: PlannedPhase,
  settings: LoadSettings,
  startMs: number,
  durationMs: number,
  clockFrom: string | undefined,
  clockTo: string | undefined,
): PhaseReport {
  return {
    name: phase.name,
    startMs,
    durationMs,
    rate: settings.model === 'open' ? phase.rate : settings.connections,
    warmup: phase.warmup,
    ...(phase.stages === undefined
      ? {}
      : { startRate: phase.stages.startRate, stages: phase.stages.stages.map((st) => ({ durationMs: st.durationMs, target: st.target })) }),
    ...(clockFrom === undefined ? {} : { serviceClockFrom: clockFrom }),
    ...(clockTo === undefined ? {} : { serviceClockTo: clockTo }),
  };
}
