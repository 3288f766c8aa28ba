/**
 * The busy-machine verdict, on hand-built reports (no timing): when the load generator could not
 * keep its schedule, a latency or throughput threshold is passed when it passes anyway (the lag
 * only makes those figures worse), failed when it fails over the sends made on time too with the
 * generator's own delay allowed for, and inconclusive only when the lag may explain the failure.
 */
import { describe, expect, test } from 'vitest';
import { judgeGenerator } from '../../src/load/metrics/generator-monitor.js';
import { evaluateThresholds, parseThreshold } from '../../src/load/run/thresholds.js';
import { thresholdVerdict } from '../../src/report/generator-text.js';
import type { GeneratorPhase, RunReport, ThresholdResult } from '../../src/report/model.js';
import { type OperationFixture, minimalReport } from '../helpers/report-fixture.js';

const repeat = (n: number, ms: number) => Array.from({ length: n }, () => ms);

/** A generator that lagged: 43 of 3,600 sends late, its event loop delayed 4 ms at p99 (30 ms at worst). */
function laggedPhase(overrides: Partial<GeneratorPhase> = {}): GeneratorPhase {
  return {
    name: 'load',
    scheduledSends: 3_600,
    lateSends: 43,
    loopDelayMs: { p50: 1, p99: 4, max: 30 },
    processCpuCores: 1.1,
    mainThreadBusy: 0.9,
    ...overrides,
  };
}

function lagged(operations: OperationFixture[], phase = laggedPhase()): RunReport {
  const report = minimalReport({ operations, totals: { late: phase.lateSends ?? 0 } });
  const generator = judgeGenerator([phase], { lateShare: 0.01, loopDelayP99Ms: 50 }, 3.5);
  expect(generator.limited).toBe(true);
  return { ...report, generator };
}

function judge(report: RunReport, expression: string): ThresholdResult {
  const parsed = parseThreshold(expression);
  if (!parsed.ok) throw new Error(parsed.error);
  const [result] = evaluateThresholds([parsed.threshold], report);
  if (result === undefined) throw new Error('no result');
  return result;
}

/** 3,557 sends on time: 99 % answered in 10 ms, the slowest 1 % in `slowOnTimeMs`; 43 late sends answered in 400 ms (their lateness counted). */
function verifyRun(slowOnTimeMs: number): OperationFixture {
  return { operation: 'keys.verifyKey', latenciesMs: [...repeat(3_520, 10), ...repeat(37, slowOnTimeMs)], lateLatenciesMs: repeat(43, 400) };
}

