/**
 * Threshold expressions, checked against a finished report:
 *
 *   p99(keys.verifyKey) < 20ms     latency percentile of one operation (p50 p90 p95 p99 p999 max mean)
 *   p99 < 50ms                     … of all operations together (corrected latency)
 *   errors == 0                    transport errors and 5xx
 *   rate(VALID) > 0.9              share of verifications answered VALID (any verification code),
 *   rate(200) >= 0.99              share of answers with that HTTP status,
 *   rate(allowed) > 0.5            share of rate-limit checks admitted (or denied)
 *   requests > 1000, rps >= 100, late == 0, dropped == 0, checks == 0 (failed checks)
 *   p95(lag.credits) < 60s         a measure's p50 p95 max or count (thresholds-measures.ts)
 *
 * Operators: < <= > >= == !=. Latency units: us, ms (default), s.
 *
 * Everything is checked when parsed (before any load is sent): an operation, a verification code,
 * an HTTP status or a percentile that does not exist is refused with the valid choices, instead of
 * a whole run ending with "no requests of keys.verify were measured".
 *
 * When the load generator could not keep its schedule (`report.generator.limited`), the figures
 * that depend on its pace — latency and rps — measure the generator as well as the service; its
 * lag only ever adds to corrected latency and takes from rps, so (pace-verdict.ts) a threshold the
 * lag could only have made worse that passes is passed, one that fails over the sends made on time
 * too (the generator's own delay allowed for) is failed, and only the rest is inconclusive. Counts
 * of errors, outcomes, requests, late and dropped sends, and checks are judged as measured.
 */
import { VERIFICATION_CODES } from '../../engine/index.js';
import type { OperationStats, Percentiles, RunReport, ThresholdResult } from '../../report/model.js';
import { paceVerdict } from './pace-verdict.js';
import { type Comparator, LATENCY, type Threshold, compare, shown } from './threshold-compare.js';
import { MEASURE_FAMILIES, OPERATIONS } from '../scenario/index.js';
import { judgeMeasureThreshold, namesMeasure, parseMeasureThreshold } from './thresholds-measures.js';

const COUNTS = new Set(['errors', 'requests', 'rps', 'late', 'dropped', 'checks']);
const OPERATION_NAMES: ReadonlySet<string> = new Set(OPERATIONS);
const RATE_WORDS = ['allowed', 'denied'];
const PATTERN = /^\s*([a-z0-9]+)\s*(?:\(\s*([^()\s]+)\s*\))?\s*(<=|>=|==|!=|<|>)\s*(-?\d+(?:\.\d+)?)\s*(us|µs|ms|s)?\s*$/i;

export type { Threshold } from './threshold-compare.js';

export type ParsedThreshold = { ok: true; threshold: Threshold } | { ok: false; error: string };

export function parseThreshold(expression: string): ParsedThreshold {
  const match = PATTERN.exec(expression);
  const usage = 'Write e.g. "p99(keys.verifyKey) < 20ms", "errors == 0" or "rate(VALID) > 0.9".';
  if (match === null) return { ok: false, error: `The threshold "${expression}" is not understood. ${usage}` };
  const metric = (match[1] ?? '').toLowerCase();
  const argument = match[2];
  const comparator = match[3] as Comparator;
  let value = Number(match[4]);
  const unit = match[5]?.toLowerCase();
  if (namesMeasure(metric, argument)) return parseMeasureThreshold(expression, metric, argument, comparator, value, unit);
  if (/^p\d+$/.test(metric) && !LATENCY.has(metric)) {
    return { ok: false, error: `Unknown percentile "${metric}" in "${expression}": use ${[...LATENCY].join(', ')}.` };
  }
  if (LATENCY.has(metric)) {
    value = unit === 's' ? value * 1000 : unit === 'us' || unit === 'µs' ? value / 1000 : value;
  } else if (unit !== undefined) {
    return { ok: false, error: `The threshold "${expression}" gives a unit to "${metric}", which is not a latency (${[...LATENCY].join(', ')}).` };
  } else if (metric === 'rate') {
    if (argument === undefined) return { ok: false, error: `rate() needs an outcome, e.g. rate(VALID) or rate(200). ${usage}` };
    const known =
      /^[1-5]\d{2}$/.test(argument) ||
      RATE_WORDS.includes(argument.toLowerCase()) ||
      (VERIFICATION_CODES as readonly string[]).includes(argument.toUpperCase());
    if (!known) {
      return {
        ok: false,
        error: `Unknown outcome "${argument}" in "${expression}": rate() takes a verification code (${VERIFICATION_CODES.join(', ')}), an HTTP status (100–599) or ${RATE_WORDS.join('/')}.`,
      };
    }
  } else if (!COUNTS.has(metric)) {
    return {
      ok: false,
      error: `Unknown metric "${metric}" in "${expression}": use ${[...LATENCY].join(' ')}, rate(…), ${[...COUNTS].join(' ')}, or p50/p95/max/count(<measure>).`,
    };
  } else if (argument !== undefined && metric !== 'errors' && metric !== 'requests' && metric !== 'rps') {
    return { ok: false, error: `"${metric}" takes no argument in "${expression}".` };
  }
  if (argument !== undefined && metric !== 'rate' && !OPERATION_NAMES.has(argument)) {
    return {
      ok: false,
      error: `Unknown operation "${argument}" in "${expression}": the operations are ${OPERATIONS.join(', ')}; a measure is named by p50, p95, max or count of a name of the families ${MEASURE_FAMILIES.map((f) => `${f}.…`).join(', ')} (e.g. p95(lag.credits)).`,
    };
  }
  return { ok: true, threshold: { expression: expression.trim(), metric, argument, comparator, value } };
}

