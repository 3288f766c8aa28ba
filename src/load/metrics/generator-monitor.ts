/**
 * The load generator measures itself, phase by phase, so that a run on a busy machine is not
 * blamed on the service: its event-loop delay, how busy its own (main) thread was, the CPU of the
 * whole process, and the late sends the open model counts. `judgeGenerator` turns these figures
 * into the verdict "could not keep the schedule" (the run is then inconclusive).
 */
import { loadavg } from 'node:os';
import { type EventLoopUtilization, type IntervalHistogram, monitorEventLoopDelay, performance } from 'node:perf_hooks';
import type { GeneratorPhase, GeneratorSection } from '../../report/model.js';

/** When the generator is judged not to have kept its schedule. */
export interface GeneratorLimits {
  /**
   * Limited when more than this share of a measured phase's scheduled sends started late (more
   * than the late threshold, 10 ms, after their intended time). Open model only. 1 never judges.
   */
  lateShare: number;
  /** Limited when a measured phase's event-loop delay p99 exceeds this, ms. Infinity never judges. */
  loopDelayP99Ms: number;
}

/**
 * The defaults. A late share of 1 % leaves room for the odd garbage-collection pause; an
 * event-loop delay p99 of 50 ms is more than a quiet machine ever shows (a few ms) and already
 * shifts every latency percentile by that much, so a latency threshold can no longer be trusted.
 */
export const DEFAULT_GENERATOR_LIMITS: GeneratorLimits = { lateShare: 0.01, loopDelayP99Ms: 50 };

/** Sampling interval of the event-loop delay, ms: the histogram's values include it. */
const RESOLUTION_MS = 10;

const round = (value: number, digits: number) => Math.round(value * 10 ** digits) / 10 ** digits;

interface PhaseMark {
  wallMs: number;
  cpu: NodeJS.CpuUsage;
  elu: EventLoopUtilization;
}

export class GeneratorMonitor {
  readonly #delay: IntervalHistogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  readonly #phases: GeneratorPhase[] = [];
  #mark: PhaseMark | undefined;

  /** Starts measuring a phase (resets the event-loop delay histogram). */
  startPhase(): void {
    this.#delay.reset();
    this.#delay.enable();
    this.#mark = { wallMs: performance.now(), cpu: process.cpuUsage(), elu: performance.eventLoopUtilization() };
  }

  /**
   * Ends the phase started last and keeps its figures. `scheduledSends` and `lateSends` are the
   * open model's (null in the closed model, which has no schedule).
   */
  endPhase(name: string, schedule: { scheduledSends: number | null; lateSends: number | null }): GeneratorPhase | undefined {
    const mark = this.#mark;
    if (mark === undefined) return undefined;
    this.#mark = undefined;
    this.#delay.disable();
    const wallMs = Math.max(performance.now() - mark.wallMs, 1e-6);
    const cpu = process.cpuUsage(mark.cpu);
    const elu = performance.eventLoopUtilization(mark.elu);
    // The histogram holds whole intervals (ns), sampling interval included; without samples (a
    // phase shorter than one interval) its percentiles are 0 and its min is huge.
    const delayMs = (ns: number) => (this.#delay.count === 0 ? 0 : round(Math.max(0, ns / 1e6 - RESOLUTION_MS), 3));
    const phase: GeneratorPhase = {
      name,
      ...schedule,
      loopDelayMs: { p50: delayMs(this.#delay.percentile(50)), p99: delayMs(this.#delay.percentile(99)), max: delayMs(this.#delay.max) },
      processCpuCores: round((cpu.user + cpu.system) / 1000 / wallMs, 3),
      mainThreadBusy: round(Math.min(1, Math.max(0, elu.utilization)), 3),
    };
    this.#phases.push(phase);
    return phase;
  }

  /** Stops measuring (a phase cut short by an error leaves the event-loop delay sampling on otherwise). */
  close(): void {
    this.#delay.disable();
    this.#mark = undefined;
  }

  /** The figures of every phase measured so far, and the verdict over them. */
  section(limits: GeneratorLimits = DEFAULT_GENERATOR_LIMITS): GeneratorSection {
    return judgeGenerator(this.#phases, limits, loadavg()[0] ?? 0);
  }
}

const percent = (share: number) => `${round(share * 100, 1)} %`;

/**
 * The verdict: the generator could not keep its schedule when, in any measured phase, the share of
 * late sends (open model) is over `limits.lateShare`, or the event-loop delay p99 is over
 * `limits.loopDelayP99Ms`. CPU figures are reported to explain a verdict, not judged: a busy
 * generator that still keeps its schedule measures the service faithfully.
 */
export function judgeGenerator(phases: readonly GeneratorPhase[], limits: GeneratorLimits, loadAverage: number): GeneratorSection {
  const reasons: string[] = [];
  for (const phase of phases) {
    if (phase.scheduledSends !== null && phase.lateSends !== null && phase.scheduledSends > 0) {
      const share = phase.lateSends / phase.scheduledSends;
      if (share > limits.lateShare) {
        reasons.push(
          `phase "${phase.name}": ${phase.lateSends} of ${phase.scheduledSends} sends (${percent(share)}) started late, over the limit of ${percent(limits.lateShare)}`,
        );
      }
    }
    if (phase.loopDelayMs.p99 > limits.loopDelayP99Ms) {
      reasons.push(
        `phase "${phase.name}": the generator's event-loop delay p99 was ${phase.loopDelayMs.p99} ms, over the limit of ${limits.loopDelayP99Ms} ms`,
      );
    }
  }
  return {
    limited: reasons.length > 0,
    reasons,
    // JSON has no Infinity: a limit that never judges is written as the largest number.
    limits: { lateShare: limits.lateShare, loopDelayP99Ms: Number.isFinite(limits.loopDelayP99Ms) ? limits.loopDelayP99Ms : Number.MAX_VALUE },
    phases: [...phases],
    loadAverage: round(loadAverage, 2),
  };
}
