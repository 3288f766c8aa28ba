/**
 * Stages: a ramping arrival rate, as in k6's ramping-arrival-rate executor. Each stage moves the
 * rate linearly from where the previous stage ended (the first from the start rate) to its own
 * target over its duration: a constant stage repeats the previous target, a spike is a short stage.
 *
 * Pure planning (docs/load-shapes.md#stages): with N(t) the integral of the rate from the start,
 * request i is due at the first instant N(t) exceeds i — the same i / rate as the constant-rate
 * plan when the rate is constant — and a staged phase plans round(N(end)) requests. Every time is
 * computed from the integral, never by adding up gaps, so a long ramp does not drift.
 */

import type { StageReport } from '../../report/model.js';

/** `durationMs`, and `target`: the requests per second at the end of the stage. */
export type Stage = StageReport;

/** The rate profile of a staged phase, with each stage's start and cumulative count precomputed. */
export interface StagePlan {
  startRate: number;
  stages: readonly Stage[];
  /** Offsets of the stage boundaries from the phase's start, ms (length stages + 1). */
  boundariesMs: readonly number[];
  /** N at each boundary: the requests the rate integrates to by then (length stages + 1). */
  cumulative: readonly number[];
}

export function planStages(startRate: number, stages: readonly Stage[]): StagePlan {
  const boundariesMs = [0];
  const cumulative = [0];
  let from = startRate;
  let atMs = 0;
  let n = 0;
  for (const stage of stages) {
    atMs += stage.durationMs;
    // A constant stage in plannedCount's own expression: a half rounds the same way in both plans.
    n += from === stage.target ? (from * stage.durationMs) / 1000 : ((from + stage.target) * stage.durationMs) / 2000;
    boundariesMs.push(atMs);
    cumulative.push(n);
    from = stage.target;
  }
  return { startRate, stages, boundariesMs, cumulative };
}

/** Total duration of the stages, ms. */
export function stagesDurationMs(stages: readonly Stage[]): number {
  return stages.reduce((sum, s) => sum + s.durationMs, 0);
}

/** The number of requests a staged phase plans: the integral of its rate, rounded to the nearest. */
export function stagedCount(plan: StagePlan): number {
  const total = plan.cumulative[plan.cumulative.length - 1] ?? 0;
  return total > 0 ? Math.round(total) : 0;
}

/** The rate at the start of stage k. */
function rateBefore(plan: StagePlan, k: number): number {
  return k === 0 ? plan.startRate : (plan.stages[k - 1]?.target ?? 0);
}

/** The stage request `index` falls in: the first whose cumulative count at its end exceeds it. */
export function stageOf(plan: StagePlan, index: number): number {
  let lo = 0;
  let hi = plan.stages.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((plan.cumulative[mid + 1] ?? 0) > index) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/**
 * Intended send time of request `index` of a staged phase, ms from the phase's start: the first
 * instant the integral of the rate exceeds `index`. Within a stage of duration D going from rate a
 * to b, N(u) = a·u + (b − a)·u²/(2D); solved for u in the form that stays exact when a = 0 or a = b.
 */
export function stagedOffsetMs(plan: StagePlan, index: number): number {
  const k = stageOf(plan, index);
  const stage = plan.stages[k] as Stage;
  const startMs = plan.boundariesMs[k] ?? 0;
  const j = index - (plan.cumulative[k] ?? 0);
  if (j <= 0) return startMs;
  const a = rateBefore(plan, k);
  const b = stage.target;
  // Constant stage: the same expression as the constant-rate plan, so both agree to the bit.
  if (a === b) return startMs + (j * 1000) / a;
  const d = stage.durationMs / 1000;
  const u = (2 * j) / (a + Math.sqrt(Math.max(0, a * a + (2 * (b - a) * j) / d)));
  return startMs + Math.min(u * 1000, stage.durationMs);
}

/** The intended rate at `offsetMs` from the phase's start (for the report's target line). */
export function rateAt(plan: StagePlan, offsetMs: number): number {
  for (const [k, stage] of plan.stages.entries()) {
    const start = plan.boundariesMs[k] ?? 0;
    const end = plan.boundariesMs[k + 1] ?? start;
    if (offsetMs <= end) {
      const a = rateBefore(plan, k);
      return stage.durationMs === 0 ? stage.target : a + ((stage.target - a) * Math.max(0, offsetMs - start)) / stage.durationMs;
    }
  }
  return plan.stages[plan.stages.length - 1]?.target ?? plan.startRate;
}

/**
 * Parses `--stage` text, `DURATION:TARGET` such as `30s:100` or `2m:2000`; the duration needs its
 * unit. Returns the stage, or what is wrong with the text.
 */
export function parseStage(text: string, parseDuration: (t: string) => number | undefined): Stage | string {
  const examples = 'write DURATION:TARGET, e.g. 30s:100 (ramp to 100 req/s over 30 s) or 2m:2000';
  const match = /^\s*([^:]+?)\s*:\s*([^:]+?)\s*$/.exec(text);
  if (match === null) return `"${text}" is not a stage: ${examples}.`;
  const [, durationText = '', targetText = ''] = match;
  const durationMs = parseDuration(durationText);
  if (durationMs === undefined) return `"${text}": "${durationText}" is not a duration: ${examples}.`;
  if (!/[a-z]$/i.test(durationText)) return `"${text}": the duration "${durationText}" has no unit (seconds? milliseconds?): ${examples}.`;
  const target = Number(targetText);
  if (targetText === '' || !Number.isFinite(target)) return `"${text}": "${targetText}" is not a rate: ${examples}.`;
  if (target < 0) return `"${text}": the target rate must be 0 or more requests per second, got ${targetText}.`;
  return { durationMs, target };
}

/** Checks a whole list of stages: a usage problem, or undefined when it can be run. */
export function stagesProblem(startRate: number, stages: readonly Stage[]): string | undefined {
  if (!Number.isFinite(startRate) || startRate < 0) return `the start rate must be 0 or more requests per second, got ${String(startRate)}.`;
  if (stages.length === 0) return 'there are no stages.';
  for (const s of stages) {
    if (!Number.isFinite(s.durationMs) || s.durationMs < 0) return `a stage's duration must be 0 or more, got ${String(s.durationMs)} ms.`;
    if (!Number.isFinite(s.target) || s.target < 0) return `a stage's target must be 0 or more requests per second, got ${String(s.target)}.`;
  }
  if (stagesDurationMs(stages) === 0) return 'the stages last no time in total: give at least one stage a duration, e.g. 30s:100.';
  return undefined;
}

/** `30s:100`-style text of a stage, for logs and reports. */
export function stageText(stage: Stage): string {
  const ms = stage.durationMs;
  const d =
    ms % 3_600_000 === 0 && ms > 0 ? `${ms / 3_600_000}h` : ms % 60_000 === 0 && ms > 0 ? `${ms / 60_000}m` : ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`;
  return `${d}:${stage.target}`;
}
