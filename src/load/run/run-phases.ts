/**
 * A run's phases: planned once the fixtures exist (the scenario's own phases or a warm-up then
 * the load), then executed one after the other — each phase's `before` step, its service-clock
 * sweep, its load in the open or the closed model, and the phase's line in the report.
 */
import { performance } from 'node:perf_hooks';
import type { Random } from '../../engine/index.js';
import type { PhaseReport } from '../../report/model.js';
import { type ClockDriver, serviceClockProblem } from '../time/index.js';
import { weightedPicker } from '../scenario/index.js';
import type { GeneratorMonitor } from '../metrics/index.js';
import type { HistoryWriter } from '../history/index.js';
import type { OpenModelExecutor } from '../executors/index.js';
import type { PlannedRequest } from '../executors/index.js';
import { type PhaseInput, type PlannedPhase, type Segment, planPhases, segmentPlan } from '../plan/index.js';
import { stagesProblem } from '../plan/index.js';
import type { Recorder } from '../metrics/index.js';
import type { ResourceLedger } from '../resources/index.js';
import type { RuleTally } from '../rules/index.js';
import { trackingCheck } from '../resources/index.js';
import { neverCameReason } from '../answers/index.js';
import type { ProgressSnapshot } from './run-options.js';
import { ScenarioFailedError } from '../scenario/index.js';
import { endPhaseClock, phaseClockFrom, phaseHistoryOf, phaseLine, phaseReport, sendPhaseLoad, startPhase, startProgressTimer } from './run-phase-steps.js';
import type { LoadSettings, MixEntry, PhaseSpec, Scenario, ScenarioContext } from '../scenario/index.js';
import type { Target } from '../target/index.js';

/** The phases of a run, as the scenario declared them and as planned end to end. */
export interface RunPlan {
  specs: ReadonlyArray<PhaseSpec<unknown>>;
  planned: readonly PlannedPhase[];
  /** Planned duration of all phases, ms. */
  totalMs: number;
}

/** What the phase loop needs from the run that set it up. */
export interface PhaseLoop {
  scenario: Scenario<unknown>;
  target: Target;
  settings: LoadSettings;
  ctx: ScenarioContext;
  fixtures: unknown;
  plan: RunPlan;
  /** Monotonic ms at which the run's load began: phase offsets and progress count from it. */
  runStartMs: number;
  /** The service clock stands still during a phase unless a sweep moves it. */
  clockFrozen: boolean;
  history: HistoryWriter | undefined;
  ledger: ResourceLedger;
  recorder: Recorder;
  generatorMonitor: GeneratorMonitor;
  /** The open model's executor; undefined in the closed model (or when interrupted before the load). */
  executor: OpenModelExecutor | undefined;
  /** Aborted to stop the closed model's load. */
  stopSignal: AbortSignal;
  /** Read as the loop goes: a SIGINT or a dead target may stop the run at any moment. */
  interrupted: () => boolean;
  targetStopped: () => boolean;
  onProgress: ((progress: ProgressSnapshot) => void) | undefined;
  log: (line: string) => void;
}

/** What the phases ran, for the report: the late and dropped sends and the time cover measured phases only. */
export interface PhasesOutcome {
  phaseReports: PhaseReport[];
  late: number;
  dropped: number;
  measuredMs: number;
}

function defaultPhases<F>(settings: LoadSettings): Array<PhaseSpec<F>> {
  const phases: Array<PhaseSpec<F>> = [];
  if (settings.warmupMs > 0) phases.push({ name: 'warm-up', durationMs: settings.warmupMs, warmup: true });
  phases.push({ name: 'load', durationMs: settings.durationMs });
  return phases;
}

/**
 * What the planner gets for one phase: its own stages, its own rate, or the run's — a measured
 * phase of a run with stages follows them (warm-ups keep the constant run rate, see
 * docs/load-shapes.md#warm-up).
 */
function phaseInput(scenarioName: string, p: PhaseSpec<unknown>, settings: LoadSettings): PhaseInput {
  const warmup = p.warmup === true;
  const own = p.stages === undefined ? undefined : { startRate: p.startRate ?? 0, stages: p.stages };
  const staged =
    own ?? (p.rate === undefined && !warmup && settings.stages !== undefined ? { startRate: settings.startRate ?? 0, stages: settings.stages } : undefined);
  if (staged !== undefined) {
    const problem =
      settings.model === 'closed'
        ? "stages ramp the open model's arrival rate; the closed model has none (drop the stages, or run --model open)"
        : stagesProblem(staged.startRate, staged.stages);
    if (problem !== undefined) throw new ScenarioFailedError(scenarioName, `the stages of phase "${p.name}"`, problem);
    return { name: p.name, durationMs: 0, rate: 0, warmup, stages: staged };
  }
  if (p.durationMs === undefined) throw new ScenarioFailedError(scenarioName, `phase "${p.name}"`, 'it has neither a durationMs nor stages');
  return { name: p.name, durationMs: p.durationMs, rate: p.rate ?? settings.rate, warmup };
}

/**
 * Plans the run's phases. Every phase's service-clock sweep is checked here, before any phase
 * runs, so that a bad sweep fails the run before it has sent anything.
 */