/** The figures a threshold reads: its operation's, or all operations' together. */
export function statsOf(t: Threshold, report: Omit<RunReport, 'thresholds'>): OperationStats | undefined {
  return t.argument === undefined || t.metric === 'rate' ? report.overall : report.operations.find((o) => o.operation === t.argument);
}

/** The measured value a threshold compares, or a reason why there is none. */
function measure(t: Threshold, report: Omit<RunReport, 'thresholds'>): number | string {
  const stats = statsOf(t, report);
  if (stats === undefined) return `no requests of ${t.argument ?? '?'} were measured`;
  if (LATENCY.has(t.metric)) {
    if (stats.latency.corrected.count === 0) return 'no latency was measured';
    const value = stats.latency.corrected[t.metric as keyof Percentiles];
    // A report written before keysim kept p95 (e.g. merged from old segments): said, not guessed.
    return value === undefined ? `this report has no ${t.metric} (written by an older keysim)` : value;
  }
  switch (t.metric) {
    case 'errors':
      return t.argument === undefined
        ? report.totals.errors
        : Object.values(stats.transportErrors).reduce((a, b) => a + b, 0) +
            Object.entries(stats.statuses)
              .filter(([s]) => Number(s) >= 500)
              .reduce((a, [, n]) => a + n, 0);
    case 'requests':
      return stats.requests;
    case 'rps':
      return stats.ratePerSec;
    case 'late':
      return report.totals.late;
    case 'dropped':
      return report.totals.dropped;
    case 'checks':
      // Failed checks; all failed per-response checks together count as one ("per-response checks").
      return report.checks.filter((c) => !c.passed).length;
    case 'rate': {
      const arg = t.argument ?? '';
      const all = report.operations;
      if (/^\d{3}$/.test(arg)) {
        const total = report.overall.requests;
        return total === 0 ? 'no requests were measured' : (report.overall.statuses[arg] ?? 0) / total;
      }
      if (arg.toLowerCase() === 'allowed' || arg.toLowerCase() === 'denied') {
        const { allowed, denied } = report.overall.ratelimit;
        return allowed + denied === 0 ? 'no rate-limit checks were measured' : (arg.toLowerCase() === 'allowed' ? allowed : denied) / (allowed + denied);
      }
      const codes = all.reduce((sum, o) => sum + Object.values(o.codes).reduce((a, b) => a + b, 0), 0);
      if (codes === 0) return 'no verifications were measured';
      return all.reduce((sum, o) => sum + (o.codes[arg.toUpperCase()] ?? 0), 0) / codes;
    }
    default:
      return `unknown metric ${t.metric}`;
  }
}

/** Whether a threshold's metric depends on the generator keeping its pace (judged by pace-verdict.ts when it did not). */
export function isPaceMetric(metric: string): boolean {
  return LATENCY.has(metric) || metric === 'rps';
}

export function evaluateThresholds(thresholds: readonly Threshold[], report: Omit<RunReport, 'thresholds'>): ThresholdResult[] {
  const generatorLimited = report.generator?.limited === true;
  return thresholds.map((t) => {
    if (t.measure === true) return judgeMeasureThreshold(t, report);
    const actual = measure(t, report);
    if (typeof actual === 'string') return { expression: t.expression, passed: false, actual: null, detail: actual };
    const passed = compare(actual, t.comparator, t.value);
    if (generatorLimited && isPaceMetric(t.metric)) return paceVerdict(t, actual, passed, statsOf(t, report), report.generator, report.totals.dropped);
    return { expression: t.expression, passed, actual, detail: `measured ${shown(t, actual)}` };
  });
}
