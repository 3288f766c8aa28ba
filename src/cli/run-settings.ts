/**
 * `keysim run`'s load flags turned into one scenario's LoadSettings, every one checked before
 * anything is sent: a usage error names what was wrong and what to write instead.
 */
import { parseDurationMs } from '../load/plan/index.js';
import { type Stage, parseStage, stagesDurationMs, stagesProblem } from '../load/plan/index.js';
import { DEFAULT_GENERATOR_LIMITS, type GeneratorLimits } from '../load/metrics/index.js';
import type { LoadSettings, Scenario } from '../load/scenario/index.js';
import { UsageError } from './exit-codes.js';

/** The load flags of `keysim run` (what yargs hands over). */
export interface LoadFlags {
  rate?: number;
  connections?: number;
  pipelining: number;
  duration?: string;
  warmup?: string;
  timeout: string;
  model?: 'open' | 'closed';
  /** `--dead-after`: a duration, or "off". */
  deadAfter: string;
  /** `--stage DURATION:TARGET` (repeatable): a ramping arrival rate instead of --rate/--duration. */
  stage?: string[];
  /** `--start-rate`: the rate the first stage ramps from (default 0). */
  startRate?: number;
}

/**
 * The load shape one source of settings gives (the scenario's defaults, the configuration file,
 * the flags), already checked. The highest source that gives a shape — a rate or duration, or
 * stages — decides it; stages reset the warm-up to none unless that source or a higher one sets one.
 */
export interface ShapeLayer {
  rate?: number;
  durationMs?: number;
  warmupMs?: number;
  stages?: Stage[];
  startRate?: number;
}

/** Built-in defaults; a scenario's own defaults come next, then the flags. */
export const DEFAULTS: LoadSettings = { rate: 100, connections: 16, pipelining: 1, durationMs: 10_000, warmupMs: 2_000, timeoutMs: 10_000, model: 'open' };

/** Default of `--dead-after`: a target all of whose requests failed for this long has stopped, ms. */
export const DEFAULT_DEAD_AFTER_MS = 5_000;

const EXAMPLES = 'write e.g. 30s, 500ms, 2m or 1h';

/**
 * A duration flag. The unit is required: a bare "10" could be seconds or milliseconds, and
 * guessing wrong makes a run 1000 times too long or too short.
 */
export function durationFlag(name: string, value: string): number {
  const ms = parseDurationMs(value);
  if (ms === undefined) throw new UsageError(`--${name} "${value}" is not a duration: ${EXAMPLES}.`);
  if (!/[a-z]\s*$/i.test(value)) throw new UsageError(`--${name} "${value}" has no unit: ${EXAMPLES}.`);
  return ms;
}

function positiveDuration(name: string, value: string, why: string): number {
  // Zero first: "0" has no unit, but what is wrong with it is that it is zero.
  if (parseDurationMs(value) === 0) throw new UsageError(`--${name} must be longer than 0 (${why}), got "${value}": ${EXAMPLES}.`);
  return durationFlag(name, value);
}

function positiveFlag(name: string, value: number | undefined, integer: boolean): number | undefined {
  if (value === undefined) return undefined;
  if (!Number.isFinite(value) || value <= 0 || (integer && !Number.isInteger(value))) {
    throw new UsageError(`--${name} must be a positive ${integer ? 'integer' : 'number'}, got ${String(value)}.`);
  }
  return value;
}

/** `--dead-after`: ms, or undefined for "off" (the run never ends early for a dead target). */
export function deadAfterFlag(value: string): number | undefined {
  if (value.trim().toLowerCase() === 'off') return undefined;
  return positiveDuration('dead-after', value, 'or "off" to let a run fire at a target that stopped answering until its planned end');
}

/** The shape the flags give: --stage with --rate or --duration is refused (which one would win?). */
export function flagShape(args: LoadFlags): ShapeLayer {
  const layer: ShapeLayer = {};
  const stages = args.stage ?? [];
  if (stages.length > 0) {
    if (args.rate !== undefined || args.duration !== undefined) {
      throw new UsageError(
        `--stage sets both the rate and the duration (each stage ramps to its target over its duration): drop ${args.rate !== undefined ? '--rate' : '--duration'}, or the --stage flags.`,
      );
    }
    layer.stages = stages.map((text) => {
      const stage = parseStage(text, parseDurationMs);
      if (typeof stage === 'string') throw new UsageError(`--stage ${stage}`);
      return stage;
    });
    const problem = stagesProblem(args.startRate ?? 0, layer.stages);
    if (problem !== undefined) throw new UsageError(`--stage: ${problem}`);
  }
  if (args.startRate !== undefined) {
    if (!(Number.isFinite(args.startRate) && args.startRate >= 0))
      throw new UsageError(`--start-rate must be 0 or more requests per second, got ${String(args.startRate)}.`);
    layer.startRate = args.startRate;
  }
  const rate = positiveFlag('rate', args.rate, false);
  if (rate !== undefined) layer.rate = rate;
  if (args.duration !== undefined) layer.durationMs = positiveDuration('duration', args.duration, 'a run of no time measures nothing');
  // A bare 0 is unambiguous: no warm-up.
  if (args.warmup !== undefined) layer.warmupMs = args.warmup.trim() === '0' ? 0 : durationFlag('warmup', args.warmup);
  return layer;
}