export function planRun(scenario: Scenario<unknown>, ctx: ScenarioContext, fixtures: unknown, settings: LoadSettings, segment?: Segment): RunPlan {
  const specs = scenario.phases?.(ctx, fixtures) ?? defaultPhases<unknown>(settings);
  const whole = planPhases(specs.map((p) => phaseInput(scenario.name, p, settings)));
  // A segment sends its striped share of every phase; the closed model's connections are divided by the CLI.
  const planned = segment === undefined || settings.model === 'closed' ? whole : segmentPlan(whole, segment);
  for (const [i, spec] of specs.entries()) {
    const problem =
      spec.serviceClock === undefined
        ? undefined
        : serviceClockProblem({ ...spec.serviceClock, durationMs: planned[i]?.durationMs ?? 0 }, ctx.admin !== undefined);
    if (problem !== undefined) throw new ScenarioFailedError(scenario.name, `the service clock of phase "${spec.name}"`, problem);
  }
  const totalMs = planned.reduce((sum, p) => sum + p.durationMs, 0);
  return { specs, planned, totalMs };
}

/**
 * Builds a phase's requests one at a time, from its mix, as the executor asks for them. An answer
 * that is not the service's (a gateway's 502/504, a body cut short: unknown-outcome.ts) never
 * came as far as the checks are concerned: the entry's check is not asked (so a counting check
 * counts it as without answer) and `notJudged` is told instead.
 */
function requestSource(
  mix: ReadonlyArray<MixEntry<unknown>>,
  fixtures: unknown,
  random: Random,
  ledger: ResourceLedger,
  notJudged: () => void,
  rules?: RuleTally,
): () => PlannedRequest {
  const pick = weightedPicker(mix);
  return (): PlannedRequest => {
    const entry = pick(random);
    const request = entry.build(fixtures, random);
    const check = entry.check;
    rules?.built(entry.rules);
    // Figures are kept per API operation (what thresholds name); the entry's name labels check failures.
    return {
      operation: request.op,
      label: entry.name ?? request.op,
      spec: request,
      check: trackingCheck(
        request.op,
        request.body,
        request.auth,
        check === undefined
          ? undefined
          : (response) => {
              if (neverCameReason(response) === undefined) {
                rules?.judged(entry.rules);
                return check(response, fixtures);
              }
              notJudged();
              return undefined;
            },
        ledger,
      ),
    };
  };
}

/**
 * Runs the planned phases in order until the last, an interruption or a dead target. Whatever
 * happens, the progress timer and a running sweep are stopped and the executor is closed.
 */
export async function runPhases(loop: PhaseLoop): Promise<PhasesOutcome> {
  const { scenario, settings, ctx, fixtures, recorder, generatorMonitor, executor, history, runStartMs, clockFrozen } = loop;
  const { specs, planned, totalMs } = loop.plan;
  const phaseReports: PhaseReport[] = [];
  let late = 0;
  let dropped = 0;
  let measuredMs = 0;
  let measuringStarted = false;
  let currentPhase = '';
  const progressTimer = startProgressTimer(recorder, runStartMs, totalMs, () => currentPhase, loop.onProgress);
  // The service clock's sweep of the running phase, when it has a serviceClock (clock-driver.ts).
  let clockDriver: ClockDriver | undefined;

  try {
    for (const [i, phase] of planned.entries()) {
      if (loop.interrupted() || loop.targetStopped()) break;
      const spec = specs[i] as PhaseSpec<unknown>;
      currentPhase = phase.name;
      clockDriver = await startPhase(scenario.name, ctx, fixtures, spec, phase);
      const clockFrom = await phaseClockFrom(ctx, clockDriver);
      const next = requestSource(
        spec.mix ?? scenario.mix,
        fixtures,
        ctx.random,
        loop.ledger,
        () => {
          if (!phase.warmup) recorder.noteNotJudged();
        },
        // The warm-up's answers judge nothing (its check failures are not counted either).
        phase.warmup ? undefined : recorder.rules,
      );
      if (!phase.warmup) generatorMonitor.startPhase();
      const phaseStartMs = performance.now();
      if (!phase.warmup && !measuringStarted) {
        recorder.startMeasuring(phaseStartMs);
        measuringStarted = true;
      }
      loop.log(phaseLine(phase));
      const phaseHistory = await phaseHistoryOf(history, ctx, clockDriver, clockFrozen, clockFrom);
      const sent = await sendPhaseLoad(loop, phase, phaseStartMs, next, phaseHistory);
      if (!phase.warmup) {
        late += sent.late;
        dropped += sent.dropped;
      }
      const phaseEndMs = performance.now();
      if (!phase.warmup) generatorMonitor.endPhase(phase.name, sent.schedule);
      if (!phase.warmup) measuredMs += phaseEndMs - phaseStartMs;
      try {
        await endPhaseClock(scenario.name, phase, clockDriver, loop.interrupted());
      } finally {
        clockDriver = undefined;
      }
      // A remote simulator that stopped answering has no clock to read: the report says it stopped.
      const clockTo = ctx.admin === undefined || loop.targetStopped() ? undefined : new Date(await ctx.admin.clockNow()).toISOString();
      phaseReports.push(phaseReport(phase, settings, Math.round(phaseStartMs - runStartMs), Math.round(phaseEndMs - phaseStartMs), clockFrom, clockTo));
    }
  } finally {
    clearInterval(progressTimer);
    await clockDriver?.cancel();
    if (loop.interrupted()) recorder.freeze();
    await executor?.close();
  }
  return { phaseReports, late, dropped, measuredMs };
}
