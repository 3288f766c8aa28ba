/**
 * Threshold expressions: the documented forms parse (units normalised to ms), bad ones are
 * refused with a message, and evaluation against a hand-built report compares the right figure
 * — or fails, saying why, when the report has no data for it.
 */
import { describe, expect, test } from 'vitest';
import { type Threshold, evaluateThresholds, parseThreshold } from '../../src/load/run/thresholds.js';
import type { RunReport, ThresholdResult } from '../../src/report/model.js';
import { minimalReport } from '../helpers/report-fixture.js';

function parsed(expression: string): Threshold {
  const result = parseThreshold(expression);
  if (!result.ok) throw new Error(`"${expression}" should parse: ${result.error}`);
  return result.threshold;
}

function evaluate(report: RunReport, expression: string): ThresholdResult {
  const [result] = evaluateThresholds([parsed(expression)], report);
  if (result === undefined) throw new Error('no result');
  return result;
}

describe('parseThreshold', () => {
  test.each<[string, Omit<Threshold, 'expression'>]>([
    ['p99(keys.verifyKey) < 20ms', { metric: 'p99', argument: 'keys.verifyKey', comparator: '<', value: 20 }],
    ['p99 < 50ms', { metric: 'p99', argument: undefined, comparator: '<', value: 50 }],
    ['p50 <= 7', { metric: 'p50', argument: undefined, comparator: '<=', value: 7 }],
    ['p90 < 1500us', { metric: 'p90', argument: undefined, comparator: '<', value: 1.5 }],
    ['p999 < 250µs', { metric: 'p999', argument: undefined, comparator: '<', value: 0.25 }],
    ['max < 2s', { metric: 'max', argument: undefined, comparator: '<', value: 2000 }],
    ['mean(ratelimit.limit) >= 0.5 s', { metric: 'mean', argument: 'ratelimit.limit', comparator: '>=', value: 500 }],
    ['P99 < 20MS', { metric: 'p99', argument: undefined, comparator: '<', value: 20 }],
    ['errors == 0', { metric: 'errors', argument: undefined, comparator: '==', value: 0 }],
    ['errors(keys.verifyKey) != 3', { metric: 'errors', argument: 'keys.verifyKey', comparator: '!=', value: 3 }],
    ['rate(VALID) > 0.9', { metric: 'rate', argument: 'VALID', comparator: '>', value: 0.9 }],
    ['rate(200) >= 0.99', { metric: 'rate', argument: '200', comparator: '>=', value: 0.99 }],
    ['rate(allowed) > 0.5', { metric: 'rate', argument: 'allowed', comparator: '>', value: 0.5 }],
    ['requests > 1000', { metric: 'requests', argument: undefined, comparator: '>', value: 1000 }],
    ['requests(keys.getKey) >= 1', { metric: 'requests', argument: 'keys.getKey', comparator: '>=', value: 1 }],
    ['rps >= 100', { metric: 'rps', argument: undefined, comparator: '>=', value: 100 }],
    ['late == 0', { metric: 'late', argument: undefined, comparator: '==', value: 0 }],
    ['dropped == 0', { metric: 'dropped', argument: undefined, comparator: '==', value: 0 }],
    ['checks == 0', { metric: 'checks', argument: undefined, comparator: '==', value: 0 }],
    ['  p99 ( keys.verifyKey )   <   20 ms  ', { metric: 'p99', argument: 'keys.verifyKey', comparator: '<', value: 20 }],
  ])('%j parses', (expression, expected) => {
    expect(parsed(expression)).toEqual({ expression: expression.trim(), ...expected });
  });

  test.each<[string, RegExp]>([
    ['bogus', /not understood/],
    ['', /not understood/],
    ['p99 <', /not understood/],
    ['p99 < fast', /not understood/],
    ['p99 = 20ms', /not understood/],
    ['p99 < 20 parsecs', /not understood/],
    ['p99 < 20ms and errors == 0', /not understood/],
    ['p99(a)(b) < 20ms', /not understood/],
    ['throughput > 5', /Unknown metric "throughput"/],
    ['rate > 0.5', /rate\(\) needs an outcome/],
    ['requests > 5ms', /unit/],
    ['rate(VALID) > 0.5s', /unit/],
    ['late(keys.verifyKey) == 0', /takes no argument/],
    ['dropped(x) == 0', /takes no argument/],
    ['checks(x) == 0', /takes no argument/],
  ])('%j is refused with a message', (expression, message) => {
    const result = parseThreshold(expression);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error).toMatch(message);
    expect(result.error.length).toBeGreaterThan(20);
  });
});

