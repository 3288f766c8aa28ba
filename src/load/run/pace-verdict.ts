/**
 * The verdict of a latency or throughput threshold when the load generator could not keep its
 * schedule (`generator.limited`). Its lag only ever adds to corrected latency (a late send's wait
 * is counted from its intended time) and takes from rps (sends leave later, the phase lasts
 * longer). So:
 *
 * - a threshold the lag can only have made worse (`p99 < 50ms`, `rps > 100`) that passes is
 *   passed, and one the lag can only have made better (`p50 > 1ms`) that fails is failed;
 * - otherwise the latency is judged again over the sends the generator started on time
 *   (`OperationStats.onTime`), less the generator's own delay in reading answers (its event-loop
 *   delay: p99, or max for a `max` threshold, of its worst phase). When that generator-free figure
 *   gives the same verdict, the verdict stands: the service's doing, not the generator's;
 * - when it does not (or there is no such figure: rps, a report without on-time latency, or too
 *   few sends on time to read the percentile from), the threshold is inconclusive.
 *
 * Dropped sends (planned, never made: the queue bound was reached) come first: a run that dropped
 * some did not offer the load the threshold asks about. Drops can only lower both figures — a
 * dropped send has no latency, and it would have been among the slowest (it was due while the
 * queue was full), and it is a request less per second. So with `dropped > 0` a threshold a lower
 * figure helps (`p99 < 50ms`, `rps < 500`, `==`, `!=`) that passes is inconclusive, never passed;
 * one a lower figure hurts (`rps > 100`, `p50 > 1ms`) that passes does so although it dropped sends,
 * and is judged by the rules above.
 *
 * The `detail` says which evidence decided, e.g. "measured 67 ms; over the 3,557 sends on time
 * 66 ms with 4 ms of generator delay allowed: failed".
 */
import { formatCount } from '../../report/format.js';
import type { GeneratorSection, OperationStats, Percentiles, ThresholdResult } from '../../report/model.js';
import { LATENCY, type Threshold, compare, shown } from './threshold-compare.js';

/** How the generator's lag can only have moved the threshold's verdict, if one way only. */
function lagEffect(t: Threshold): 'worse' | 'better' | 'either' {
  const upper = t.comparator === '<' || t.comparator === '<=';
  const lower = t.comparator === '>' || t.comparator === '>=';
  // Lag raises latency and lowers rps.
  const raises = LATENCY.has(t.metric);
  if ((raises && upper) || (!raises && lower)) return 'worse';
  if ((raises && lower) || (!raises && upper)) return 'better';
  return 'either';
}

/** The generator's own delay in reading an answer, ms: its worst phase's event-loop delay (max for a max threshold). */
export function generatorDelayMs(t: Threshold, generator: GeneratorSection | undefined): number {
  const phases = generator?.phases ?? [];
  return phases.reduce((worst, p) => Math.max(worst, t.metric === 'max' ? p.loopDelayMs.max : p.loopDelayMs.p99), 0);
}

/** The fewest samples a latency metric is read from: p50 2, p90 10, p95 20, p99 100, p999 1,000; max and mean 1. */
export function samplesNeeded(metric: string): number {
  const match = /^p(\d+)$/.exec(metric);
  if (match === null) return 1;
  const digits = match[1] as string;
  // p999 is the 99.9th percentile: the digits after the first two are decimals.
  const percentile = Number(`${digits.slice(0, 2)}.${digits.slice(2)}`);
  return Math.ceil(1 / (1 - percentile / 100) - 1e-9);
}

/** The latency over the sends made on time, less the generator's delay, with how it reads; or why there is none. */
function onTimeEvidence(t: Threshold, stats: OperationStats | undefined, generator: GeneratorSection | undefined): { value: number; text: string } | string {
  if (!LATENCY.has(t.metric)) return "no figure of the throughput is free of the generator's lag";
  const onTime = stats?.onTime;
  if (onTime === undefined) return 'this report has no latency of the sends made on time (written by an older keysim)';
  if (onTime.latency.count === 0) return 'no send was made on time';
  // A percentile read from fewer samples than it takes to have one above it is the max of a
  // handful: too thin to overrule the generator's lag (a generator that blocked keeps one on time).
  const needed = samplesNeeded(t.metric);
  if (onTime.latency.count < needed)
    return `only ${formatCount(onTime.latency.count)} of the sends were made on time, too few to read a ${t.metric} from (${formatCount(needed)} needed)`;
  const value = onTime.latency[t.metric as keyof Percentiles];
  if (value === undefined) return `this report has no ${t.metric} of the sends made on time`;
  const delayMs = generatorDelayMs(t, generator);
  const adjusted = Math.max(0, value - delayMs);
  return {
    value: adjusted,
    text: `over the ${formatCount(onTime.latency.count)} sends on time ${shown(t, value)} with ${shown(t, delayMs)} of generator delay allowed`,
  };
}

/** Whether drops, which only lower latency and rps, can have helped this threshold pass. */
function dropsCanFlatter(t: Threshold): boolean {
  return t.comparator !== '>' && t.comparator !== '>=';
}

/** `dropped`: the run's planned sends never made (`totals.dropped`). */
export function paceVerdict(
  t: Threshold,
  actual: number,
  passed: boolean,
  stats: OperationStats | undefined,
  generator: GeneratorSection | undefined,
  dropped = 0,
): ThresholdResult {
  const measured = `measured ${shown(t, actual)}`;
  const result = (verdict: 'passed' | 'failed' | 'inconclusive', detail: string): ThresholdResult =>
    verdict === 'inconclusive'
      ? { expression: t.expression, passed: false, inconclusive: true, actual, detail }
      : { expression: t.expression, passed: verdict === 'passed', actual, detail };
  if (passed && dropped > 0 && dropsCanFlatter(t)) {
    return result(
      'inconclusive',
      `${measured}, inconclusive: the load generator could not keep its schedule and dropped ${formatCount(dropped)} planned sends, which can only have lowered this figure: the load the threshold asks about was not offered`,
    );
  }
  const effect = lagEffect(t);
  if (effect === 'worse' && passed)
    return result('passed', `${measured}: passed, although the load generator lagged (its lag can only have made this figure worse)`);
  if (effect === 'better' && !passed)
    return result('failed', `${measured}: failed, although the load generator lagged (its lag can only have made this figure better)`);
  const evidence = onTimeEvidence(t, stats, generator);
  if (typeof evidence === 'string') return result('inconclusive', `${measured}, inconclusive: the load generator could not keep its schedule, and ${evidence}`);
  const agrees = compare(evidence.value, t.comparator, t.value) === passed;
  if (agrees) return result(passed ? 'passed' : 'failed', `${measured}; ${evidence.text}: ${passed ? 'passed' : 'failed'}`);
  return result(
    'inconclusive',
    `${measured}; ${evidence.text}: ${passed ? 'failed' : 'passed'}, so inconclusive: the load generator's lag may explain the difference`,
  );
}
