/**
 * The exit code of a run whose load generator lagged, on hand-built reports (no timing): 97 only
 * when a threshold is inconclusive and nothing failed. A run that lagged with every threshold
 * judged exits on its verdicts and keeps its banner. `keysim merge` (and `run --workers`) share
 * the rule: the segments' on-time latency is merged, and the merged report judged the same way.
 */
import { describe, expect, test } from 'vitest';
import { mergeExitCode, mergeParts } from '../../src/cli/commands/merge.js';
import { exitCodeOf } from '../../src/cli/exit-code-of.js';
import { EXIT } from '../../src/cli/exit-codes.js';
import { judgeGenerator } from '../../src/load/metrics/generator-monitor.js';
import { evaluateThresholds, parseThreshold } from '../../src/load/run/thresholds.js';
import { generatorBanner } from '../../src/report/generator-text.js';
import { parseReport, renderJson } from '../../src/report/index.js';
import type { GeneratorPhase, RunReport } from '../../src/report/model.js';
import { minimalReport } from '../helpers/report-fixture.js';

const repeat = (n: number, ms: number) => Array.from({ length: n }, () => ms);
const phase: GeneratorPhase = {
  name: 'load',
  scheduledSends: 150,
  lateSends: 2,
  loopDelayMs: { p50: 1, p99: 4, max: 20 },
  processCpuCores: 0.8,
  mainThreadBusy: 0.7,
};

/** A lagged run (2 of 150 sends late, over the 1 % limit): 148 on-time answers in `onTimeMs`, 2 late ones in 300 ms. */
function laggedRun(onTimeMs: number, thresholds: string[], extra: Partial<RunReport> = {}): RunReport {
  const base = minimalReport({
    operations: [{ operation: 'keys.verifyKey', latenciesMs: repeat(148, onTimeMs), lateLatenciesMs: repeat(2, 300) }],
    totals: { late: 2 },
  });
  const report = { ...base, generator: judgeGenerator([phase], { lateShare: 0.01, loopDelayP99Ms: 50 }, 2.4), ...extra };
  return { ...report, thresholds: evaluateThresholds(thresholds.map(parsed), report) };
}

function parsed(expression: string) {
  const result = parseThreshold(expression);
  if (!result.ok) throw new Error(result.error);
  return result.threshold;
}

describe('the exit code of a run whose generator lagged', () => {
  test('a run that lagged with no threshold inconclusive exits 0 and keeps its banner (it exited 97)', () => {
    const report = laggedRun(5, ['p99 < 500ms', 'errors == 0']);
    expect(report.generator?.limited).toBe(true);
    expect(exitCodeOf(report)).toBe(EXIT.ok);
    expect(generatorBanner(report)?.headline).toMatch(/could not keep its schedule/);
  });

  test('a run that lagged without thresholds exits 0 (npm start, the README example: no threshold to be inconclusive)', () => {
    expect(exitCodeOf(laggedRun(5, []))).toBe(EXIT.ok);
  });

  test('a p99 that fails over the on-time sends too exits 99 (it was inconclusive, 97, and a JUnit skip)', () => {
    const report = laggedRun(67, ['p99 < 50ms']);
    expect(report.thresholds[0]).toMatchObject({ passed: false });
    expect(report.thresholds[0]?.inconclusive).toBeUndefined();
    expect(exitCodeOf(report)).toBe(EXIT.thresholdFailed);
  });

  test('a threshold that fails only because of the late sends exits 97, with the INCONCLUSIVE banner', () => {
    const report = laggedRun(5, ['p99 < 50ms']);
    expect(report.thresholds[0]?.inconclusive).toBe(true);
    expect(exitCodeOf(report)).toBe(EXIT.generatorLimited);
    expect(generatorBanner(report)?.headline).toMatch(/^INCONCLUSIVE/);
  });

  test('a failed threshold outranks an inconclusive one: 99', () => {
    expect(exitCodeOf(laggedRun(5, ['p99 < 50ms', 'requests > 1000000']))).toBe(EXIT.thresholdFailed);
  });

  test('a failed check outranks an inconclusive threshold: 98', () => {
    const checks = [{ name: 'per-response checks', passed: false, detail: '1 answer failed its check' }];
    expect(exitCodeOf(laggedRun(5, ['p99 < 50ms'], { checks }))).toBe(EXIT.checkFailed);
  });

  test('a generator that kept its schedule: no banner, exits on its verdicts', () => {
    const report = minimalReport({ operations: [{ operation: 'keys.verifyKey', latenciesMs: repeat(10, 5) }] });
    expect(generatorBanner(report)).toBeUndefined();
    expect(exitCodeOf(report)).toBe(EXIT.ok);
  });
});

describe('keysim merge judges lagged segments by the same rule', () => {
  const segment = (index: number, onTimeMs: number) => ({ ...laggedRun(onTimeMs, ['p99 < 50ms']), segment: { index, count: 2 } });

  test('the on-time latency of the segments is merged, and a p99 that fails over it is failed (99)', () => {
    const merged = mergeParts([segment(0, 67), segment(1, 67)]);
    expect(merged.overall.onTime?.latency.count).toBe(296);
    expect(merged.thresholds[0]).toMatchObject({ expression: 'p99 < 50ms', passed: false });
    expect(merged.thresholds[0]?.detail).toMatch(/over the 296 sends on time 67(\.\d+)? ms with 4 ms of generator delay allowed: failed/);
    expect(mergeExitCode(merged)).toBe(EXIT.thresholdFailed);
    const reread = parseReport(renderJson(merged));
    expect(reread.ok ? reread.report.overall.onTime : reread.error).toEqual(merged.overall.onTime);
  });

  test('segments whose failure is the late sends only merge into an inconclusive verdict (97), and passing ones into 0', () => {
    expect(mergeExitCode(mergeParts([segment(0, 5), segment(1, 5)]))).toBe(EXIT.generatorLimited);
    const passing = (index: number) => ({ ...laggedRun(5, ['p99 < 500ms']), segment: { index, count: 2 } });
    expect(mergeExitCode(mergeParts([passing(0), passing(1)]))).toBe(EXIT.ok);
  });
});
