/**
 * The load plan, a pure function of the settings (docs/architecture.md#conventions): in the open model every
 * request of a phase has an intended send time, evenly spaced at the phase's rate —
 * request i of a phase of rate r starts at i · 1000 / r ms. Latency is later measured from this
 * intended time, not from when the request actually left, so a stalled server shows up in the
 * percentiles instead of silently slowing the generator down (coordinated omission, as in wrk2).
 * Times are computed on demand, so a ten-million-request plan costs no memory. A phase may instead
 * ramp its rate through stages (stages.ts); the executors ask `phaseOffsetMs` and never see which.
 */
import { type Stage, type StagePlan, planStages, stagedCount, stagedOffsetMs, stagesDurationMs } from './stages.js';

export interface PlannedPhase {
  name: string;
  /** Offset of the phase's first intended send from the start of the run, ms. */
  startMs: number;
  durationMs: number;
  /** Requests per second (a staged phase: its mean rate, count / duration). */
  rate: number;
  /** round(rate · duration), or for stages the integral of their rate rounded: the exact number of sends the phase plans. */
  count: number;
  warmup: boolean;
  /** Present when the phase ramps its rate through stages (its duration is theirs). */
  stages?: StagePlan;
  /**
   * Present when this process sends one segment's share of the phase (segmentPlan): `count` is
   * then the segment's own count, and its request j is the whole plan's request j·N + i.
   */
  segment?: Segment;
}

/** Segment `index` of `count` (`--segment i/N`): arrival k of every phase goes to segment k mod N. */
export interface Segment {
  index: number;
  count: number;
}

export interface PhaseInput {
  name: string;
  durationMs: number;
  rate: number;
  warmup: boolean;
  /** Ramp through these stages instead of the constant `rate` (durationMs is then theirs). */
  stages?: { startRate: number; stages: readonly Stage[] };
}

/** The number of requests a phase plans: round(rate × duration in seconds). */
export function plannedCount(rate: number, durationMs: number): number {
  if (!(rate > 0) || !(durationMs > 0)) return 0;
  return Math.round((rate * durationMs) / 1000);
}

/** Intended send time of request `index` of a phase, in ms from the phase's start. */
export function intendedOffsetMs(index: number, rate: number): number {
  return (index * 1000) / rate;
}

/** Intended send time of request `index` of a planned phase (constant or staged, whole or a segment), ms from its start. */
export function phaseOffsetMs(phase: PlannedPhase, index: number): number {
  const k = phase.segment === undefined ? index : index * phase.segment.count + phase.segment.index;
  return phase.stages === undefined ? intendedOffsetMs(k, phase.rate) : stagedOffsetMs(phase.stages, k);
}

/** How many of `total` arrivals (numbered 0…total−1) fall to segment i of N when arrival k goes to k mod N. */
export function segmentCount(total: number, segment: Segment): number {
  return total > segment.index ? Math.floor((total - segment.index - 1) / segment.count) + 1 : 0;
}

/**
 * One segment's share of a plan (docs/distributed.md#segments): the same phases on the same
 * intended timeline, each keeping every N-th arrival starting from the i-th. Striping rather
 * than cutting the timeline in blocks keeps every segment's load shaped like the whole one (a ramp
 * ramps in every segment) and the N segments together send exactly the single-process plan.
 */
export function segmentPlan(phases: readonly PlannedPhase[], segment: Segment): PlannedPhase[] {
  return phases.map((phase) => ({ ...phase, count: segmentCount(phase.count, segment), segment }));
}

/** Parses `--segment` text `i/N` (0 ≤ i < N); returns the segment or what is wrong with the text. */
export function parseSegment(text: string): Segment | string {
  const match = /^\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(text);
  const example = 'write i/N with 0 ≤ i < N, e.g. --segment 0/4 … --segment 3/4 for four segments';
  if (match === null) return `--segment "${text}" is not a segment: ${example}.`;
  const index = Number(match[1]);
  const count = Number(match[2]);
  if (!Number.isSafeInteger(count) || count < 1) return `--segment "${text}": N must be 1 or more: ${example}.`;
  if (!Number.isSafeInteger(index) || index >= count) return `--segment "${text}": i must be below N (segments are numbered from 0): ${example}.`;
  return { index, count };
}

/** `i/N`. */
export function segmentText(segment: Segment): string {
  return `${segment.index}/${segment.count}`;
}

function planPhase(phase: PhaseInput, startMs: number): PlannedPhase {
  const { stages: staged, ...rest } = phase;
  if (staged === undefined) return { ...rest, startMs, count: plannedCount(phase.rate, phase.durationMs) };
  const stages = planStages(staged.startRate, staged.stages);
  const durationMs = stagesDurationMs(staged.stages);
  const count = stagedCount(stages);
  return { ...rest, startMs, durationMs, rate: durationMs > 0 ? (count * 1000) / durationMs : 0, count, stages };
}

/** Lays phases end to end. */
export function planPhases(phases: readonly PhaseInput[]): PlannedPhase[] {
  let startMs = 0;
  return phases.map((phase) => {
    const planned = planPhase(phase, startMs);
    startMs += planned.durationMs;
    return planned;
  });
}

/** Parses a duration such as `30s`, `500ms`, `2m`, `1h`, or a bare number of seconds. */
export function parseDurationMs(text: string): number | undefined {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$/.exec(text);
  if (match === null) return undefined;
  const value = Number(match[1]);
  const unit = match[2] ?? 's';
  const factor = unit === 'ms' ? 1 : unit === 's' ? 1000 : unit === 'm' ? 60_000 : 3_600_000;
  const ms = Math.round(value * factor);
  return Number.isFinite(ms) ? ms : undefined;
}
