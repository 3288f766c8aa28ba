/**
 * Thresholds naming measures: `p50|p95|max|count(<measure>) OP value [unit]`, parsed (a measure's
 * name is of the families lag., ratelimit., credits.; an operation's name stays an operation) and
 * judged against the report's measures — passed, failed, and failed on no evidence (a measure the
 * run never reported, one with no sample, a percentile a merge could not keep), never passed.
 */
import { describe, expect, test } from 'vitest';
import { evaluateThresholds, parseThreshold, type Threshold } from '../../src/load/run/thresholds.js';
import type { Measure, RunReport } from '../../src/report/model.js';
import { minimalReport } from '../helpers/report-fixture.js';

function parsed(expression: string): Threshold {
  const p = parseThreshold(expression);
  if (!p.ok) throw new Error(p.error);
  return p.threshold;
}

const CREDITS: Measure = { name: 'lag.credits', title: 'credits', unit: 'ms', count: 3, p50: 0, p95: 11_000, max: 11_000, promise: 60_000, source: 'scenario' };
const OVER: Measure = {
  name: 'ratelimit.over-admission.60s',
  title: 'over',
  unit: 'share',
  count: 4,
  p50: 0.02,
  p95: 0.08,
  max: 0.08,
  promise: 0.1,
  source: 'history',
};

function judged(expression: string, measures: Measure[] | undefined, extra: Partial<RunReport> = {}) {
  const report = { ...minimalReport({ operations: [{ operation: 'keys.verifyKey', latenciesMs: [5] }] }), ...extra };
  if (measures !== undefined) report.measures = measures;
  const [result] = evaluateThresholds([parsed(expression)], report);
  if (result === undefined) throw new Error('no result');
  return result;
}