describe('thresholds naming something that does not exist are refused before any load, with the valid choices', () => {
  test.each([
    ['p99(keys.verify) < 20ms', /Unknown operation "keys\.verify".*keys\.verifyKey/],
    ['errors(keys.verify) == 0', /Unknown operation "keys\.verify"/],
    ['requests(ratelimit.limits) > 0', /Unknown operation "ratelimit\.limits".*ratelimit\.limit/],
    ['rate(VALIDATED) > 0.9', /Unknown outcome "VALIDATED".*USAGE_EXCEEDED.*HTTP status/],
    ['rate(700) > 0.9', /Unknown outcome "700"/],
    ['rate(admitted) > 0.9', /allowed\/denied/],
    ['p98 < 20ms', /Unknown percentile "p98".*p50, p90, p95, p99, p999/],
    ['p97(keys.verifyKey) < 20ms', /Unknown percentile "p97"/],
  ])('%j', (expression, message) => {
    const result = parseThreshold(expression);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error).toMatch(message);
  });

  test('lower-case verification codes and every real operation still parse', () => {
    expect(parseThreshold('rate(valid) > 0.5').ok).toBe(true);
    expect(parseThreshold('rate(rate_limited) < 0.5').ok).toBe(true);
    expect(parseThreshold('p99(identities.listIdentities) < 1s').ok).toBe(true);
  });
});

/**
 * 100 requests: 80 verifications (60 VALID, 15 USAGE_EXCEEDED, 5 answered 500; latencies 1..80 ms),
 * 20 rate-limit checks (15 allowed, 5 denied; 100..119 ms); 2 failed per-response checks; 3 late,
 * 1 dropped; measured over 2 s.
 */
function fixtureReport(): RunReport {
  return minimalReport({
    measuredMs: 2_000,
    operations: [
      {
        operation: 'keys.verifyKey',
        latenciesMs: Array.from({ length: 80 }, (_, i) => i + 1),
        statuses: { '200': 75, '500': 5 },
        codes: { VALID: 60, USAGE_EXCEEDED: 15 },
        checkFailures: 2,
      },
      {
        operation: 'ratelimit.limit',
        latenciesMs: Array.from({ length: 20 }, (_, i) => 100 + i),
        ratelimit: { allowed: 15, denied: 5 },
      },
    ],
    totals: { late: 3, dropped: 1 },
    checks: [{ name: 'per-response checks', passed: false, detail: '2 answers failed their check' }],
  });
}

