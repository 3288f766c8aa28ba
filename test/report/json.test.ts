/**
 * report.json: stable pretty output that round-trips through the reader, and a reader that
 * refuses anything that is not a version-1 or version-2 keysim report with an error naming the
 * field.
 */
import { describe, expect, it } from 'vitest';
import { REPORT_SCHEMA, REPORT_VERSION, parseReport, renderJson, type RunReport } from '../../src/report/index.js';
import {
  allFixtureReports,
  closedCutOffReport,
  completedReport,
  interruptedReport,
  invariantsCleanReport,
  invariantsViolatedReport,
} from '../fixtures/reports.js';

/** The report as a plain JSON value, for editing into broken variants. */
function asJson(report: RunReport): Record<string, unknown> {
  return JSON.parse(renderJson(report)) as Record<string, unknown>;
}

/** The report as written before keysim counted cut-off requests: no `cutOff` anywhere. */
function withoutCutOff(json: Record<string, unknown>): Record<string, unknown> {
  for (const op of [json['overall'], ...(json['operations'] as unknown[])] as Array<Record<string, unknown>>) delete op['cutOff'];
  delete (json['totals'] as Record<string, unknown>)['cutOff'];
  return json;
}

function errorOf(text: string): string {
  const result = parseReport(text);
  if (result.ok) throw new Error('expected parseReport to refuse the input');
  return result.error;
}

describe('renderJson', () => {
  const fixtures = allFixtureReports();

  it.each(fixtures)('$name: round-trips through parseReport unchanged', ({ report }) => {
    const result = parseReport(renderJson(report));
    expect(result.ok, result.ok ? '' : result.error).toBe(true);
    if (result.ok) expect(result.report).toEqual(report);
  });

  it('is pretty (two-space indent), ends with a newline and starts with the schema and version', () => {
    const text = renderJson(completedReport());
    expect(text.startsWith(`{\n  "schema": "${REPORT_SCHEMA}",\n  "version": ${REPORT_VERSION},\n  "scenario": {\n    "name"`)).toBe(true);
    expect(text.endsWith('}\n')).toBe(true);
    expect(text).not.toMatch(/\t/);
  });

  it('is stable: the same report gives the same text, whatever order its records and fields were filled in', () => {
    const report = completedReport();
    const reordered: RunReport = JSON.parse(renderJson(report)) as RunReport;
    // Rebuild records and objects with reversed key order.
    const reverse = <T extends object>(o: T): T => Object.fromEntries(Object.entries(o).reverse()) as T;
    const shuffled: RunReport = reverse({
      ...reordered,
      settings: reverse(reordered.settings),
      operations: reordered.operations.map((op) => reverse({ ...op, statuses: reverse(op.statuses), codes: reverse(op.codes) })),
      overall: reverse({ ...reordered.overall, statuses: reverse(reordered.overall.statuses), codes: reverse(reordered.overall.codes) }),
    });
    expect(Object.keys(shuffled)[0]).not.toBe('schema');
    expect(renderJson(shuffled)).toBe(renderJson(report));
    expect(renderJson(report)).toBe(renderJson(completedReport()));
  });

  it('sorts count records by key, numerically for HTTP statuses', () => {
    const report = completedReport();
    const op = report.operations[0];
    if (op === undefined) throw new Error('fixture has operations');
    op.statuses = { '503': 1, '200': 5, '1000': 2, '429': 3 };
    op.codes = { VALID: 1, EXPIRED: 2, NOT_FOUND: 3 };
    const parsed = JSON.parse(renderJson(report)) as RunReport;
    expect(Object.keys(parsed.operations[0]?.statuses ?? {})).toEqual(['200', '429', '503', '1000']);
    expect(Object.keys(parsed.operations[0]?.codes ?? {})).toEqual(['EXPIRED', 'NOT_FOUND', 'VALID']);
  });

  it('keeps fields it does not know (after the known ones) instead of dropping them', () => {
    const report = { ...completedReport(), extra: { b: 1, a: 2 } } as RunReport;
    const text = renderJson(report);
    expect(text).toContain('"extra"');
    expect(text.indexOf('"extra"')).toBeGreaterThan(text.indexOf('"notes"'));
  });

  it('writes the invariants section whole, after the thresholds and before the notes, and reads it back', () => {
    const report = invariantsViolatedReport();
    const text = renderJson(report);
    expect(text.indexOf('\n  "invariants": {')).toBeGreaterThan(text.indexOf('\n  "thresholds": '));
    expect(text.indexOf('\n  "notes": ')).toBeGreaterThan(text.indexOf('\n  "invariants": {'));
    const parsed = JSON.parse(text) as RunReport;
    expect(Object.keys(parsed.invariants ?? {})).toEqual([
      'verdict',
      'history',
      'operations',
      'checked',
      'invariants',
      'violations',
      'violationsTotal',
      'notes',
      'oracle',
    ]);
    expect(Object.keys(parsed.invariants?.violations[0]?.witness[0] ?? {})).toEqual([
      'seq',
      'op',
      'invokeMs',
      'completeMs',
      'serviceInvokeMs',
      'serviceCompleteMs',
      'request',
      'outcome',
    ]);
    const result = parseReport(text);
    expect(result.ok, result.ok ? '' : result.error).toBe(true);
    if (!result.ok) return;
    expect(result.report.invariants).toEqual(report.invariants);
    expect(result.report.invariants?.verdict).toBe('violated');
    expect(result.report.invariants?.violations[1]?.witness[2]).toEqual({
      seq: 1906,
      op: 'ratelimit.limit',
      invokeMs: Date.parse('2026-03-02T10:15:09.503Z'),
      completeMs: Date.parse('2026-03-02T10:15:19.503Z'),
      request: 'burst/user_42 limit 3/60000 ms cost 1',
      outcome: 'unknown (no answer)',
    });
    expect(result.report.invariants?.oracle?.examples).toHaveLength(2);
    const clean = parseReport(renderJson(invariantsCleanReport()));
    expect(clean.ok && clean.report.invariants?.verdict).toBe('clean');
  });

  it('writes the cut-off counts after the transport errors and after the errors', () => {
    const text = renderJson(closedCutOffReport());
    const parsed = JSON.parse(text) as RunReport;
    expect(Object.keys(parsed.totals).slice(0, 3)).toEqual(['requests', 'errors', 'cutOff']);
    const keys = Object.keys(parsed.operations[0] ?? {});
    expect(keys.indexOf('cutOff')).toBe(keys.indexOf('transportErrors') + 1);
    expect(parsed.operations.map((o) => o.cutOff)).toEqual([3, 1]);
    expect([parsed.overall.cutOff, parsed.totals.cutOff]).toEqual([4, 4]);
  });

  it('writes no invariants key when the run recorded no history', () => {
    expect(renderJson(completedReport())).not.toContain('"invariants"');
  });

  it('does not modify the report', () => {
    const report = interruptedReport();
    const before = structuredClone(report);
    renderJson(report);
    expect(report).toEqual(before);
  });
});