/**
 * Merges the shape layers, lowest first: the highest layer with a rate or duration, or with
 * stages, decides whether the run is staged (docs/load-shapes.md#precedence).
 */
export function mergeShapes(layers: readonly ShapeLayer[]): Pick<LoadSettings, 'rate' | 'durationMs' | 'warmupMs' | 'stages' | 'startRate'> {
  let rate = DEFAULTS.rate;
  let durationMs = DEFAULTS.durationMs;
  let warmupMs = DEFAULTS.warmupMs;
  let stages: Stage[] | undefined;
  let startRate: number | undefined;
  for (const layer of layers) {
    if (layer.stages !== undefined) {
      stages = layer.stages;
      // Stages are a shape of their own: what a lower layer said of the warm-up and start was about another.
      warmupMs = 0;
      startRate = undefined;
    } else if (layer.rate !== undefined || layer.durationMs !== undefined) {
      stages = undefined;
    }
    if (layer.rate !== undefined) rate = layer.rate;
    if (layer.durationMs !== undefined) durationMs = layer.durationMs;
    if (layer.warmupMs !== undefined) warmupMs = layer.warmupMs;
    if (layer.startRate !== undefined) startRate = layer.startRate;
  }
  if (stages === undefined) return { rate, durationMs, warmupMs };
  const start = startRate ?? 0;
  // Warm-ups run at a constant rate: the one the stages start from, or their first target when they start from 0.
  const warmupRate = start > 0 ? start : (stages[0]?.target ?? 0);
  return { rate: warmupRate > 0 ? warmupRate : rate, durationMs: stagesDurationMs(stages), warmupMs, stages, startRate: start };
}

export function settingsFor(scenario: Scenario<unknown>, args: LoadFlags, config?: ShapeLayer): LoadSettings {
  const d = { ...DEFAULTS, ...scenario.defaults };
  const model = args.model ?? d.model;
  if (model === 'closed' && args.pipelining > 1) {
    throw new UsageError(
      '--pipelining > 1 works only with the open model: the closed model keeps one request in flight per connection. Drop --model closed, or --pipelining.',
    );
  }
  if (model === 'closed' && args.rate !== undefined) {
    throw new UsageError(
      `--rate sets the open model's arrival rate, but "${scenario.name}" runs the closed model, which sends as fast as --connections connections get answers. Drop --rate, or pass --model open.`,
    );
  }
  const flags = flagShape(args);
  const sd = scenario.defaults ?? {};
  const fromScenario: ShapeLayer = {
    ...(sd.rate === undefined ? {} : { rate: sd.rate }),
    ...(sd.durationMs === undefined ? {} : { durationMs: sd.durationMs }),
    ...(sd.warmupMs === undefined ? {} : { warmupMs: sd.warmupMs }),
    ...(sd.stages === undefined ? {} : { stages: sd.stages }),
    ...(sd.startRate === undefined ? {} : { startRate: sd.startRate }),
  };
  const shape = mergeShapes([fromScenario, config ?? {}, flags]);
  if (shape.stages === undefined && flags.startRate !== undefined) {
    throw new UsageError(
      '--start-rate is the rate the first stage ramps from: it needs stages (--stage, or stages in the configuration file or the scenario).',
    );
  }
  if (shape.stages !== undefined && model === 'closed') {
    throw new UsageError(
      `Stages ramp the open model's arrival rate, but "${scenario.name}" would run the closed model, which has no arrival rate (it sends as fast as --connections connections get answers). Pass --model open, or drop the stages.`,
    );
  }
  return {
    ...shape,
    connections: positiveFlag('connections', args.connections, true) ?? d.connections,
    pipelining: positiveFlag('pipelining', args.pipelining, true) ?? d.pipelining,
    timeoutMs: positiveDuration('timeout', args.timeout, 'a request cannot be given no time; there is no "no timeout": give a long one, e.g. 10m'),
    model,
  };
}

/** The limits above which the generator is judged not to have kept its schedule. */
export function generatorLimitsOf(args: { maxLateShare?: number | undefined; maxLoopDelay?: string | undefined }): GeneratorLimits {
  const share = args.maxLateShare;
  if (share !== undefined && !(Number.isFinite(share) && share >= 0 && share <= 1)) {
    throw new UsageError(`--max-late-share must be a share between 0 and 1 (e.g. 0.01 for 1 %), got ${String(share)}.`);
  }
  let loopDelayP99Ms = DEFAULT_GENERATOR_LIMITS.loopDelayP99Ms;
  if (args.maxLoopDelay === 'off') loopDelayP99Ms = Number.POSITIVE_INFINITY;
  else if (args.maxLoopDelay !== undefined) {
    const ms = parseDurationMs(args.maxLoopDelay);
    if (ms === undefined) throw new UsageError(`--max-loop-delay "${args.maxLoopDelay}" is not a duration: write e.g. 50ms or 1s, or off to never judge it.`);
    loopDelayP99Ms = ms;
  }
  return { lateShare: share ?? DEFAULT_GENERATOR_LIMITS.lateShare, loopDelayP99Ms };
}