describe('a latency or throughput threshold on a run whose generator lagged', () => {
  test('a pace threshold that passes although the generator lagged is passed', () => {
    const report = lagged([verifyRun(20)]);
    for (const expression of ['p99 < 3600s', 'p99(keys.verifyKey) < 1s', 'p95 < 50ms', 'max <= 400ms', 'rps > 1']) {
      const result = judge(report, expression);
      expect(thresholdVerdict(result), `${expression}: ${result.detail}`).toBe('passed');
      expect(result.detail).toMatch(/passed, although the load generator lagged/);
    }
  });

  test('a pace threshold that passes although the generator lagged is passed even when it dropped sends: with drops, one a lower figure helps is inconclusive', () => {
    const report = lagged([verifyRun(20)]);
    report.totals.dropped = 120;
    for (const expression of ['p99 < 3600s', 'p99(keys.verifyKey) < 1s', 'max <= 400ms', 'rps < 100000']) {
      const result = judge(report, expression);
      expect(thresholdVerdict(result), `${expression}: ${result.detail}`).toBe('inconclusive');
      expect(result.detail).toMatch(/dropped 120 planned sends/);
    }
    // Drops only lower rps: a lower bound that passes anyway is passed.
    expect(thresholdVerdict(judge(report, 'rps > 1'))).toBe('passed');
  });

  test('a latency threshold that fails over the sends made on time too, the generator delay allowed, is failed', () => {
    // On time, the slowest 1 % took 70 ms: p99 over the on-time sends is 70 ms, 66 ms with the 4 ms of delay allowed.
    const result = judge(lagged([verifyRun(70)]), 'p99 < 50ms');
    expect(thresholdVerdict(result)).toBe('failed');
    expect(result.inconclusive).toBeUndefined();
    expect(result.detail).toMatch(/^measured 400 ms; over the 3,557 sends on time 70 ms with 4 ms of generator delay allowed: failed$/);
  });

  test('a latency threshold that fails only because of the late sends is inconclusive', () => {
    // The 43 late sends (1.2 %) push the measured p99 to 400 ms; on time, p99 is 10 ms.
    const result = judge(lagged([{ operation: 'keys.verifyKey', latenciesMs: repeat(3_557, 10), lateLatenciesMs: repeat(43, 400) }]), 'p99 < 50ms');
    expect(thresholdVerdict(result)).toBe('inconclusive');
    expect(result.detail).toMatch(/over the 3,557 sends on time 10 ms with 4 ms of generator delay allowed: passed, so inconclusive/);
  });

  test("the generator's own delay is allowed for: an on-time figure over the limit by less than the event-loop delay is inconclusive", () => {
    const result = judge(lagged([verifyRun(52)]), 'p99 < 50ms');
    expect(thresholdVerdict(result)).toBe('inconclusive');
    // A max threshold allows for the worst delay (30 ms), not the p99.
    const max = judge(lagged([verifyRun(52)]), 'max(keys.verifyKey) < 60ms');
    expect(max.detail).toMatch(/with 30 ms of generator delay allowed/);
  });

  test('per operation: the on-time figures of that operation decide', () => {
    const report = lagged([verifyRun(70), { operation: 'ratelimit.limit', latenciesMs: repeat(500, 5), lateLatenciesMs: repeat(10, 400) }]);
    expect(thresholdVerdict(judge(report, 'p99(keys.verifyKey) < 50ms'))).toBe('failed');
    expect(thresholdVerdict(judge(report, 'p99(ratelimit.limit) < 50ms'))).toBe('inconclusive');
  });

  test('too few sends on time to read the percentile from leave a failing latency threshold inconclusive (a blocked generator keeps one on time)', () => {
    // 99 sends on time, all slow: a p99 needs 100 to have one above it; a p90 has enough.
    const report = lagged([{ operation: 'keys.verifyKey', latenciesMs: repeat(99, 70), lateLatenciesMs: repeat(43, 400) }]);
    const p99 = judge(report, 'p99 < 50ms');
    expect(thresholdVerdict(p99)).toBe('inconclusive');
    expect(p99.detail).toMatch(/only 99 of the sends were made on time, too few to read a p99 from \(100 needed\)/);
    expect(thresholdVerdict(judge(report, 'p90 < 50ms'))).toBe('failed');
  });

  test('a throughput threshold that fails when the generator lagged is inconclusive (no figure of it is free of the lag)', () => {
    const result = judge(lagged([verifyRun(10)]), 'rps > 100000');
    expect(thresholdVerdict(result)).toBe('inconclusive');
    expect(result.detail).toMatch(/no figure of the throughput is free/);
  });

  test('a threshold the lag can only have made better that fails is failed', () => {
    // The lag only adds latency: a p50 that is too low as measured is lower still without it.
    expect(thresholdVerdict(judge(lagged([verifyRun(10)]), 'p50 > 100ms'))).toBe('failed');
  });

  test('a report without on-time latency (written by an older keysim) leaves a failing latency threshold inconclusive', () => {
    const report = lagged([verifyRun(70)]);
    const { onTime: _dropped, ...overall } = report.overall;
    const old: RunReport = { ...report, overall };
    const result = judge(old, 'p99 < 50ms');
    expect(thresholdVerdict(result)).toBe('inconclusive');
    expect(result.detail).toMatch(/older keysim/);
  });

  test('a generator that kept its schedule: thresholds judged as measured', () => {
    const report = minimalReport({ operations: [verifyRun(70)] });
    const result = judge(report, 'p99 < 50ms');
    expect(result).toEqual({ expression: 'p99 < 50ms', passed: false, actual: 400, detail: 'measured 400 ms' });
  });
});

describe('p95', () => {
  test('p95 in thresholds (k6 users reach for it) reads the 95th percentile', () => {
    const report = minimalReport({ operations: [{ operation: 'keys.verifyKey', latenciesMs: [...repeat(94, 10), ...repeat(6, 45)] }] });
    expect(judge(report, 'p95(keys.verifyKey) < 40ms')).toMatchObject({ passed: false, actual: 45 });
    expect(judge(report, 'p95 < 50ms')).toMatchObject({ passed: true, actual: 45 });
    expect(report.overall.latency.corrected.p95).toBe(45);
  });

  test('a report written before p95 says so rather than failing on a missing figure silently', () => {
    const report = minimalReport({ operations: [{ operation: 'keys.verifyKey', latenciesMs: [1, 2, 3] }] });
    const { p95: _dropped, ...old } = report.overall.latency.corrected;
    const result = judge({ ...report, overall: { ...report.overall, latency: { ...report.overall.latency, corrected: old } } }, 'p95 < 5ms');
    expect(result).toMatchObject({ passed: false, actual: null });
    expect(result.detail).toMatch(/no p95.*older keysim/);
  });
});