describe('parseReport', () => {
  it('accepts optional phase clocks being absent and a null threshold actual', () => {
    const json = asJson(interruptedReport());
    const thresholds = json['thresholds'] as Array<Record<string, unknown>>;
    const first = thresholds[0];
    if (first === undefined) throw new Error('fixture has a threshold');
    first['actual'] = null;
    const result = parseReport(JSON.stringify(json));
    expect(result.ok, result.ok ? '' : result.error).toBe(true);
  });

  it('reads a version-1 report (written before the invariants section and the cut-off counts) and keeps its version', () => {
    const json = withoutCutOff({ ...asJson(completedReport()), version: 1 });
    const result = parseReport(JSON.stringify(json));
    expect(result.ok, result.ok ? '' : result.error).toBe(true);
    if (!result.ok) return;
    expect(result.report.version).toBe(1);
    expect(result.report.invariants).toBeUndefined();
    // Not counted is not zero: the fields stay absent.
    expect(result.report.totals.cutOff).toBeUndefined();
    expect(result.report.operations.map((o) => o.cutOff)).toEqual(result.report.operations.map(() => undefined));
    expect(JSON.parse(renderJson(result.report))).toEqual(json);
  });

  it('reads a version-2 report written before the cut-off counts', () => {
    const json = withoutCutOff(asJson(invariantsCleanReport()));
    const result = parseReport(JSON.stringify(json));
    expect(result.ok, result.ok ? '' : result.error).toBe(true);
    if (result.ok) expect(result.report.overall.cutOff).toBeUndefined();
  });

  it('refuses a negative or non-numeric cut-off count', () => {
    const json = asJson(closedCutOffReport());
    (json['totals'] as Record<string, unknown>)['cutOff'] = -1;
    ((json['operations'] as Array<Record<string, unknown>>)[0] as Record<string, unknown>)['cutOff'] = '3';
    const error = errorOf(JSON.stringify(json));
    expect(error).toContain('totals.cutOff: expected a number >= 0, got number -1');
    expect(error).toContain('operations[0].cutOff: expected a number, got string "3"');
  });

  it('names bad fields of the invariants section by path', () => {
    const json = asJson(invariantsViolatedReport());
    const section = json['invariants'] as Record<string, unknown>;
    section['verdict'] = 'dirty';
    const violations = section['violations'] as Array<{ witness: Array<Record<string, unknown>> }>;
    const op = violations[0]?.witness[1];
    if (op === undefined) throw new Error('the fixture has a witness');
    op['invokeMs'] = '2026-03-02T10:15:09.310Z';
    delete op['outcome'];
    (section['oracle'] as Record<string, unknown>)['verdict'] = 'maybe';
    (section['checked'] as Record<string, unknown>)['keys'] = -1;
    const error = errorOf(JSON.stringify(json));
    expect(error).toMatch(/^invalid keysim report \(version 2\): 5 problems/);
    expect(error).toContain('invariants.verdict: expected one of "clean", "violated", "not-checked", got string "dirty"');
    expect(error).toContain('invariants.checked.keys: expected a number >= 0, got number -1');
    expect(error).toContain('invariants.violations[0].witness[1].invokeMs: expected a number, got string "2026-03-02T10:15:09.310Z"');
    expect(error).toContain('invariants.violations[0].witness[1].outcome: missing');
    expect(error).toContain('invariants.oracle.verdict: expected one of "agrees", "differs", "not-run", got string "maybe"');
  });

  it('refuses text that is not JSON', () => {
    expect(errorOf('{"schema": "keysim-run-report",')).toMatch(/not valid JSON/);
    expect(errorOf('')).toMatch(/not valid JSON/);
  });

  it('refuses JSON that is not an object', () => {
    expect(errorOf('[1, 2]')).toMatch(/expected a JSON object, got an array/);
    expect(errorOf('null')).toMatch(/expected a JSON object, got null/);
  });

  it('refuses another schema, naming what it expected', () => {
    const error = errorOf(JSON.stringify({ ...asJson(completedReport()), schema: 'k6-summary' }));
    expect(error).toMatch(/not a keysim report/);
    expect(error).toContain('"keysim-run-report"');
    expect(error).toContain('k6-summary');
    expect(errorOf('{"hello": "world"}')).toMatch(/schema.*nothing \(missing\)/);
  });

  it('refuses another version, telling a newer report from a broken one', () => {
    const newer = errorOf(JSON.stringify({ ...asJson(completedReport()), version: 3 }));
    expect(newer).toMatch(/unsupported report version/);
    expect(newer).toMatch(/reads versions 1 and 2/);
    expect(newer).toMatch(/newer keysim/);
    const stringy = errorOf(JSON.stringify({ ...asJson(completedReport()), version: '1' }));
    expect(stringy).toMatch(/unsupported report version: got string "1"/);
    expect(stringy).not.toMatch(/newer/);
  });

  it('names every bad field by its path', () => {
    const json = asJson(completedReport());
    const operations = json['operations'] as Array<Record<string, unknown>>;
    const op = operations[1] as { latency: { corrected: Record<string, unknown> }; histograms: Record<string, unknown> };
    op.latency.corrected['p99'] = 'fast';
    op.histograms['corrected'] = 'not base64!';
    delete (json['totals'] as Record<string, unknown>)['late'];
    json['status'] = 'done';
    (json['checks'] as Array<Record<string, unknown>>).push({ name: 'x', passed: 'yes', detail: '' });
    const error = errorOf(JSON.stringify(json));
    expect(error).toMatch(/^invalid keysim report \(version 2\): 5 problems/);
    expect(error).toContain('operations[1].latency.corrected.p99: expected a number, got string "fast"');
    expect(error).toContain('operations[1].histograms.corrected: expected a base64 string');
    expect(error).toContain('totals.late: missing');
    expect(error).toContain('status: expected one of "completed", "interrupted", "failed", got string "done"');
    expect(error).toContain('checks[3].passed: expected true or false, got string "yes"');
  });

  it('refuses negative counts and wrong container types', () => {
    const json = asJson(completedReport());
    (json['totals'] as Record<string, unknown>)['dropped'] = -1;
    json['notes'] = 'one note';
    (json['overall'] as Record<string, unknown>)['statuses'] = { '200': '5' };
    const error = errorOf(JSON.stringify(json));
    expect(error).toContain('totals.dropped: expected a number >= 0, got number -1');
    expect(error).toContain('notes: expected an array, got string "one note"');
    expect(error).toContain('overall.statuses["200"]: expected a number, got string "5"');
  });

  it('stops listing after a dozen problems', () => {
    const json = asJson(completedReport());
    json['timeline'] = Array.from({ length: 40 }, () => ({ second: 'x' }));
    const error = errorOf(JSON.stringify(json));
    expect(error).toMatch(/stopped after 12 problems/);
    expect(error.split('\n  - ')).toHaveLength(13);
  });

  it('tolerates unknown extra fields', () => {
    const result = parseReport(JSON.stringify({ ...asJson(completedReport()), producedBy: 'a future minor version' }));
    expect(result.ok).toBe(true);
  });
});
