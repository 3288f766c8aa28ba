/**
 * `keysim run`'s load flags turned into one scenario's LoadSettings, every one checked before
 * anything is sent: a usage error names what was wrong and what to write instead.
 */
import { parseDurationMs } from '../load/plan.js';
import { DEFAULT_GENERATOR_LIMITS, type GeneratorLimits } from '../load/generator-monitor.js';
import type { LoadSettings, Scenario } from '../load/scenario.js';
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

export function settingsFor(scenario: Scenario<unknown>, args: LoadFlags): LoadSettings {
  const d = { ...DEFAULTS, ...scenario.defaults };
  const model = args.model ?? d.model;
  if (model === 'closed' && args.pipelining > 1) {
    throw new UsageError(
      '--pipelining > 1 works only with the open model: autocannon (the closed model) cannot tell which pipelined answer belongs to which request. Drop --model closed, or --pipelining.',
    );
  }
  if (model === 'closed' && args.rate !== undefined) {
    throw new UsageError(
      `--rate sets the open model's arrival rate, but "${scenario.name}" runs the closed model, which sends as fast as --connections connections get answers. Drop --rate, or pass --model open.`,
    );
  }
  return {
    rate: positiveFlag('rate', args.rate, false) ?? d.rate,
    connections: positiveFlag('connections', args.connections, true) ?? d.connections,
    pipelining: positiveFlag('pipelining', args.pipelining, true) ?? d.pipelining,
    durationMs: args.duration === undefined ? d.durationMs : positiveDuration('duration', args.duration, 'a run of no time measures nothing'),
    // A bare 0 is unambiguous: no warm-up.
    warmupMs: args.warmup === undefined ? d.warmupMs : args.warmup.trim() === '0' ? 0 : durationFlag('warmup', args.warmup),
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
