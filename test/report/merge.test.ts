/**
 * `mergeReports`: exact merging of segments' partial reports — counts summed, HDR histograms
 * added (a merged p99 is the p99 of all samples, not the mean of the segments' p99s), checks
 * failing when any segment's failed, and a missing or interrupted segment making the merge partial.
 */
import { describe, expect, test } from 'vitest';
import { MergeError, mergeReports } from '../../src/report/merge.js';
import type { RunReport } from '../../src/report/model.js';
import { parseReport, renderJson, renderMarkdown } from '../../src/report/index.js';
import { mergeExitCode } from '../../src/cli/commands/merge.js';
import { EXIT } from '../../src/cli/exit-codes.js';
import { minimalReport } from '../helpers/report-fixture.js';

function part(index: number, count: number, latenciesMs: number[], extra: Partial<RunReport> = {}): RunReport {
  const report = minimalReport({ operations: [{ operation: 'keys.verifyKey', latenciesMs, codes: { VALID: latenciesMs.length } }] });
  const checks = [
    { name: 'per-response checks', passed: true, detail: `all ${latenciesMs.length} answers passed`, counts: { failed: 0, total: latenciesMs.length } },
  ];
  return { ...report, checks, segment: { index, count }, ...extra };
}

describe('merging segments', () => {
  test('percentiles come from the merged histogram, not from averaging: a slow segment shows in p99', () => {
    const fast = Array.from({ length: 98 }, () => 10);
    const slow = [500, 500];
    const merged = mergeReports([part(0, 2, fast), part(1, 2, slow)]);
    expect(merged.totals.requests).toBe(100);
    expect(merged.operations[0]?.codes).toEqual({ VALID: 100 });
    // 2 of 100 samples at 500 ms: the p99 is 500 (averaging the segments' p99s would give ~255).
    expect(merged.overall.latency.corrected.p99).toBeCloseTo(500, 0);
    expect(merged.overall.latency.corrected.p50).toBeCloseTo(10, 1);
    expect(merged.merge).toEqual({ segments: 2, merged: ['0/2', '1/2'], missing: [], incomplete: [], partial: false });
    expect(mergeExitCode(merged)).toBe(EXIT.ok);
    // The merged report is a valid report.
    expect(parseReport(renderJson(merged)).ok).toBe(true);
  });

  test('a check fails when it failed in any segment; its raw counts are summed', () => {
    const failing = part(1, 2, [10, 10], {
      checks: [{ name: 'per-response checks', passed: false, detail: '1 answers failed their check, e.g. x', counts: { failed: 1, total: 2 } }],
    });
    const merged = mergeReports([part(0, 2, [10, 10, 10]), failing]);
    expect(merged.checks).toEqual([expect.objectContaining({ name: 'per-response checks', passed: false, counts: { failed: 1, total: 5 } })]);
    expect(merged.checks[0]?.detail).toMatch(/segment 1\/2: 1 answers failed/);
    expect(mergeExitCode(merged)).toBe(EXIT.checkFailed);
  });

  test('a missing segment (0/4, 1/4, 3/4) or an interrupted one makes the merge partial: a field, a banner, exit 92', () => {
    const missing = mergeReports([part(0, 4, [10]), part(1, 4, [10]), part(3, 4, [10])]);
    expect(missing.merge).toMatchObject({ partial: true, missing: ['2/4'] });
    expect(renderMarkdown(missing)).toContain('**PARTIAL**');
    expect(mergeExitCode(missing)).toBe(EXIT.mergePartial);
    const interrupted = mergeReports([part(0, 2, [10]), part(1, 2, [10], { status: 'interrupted' })]);
    expect(interrupted.merge).toMatchObject({ partial: true, missing: [], incomplete: ['1/2 (interrupted)'] });
    expect(interrupted.status).toBe('interrupted');
    expect(mergeExitCode(interrupted)).toBe(EXIT.mergePartial);
  });

  test('reports that are not segments of one plan are refused with the reason', () => {
    expect(() => mergeReports([])).toThrow(MergeError);
    expect(() => mergeReports([part(0, 2, [1]), part(0, 2, [1])])).toThrow(/given twice/);
    expect(() => mergeReports([part(0, 2, [1]), part(1, 3, [1])])).toThrow(/different cuts/);
    const whole = minimalReport({ operations: [{ operation: 'keys.verifyKey', latenciesMs: [1] }] });
    expect(() => mergeReports([part(0, 2, [1]), whole])).toThrow(/not a segment's partial report/);
  });
});
