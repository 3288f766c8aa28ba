/**
 * Thresholds that name a measure instead of an operation (docs/consistency.md#measures):
 *
 *   p95(lag.credits) < 60s                   p50 p95 max of a measure's samples
 *   max(ratelimit.over-admission.60s) <= 0.1
 *   count(lag.disable) >= 3                  samples measured (unknown ones not counted)
 *
 * A name that is an operation (`ratelimit.limit`) stays an operation; any other dotted name of the
 * families lag., ratelimit., credits. is a measure. The scenario defines its measures, so a name
 * cannot be checked against a list when parsed: a measure the run never reported fails when judged,
 * as a threshold whose figures are absent always has — never a pass on no evidence. A latency unit
 * (us, ms, s) applies to a measure in ms; on a share or a credits measure it is refused when judged.
 * Measures are judged as measured: the generator's pace verdict (pace-verdict.ts) is about latency
 * of the load, which a measure is not.
 */
import type { Measure, RunReport, ThresholdResult } from '../../report/model.js';
import { MEASURE_FAMILIES, OPERATIONS, measureNameProblem } from '../scenario/index.js';
import { type Comparator, type Threshold, compare } from './threshold-compare.js';

/** The figures of a measure a threshold reads. */
export const MEASURE_METRICS: readonly string[] = ['p50', 'p95', 'max', 'count'];

const OPERATION_NAMES: ReadonlySet<string> = new Set(OPERATIONS);

/**
 * Whether a threshold reads a measure: p50, p95 or max of a dotted name of a measure's family that
 * is no operation, and `count(…)` always. Anything else is read as an operation, and refused as one
 * (`p99(keys.verify)`, `requests(ratelimit.limits)`: an operation misspelt) with the measures' forms named.
 */
export function namesMeasure(metric: string, argument: string | undefined): boolean {
  if (metric === 'count') return true;
  if (!MEASURE_METRICS.includes(metric) || argument === undefined || OPERATION_NAMES.has(argument)) return false;
  const dot = argument.indexOf('.');
  return dot > 0 && MEASURE_FAMILIES.includes(argument.slice(0, dot).toLowerCase());
}

export type ParsedMeasureThreshold = { ok: true; threshold: Threshold } | { ok: false; error: string };

/** A threshold on a measure, parsed; `value` as written, `unit` as written (lower case). */
export function parseMeasureThreshold(
  expression: string,
  metric: string,
  argument: string | undefined,
  comparator: Comparator,
  value: number,
  unit: string | undefined,
): ParsedMeasureThreshold {
  const families = MEASURE_FAMILIES.map((f) => `${f}.…`).join(', ');
  if (argument === undefined)
    return { ok: false, error: `"${metric}" needs a measure in "${expression}", e.g. count(lag.credits) >= 3 (measures are of the families ${families}).` };
  if (!MEASURE_METRICS.includes(metric))
    return {
      ok: false,
      error: `"${metric}(${argument})" in "${expression}": a measure has ${MEASURE_METRICS.join(', ')} (e.g. p95(${argument}) < 60s); latency percentiles such as p99 are for operations.`,
    };
  const problem = measureNameProblem(argument);
  if (problem !== undefined)
    return {
      ok: false,
      error: `In "${expression}": ${problem}. A threshold names either an operation (${OPERATIONS.join(', ')}) or a measure of the families ${families}.`,
    };
  if (metric === 'count' && unit !== undefined)
    return { ok: false, error: `The threshold "${expression}" gives a unit to count(…), a number of samples: write it without one.` };
  const ms = unit === 's' ? value * 1000 : unit === 'us' || unit === 'µs' ? value / 1000 : value;
  const threshold: Threshold = { expression: expression.trim(), metric, argument, comparator, value: ms, measure: true };
  if (unit !== undefined) threshold.unit = unit;
  return { ok: true, threshold };
}

/** A measure's figure as a threshold's detail shows it. */
function shownMeasure(m: Measure, metric: string, value: number): string {
  if (metric === 'count') return `${value} sample${value === 1 ? '' : 's'}`;
  if (m.unit === 'ms') return `${Math.round(value * 1000) / 1000} ms`;
  return m.unit === 'credits' ? `${value} credits` : String(Math.round(value * 10_000) / 10_000);
}

/** The figure a threshold on a measure compares, or why there is none. */
function figureOf(t: Threshold, m: Measure): number | string {
  if (t.unit !== undefined && m.unit !== 'ms')
    return `${m.name} is measured in ${m.unit === 'share' ? 'shares of the limit (0.07 is 7 %)' : 'credits'}, not in time: write the threshold without the unit "${t.unit}"`;
  if (t.metric === 'count') return m.count;
  const unknown = m.unknown === undefined ? '' : ` (${m.unknown} could not be measured: answers that never came)`;
  if (m.count === 0) return `no sample of ${m.name} was measured${unknown}: nothing to judge`;
  const value = m[t.metric as 'p50' | 'p95' | 'max'];
  if (value === undefined)
    return `this report keeps no ${t.metric} of ${m.name}: it was merged from several segments' summaries, whose percentiles cannot be combined (max and count are kept)`;
  return value;
}

/** Judges a threshold on a measure against the report's measures (absent measure or figure: failed, saying why). */
export function judgeMeasureThreshold(t: Threshold, report: Pick<RunReport, 'measures'>): ThresholdResult {
  const name = t.argument ?? '';
  const m = report.measures?.find((x) => x.name === name);
  if (m === undefined) {
    const known = (report.measures ?? []).map((x) => x.name);
    const what = known.length === 0 ? 'this run measured none' : `it measured ${known.join(', ')}`;
    return { expression: t.expression, passed: false, actual: null, detail: `no measure ${name} in this run (${what}): nothing to judge` };
  }
  const figure = figureOf(t, m);
  if (typeof figure === 'string') return { expression: t.expression, passed: false, actual: null, detail: figure };
  const passed = compare(figure, t.comparator, t.value);
  const over = t.metric === 'count' ? '' : ` over ${m.count} sample${m.count === 1 ? '' : 's'}`;
  const unknown = m.unknown === undefined ? '' : `, ${m.unknown} unknown`;
  return { expression: t.expression, passed, actual: figure, detail: `measured ${shownMeasure(m, t.metric, figure)}${over}${unknown}` };
}