describe('parsing', () => {
  test('p95(lag.credits) < 60s reads a measure, its value in ms', () => {
    expect(parsed('p95(lag.credits) < 60s')).toEqual({
      expression: 'p95(lag.credits) < 60s',
      metric: 'p95',
      argument: 'lag.credits',
      comparator: '<',
      value: 60_000,
      measure: true,
      unit: 's',
    });
  });

  test('max(ratelimit.over-admission.60s) <= 0.1 and count(lag.disable) >= 3 read measures, without unit', () => {
    expect(parsed('max(ratelimit.over-admission.60s) <= 0.1')).toMatchObject({ measure: true, value: 0.1, argument: 'ratelimit.over-admission.60s' });
    expect(parsed('count(lag.disable) >= 3')).toMatchObject({ measure: true, metric: 'count', value: 3 });
    expect(parsed('p95(ratelimit.over-admission.60s) <= 0.1').unit).toBeUndefined();
  });

  test('an operation of the same families stays an operation', () => {
    expect(parsed('p99(ratelimit.limit) < 20ms').measure).toBeUndefined();
    expect(parsed('max(ratelimit.limit) < 20ms').measure).toBeUndefined();
    expect(parsed('p95(keys.verifyKey) < 20ms').measure).toBeUndefined();
  });

  test.each([
    ['p99(lag.credits) < 60s', /Unknown operation "lag\.credits".*p50, p95, max or count/],
    ['p95(Lag.Credits) < 60s', /not a measure's name.*families lag\.…, ratelimit\.…, credits\.…/],
    ['p95(latency.credits) < 60s', /Unknown operation "latency\.credits".*families lag\.…/],
    ['count(keys.verifyKey) > 1', /is an operation, not a measure/],
    ['count(lag.credits) > 1s', /gives a unit to count/],
    ['count > 1', /needs a measure/],
    ['requests(ratelimit.limits) > 0', /Unknown operation "ratelimit\.limits"/],
  ])('%j is refused with a message naming the forms', (expression, message) => {
    const p = parseThreshold(expression);
    expect(p.ok).toBe(false);
    if (!p.ok) expect(p.error).toMatch(message);
  });
});

describe('judging', () => {
  test('p95(lag.credits) < 60s passes on a p95 of 11 s, and says over how many samples', () => {
    const r = judged('p95(lag.credits) < 60s', [CREDITS]);
    expect(r).toEqual({ expression: 'p95(lag.credits) < 60s', passed: true, actual: 11_000, detail: 'measured 11000 ms over 3 samples' });
  });

  test('max(lag.credits) < 1ms fails on a max of 11 s', () => {
    expect(judged('max(lag.credits) < 1ms', [CREDITS])).toMatchObject({ passed: false, actual: 11_000 });
  });

  test('a share measure is compared as a share: max 0.08 <= 0.1 passes, p50 > 0.05 fails', () => {
    expect(judged('max(ratelimit.over-admission.60s) <= 0.1', [OVER])).toMatchObject({ passed: true, actual: 0.08 });
    expect(judged('p50(ratelimit.over-admission.60s) > 0.05', [OVER])).toMatchObject({ passed: false, actual: 0.02 });
  });

  test('count(<measure>) counts the samples, unknown ones not among them', () => {
    expect(judged('count(lag.credits) >= 3', [{ ...CREDITS, unknown: 2 }])).toMatchObject({ passed: true, actual: 3 });
    expect(judged('count(lag.credits) >= 4', [{ ...CREDITS, unknown: 2 }])).toMatchObject({ passed: false, actual: 3 });
  });

  test('a measure the run never reported fails, naming what was measured: never a pass on no evidence', () => {
    const r = judged('p95(lag.override) < 60s', [CREDITS]);
    expect(r).toMatchObject({ passed: false, actual: null });
    expect(r.detail).toBe('no measure lag.override in this run (it measured lag.credits): nothing to judge');
    expect(judged('max(lag.credits) < 60s', undefined).detail).toContain('this run measured none');
  });

  test('a measure with no sample (every answer lost) fails a percentile threshold, saying how many were unknown', () => {
    const r = judged('max(lag.disable) < 60s', [{ name: 'lag.disable', title: 'd', unit: 'ms', count: 0, unknown: 3, source: 'scenario' }]);
    expect(r).toMatchObject({ passed: false, actual: null });
    expect(r.detail).toMatch(/no sample of lag\.disable was measured \(3 could not be measured/);
  });

  test('a percentile a merge could not keep fails, saying why', () => {
    const { p50: _p50, p95: _p95, ...merged } = CREDITS;
    const r = judged('p95(lag.credits) < 60s', [merged]);
    expect(r).toMatchObject({ passed: false, actual: null });
    expect(r.detail).toMatch(/keeps no p95 of lag\.credits/);
    expect(judged('max(lag.credits) < 60s', [merged]).passed).toBe(true);
  });

  test('a latency unit on a share measure is refused when judged', () => {
    const r = judged('max(ratelimit.over-admission.60s) < 10ms', [OVER]);
    expect(r).toMatchObject({ passed: false, actual: null });
    expect(r.detail).toMatch(/measured in shares of the limit.*without the unit "ms"/);
  });

  test('a lagging generator does not make a measure threshold inconclusive: measures are judged as measured', () => {
    const report = minimalReport({ operations: [{ operation: 'keys.verifyKey', latenciesMs: [5] }], totals: { dropped: 5 } });
    const generator: NonNullable<RunReport['generator']> = {
      limited: true,
      reasons: ['late'],
      limits: { lateShare: 0.01, loopDelayP99Ms: 50 },
      phases: [],
      loadAverage: 0,
    };
    const r = judged('p95(lag.credits) < 60s', [CREDITS], { generator, totals: report.totals });
    // The same expression on an operation's latency would be inconclusive with drops (pace-verdict.ts).
    expect(judged('p95(keys.verifyKey) < 60s', [CREDITS], { generator, totals: report.totals }).inconclusive).toBe(true);
    expect(r.inconclusive).toBeUndefined();
    expect(r.passed).toBe(true);
  });
});