describe('evaluateThresholds', () => {
  const report = fixtureReport();

  test('the fixture is what the comments say', () => {
    expect(report.overall.requests).toBe(100);
    expect(report.totals.errors).toBe(5);
    expect(report.overall.statuses).toEqual({ '200': 95, '500': 5 });
  });

  test('latency of one operation and of all, with us / ms / s units', () => {
    const verifyP99 = report.operations[0]?.latency.corrected.p99 ?? Number.NaN;
    expect(verifyP99).toBeGreaterThan(79);
    expect(verifyP99).toBeLessThan(81);
    expect(evaluate(report, 'p99(keys.verifyKey) < 81ms')).toMatchObject({ passed: true, actual: verifyP99 });
    expect(evaluate(report, 'p99(keys.verifyKey) < 79ms')).toMatchObject({ passed: false, actual: verifyP99 });
    expect(evaluate(report, 'p99(keys.verifyKey) < 81000us').passed).toBe(true);
    expect(evaluate(report, 'p99(keys.verifyKey) < 79000us').passed).toBe(false);
    expect(evaluate(report, 'p99(keys.verifyKey) < 0.081s').passed).toBe(true);
    expect(evaluate(report, 'p99(keys.verifyKey) < 0.079s').passed).toBe(false);
    // All operations together: the slow rate-limit checks dominate the tail.
    expect(evaluate(report, 'p99 > 110ms').passed).toBe(true);
    expect(evaluate(report, 'max(ratelimit.limit) >= 119ms').passed).toBe(true);
    expect(evaluate(report, 'max(ratelimit.limit) < 0.1s').passed).toBe(false);
    expect(evaluate(report, 'p50 < 1ms').detail).toMatch(/ms/);
  });

  test('errors: transport errors and 5xx, overall and per operation', () => {
    expect(evaluate(report, 'errors == 0')).toMatchObject({ passed: false, actual: 5 });
    expect(evaluate(report, 'errors <= 5')).toMatchObject({ passed: true, actual: 5 });
    expect(evaluate(report, 'errors(keys.verifyKey) == 5')).toMatchObject({ passed: true, actual: 5 });
    expect(evaluate(report, 'errors(ratelimit.limit) == 0')).toMatchObject({ passed: true, actual: 0 });
  });

  test('errors per operation also count transport errors', () => {
    const withTransport = minimalReport({
      operations: [{ operation: 'keys.verifyKey', latenciesMs: [1, 2, 3, 4], statuses: { '200': 2 }, transportErrors: { refused: 1, reset: 1 } }],
    });
    expect(evaluate(withTransport, 'errors(keys.verifyKey) == 2')).toMatchObject({ passed: true, actual: 2 });
    expect(evaluate(withTransport, 'errors == 2')).toMatchObject({ passed: true, actual: 2 });
  });

  test('rate(VALID): the share of verification codes', () => {
    expect(evaluate(report, 'rate(VALID) == 0.8')).toMatchObject({ passed: true, actual: 0.8 });
    expect(evaluate(report, 'rate(valid) > 0.9')).toMatchObject({ passed: false, actual: 0.8 });
    expect(evaluate(report, 'rate(USAGE_EXCEEDED) == 0.2').passed).toBe(true);
    expect(evaluate(report, 'rate(NOT_FOUND) == 0').passed).toBe(true);
  });

  test('rate(200): the share of answers with that status', () => {
    expect(evaluate(report, 'rate(200) == 0.95')).toMatchObject({ passed: true, actual: 0.95 });
    expect(evaluate(report, 'rate(500) > 0.1')).toMatchObject({ passed: false, actual: 0.05 });
    expect(evaluate(report, 'rate(429) == 0').passed).toBe(true);
  });

  test('rate(allowed) and rate(denied): the share of rate-limit checks', () => {
    expect(evaluate(report, 'rate(allowed) == 0.75')).toMatchObject({ passed: true, actual: 0.75 });
    expect(evaluate(report, 'rate(denied) < 0.2')).toMatchObject({ passed: false, actual: 0.25 });
  });

  test('requests and rps, overall and per operation', () => {
    expect(evaluate(report, 'requests == 100')).toMatchObject({ passed: true, actual: 100 });
    expect(evaluate(report, 'requests > 100').passed).toBe(false);
    expect(evaluate(report, 'requests(ratelimit.limit) == 20').passed).toBe(true);
    expect(evaluate(report, 'rps == 50')).toMatchObject({ passed: true, actual: 50 });
    expect(evaluate(report, 'rps(keys.verifyKey) == 40')).toMatchObject({ passed: true, actual: 40 });
    expect(evaluate(report, 'rps >= 100').passed).toBe(false);
  });

  test('late, dropped and checks', () => {
    expect(evaluate(report, 'late == 0')).toMatchObject({ passed: false, actual: 3 });
    expect(evaluate(report, 'late <= 3').passed).toBe(true);
    expect(evaluate(report, 'dropped == 0')).toMatchObject({ passed: false, actual: 1 });
    expect(evaluate(report, 'dropped != 0').passed).toBe(true);
    const checks = evaluate(report, 'checks == 0');
    expect(checks.passed).toBe(false);
    expect(checks.actual).toBeGreaterThan(0);
    const clean = minimalReport({ operations: [{ operation: 'keys.verifyKey', latenciesMs: [1] }], checks: [{ name: 'ok', passed: true, detail: '' }] });
    expect(evaluate(clean, 'checks == 0')).toMatchObject({ passed: true, actual: 0 });
    // A failed end-of-run check alone fails `checks == 0`.
    const endOfRun = minimalReport({
      operations: [{ operation: 'keys.verifyKey', latenciesMs: [1] }],
      checks: [{ name: 'balances', passed: false, detail: 'x' }],
    });
    expect(evaluate(endOfRun, 'checks == 0').passed).toBe(false);
  });

  test('every comparator', () => {
    expect(evaluate(report, 'requests < 101').passed).toBe(true);
    expect(evaluate(report, 'requests < 100').passed).toBe(false);
    expect(evaluate(report, 'requests <= 100').passed).toBe(true);
    expect(evaluate(report, 'requests > 99').passed).toBe(true);
    expect(evaluate(report, 'requests >= 101').passed).toBe(false);
    expect(evaluate(report, 'requests == 100').passed).toBe(true);
    expect(evaluate(report, 'requests != 100').passed).toBe(false);
  });

  test('results keep the expression as written (trimmed) and the order given', () => {
    const results = evaluateThresholds([parsed('  errors == 0 '), parsed('requests == 100')], report);
    expect(results.map((r) => [r.expression, r.passed])).toEqual([
      ['errors == 0', false],
      ['requests == 100', true],
    ]);
    expect(evaluateThresholds([], report)).toEqual([]);
  });

  describe('missing data fails the threshold with a reason, whatever the comparison', () => {
    const empty = minimalReport({ operations: [] });
    test.each([
      [report, 'p99(keys.deleteKey) < 1000s', /keys\.deleteKey/],
      [report, 'errors(keys.deleteKey) == 0', /keys\.deleteKey/],
      [report, 'requests(keys.deleteKey) >= 0', /keys\.deleteKey/],
      [empty, 'p99 < 1000s', /no latency/],
      [empty, 'rate(200) >= 0', /no requests/],
      [empty, 'rate(VALID) >= 0', /no verifications/],
      [empty, 'rate(allowed) >= 0', /no rate-limit/],
      [minimalReport({ operations: [{ operation: 'keys.getKey', latenciesMs: [1] }] }), 'rate(VALID) >= 0', /no verifications/],
    ])('%#: %s', (r, expression, reason) => {
      const result = evaluate(r, expression);
      expect(result.passed).toBe(false);
      expect(result.actual).toBeNull();
      expect(result.detail).toMatch(reason);
    });
  });
});
