/**
 * `--series` (per-second NDJSON) and the `.hgrm` files, from a report built by the real recorder
 * out of known samples: every line parses, the seconds and their figures agree with the samples,
 * and an `.hgrm` parsed back gives the report's percentiles and counts.
 */
import { describe, expect, it } from 'vitest';
import { Recorder } from '../../src/load/metrics/recorder.js';
import { type SeriesLine, renderSeries, seriesLines } from '../../src/report/series.js';
import { HGRM_SCALING_RATIO, hgrmFileName, hgrmFiles, renderHgrm } from '../../src/report/hgrm.js';
import { decodeHistogram, encodeHistogram, mergeHistograms } from '../../src/report/histogram.js';
import type { OperationStats, RunReport } from '../../src/report/model.js';
import { parseReport, renderJson } from '../../src/report/index.js';
import { minimalReport } from '../helpers/report-fixture.js';

/**
 * Three seconds and a half: verifyKey at 1 + i % 7 ms, ratelimit.limit at 20 + i % 13 ms (one in
 * 40 a 5xx), one verify timing out in second 1, and a 900 ms outlier in second 2.
 */
function recordedReport(): RunReport {
  const recorder = new Recorder();
  recorder.startMeasuring(0);
  const sample = (operation: string, doneMs: number, latencyMs: number, status: number | undefined) =>
    recorder.record({
      operation,
      intendedMs: doneMs - latencyMs,
      sentMs: doneMs - latencyMs,
      doneMs,
      status,
      transportError: status === undefined ? 'timeout' : undefined,
      body: undefined,
      checkFailed: false,
      warmup: false,
    });
  for (let i = 0; i < 350; i++) {
    const at = i * 10;
    sample('keys.verifyKey', at + 5, 1 + (i % 7), 200);
    if (i % 2 === 0) sample('ratelimit.limit', at + 6, 20 + (i % 13), i % 40 === 0 ? 503 : 200);
  }
  sample('keys.verifyKey', 1_500, 10_000, undefined);
  sample('keys.verifyKey', 2_500, 900, 200);
  const figures = recorder.finish(3_500);
  const base = minimalReport({ operations: [], measuredMs: 3_500 });
  return { ...base, ...figures, scenario: { name: 'series-test', description: '' } };
}

describe('--series: one NDJSON line per second', () => {
  const report = recordedReport();
  const text = renderSeries([{ report, run: '20260102T030405Z-series-test' }]);
  const lines = text.split('\n');

  it('one line per second of the timeline, each a JSON object, ending in a newline', () => {
    expect(lines.pop()).toBe('');
    expect(lines).toHaveLength(report.timeline.length);
    expect(report.timeline.map((p) => p.second)).toEqual([0, 1, 2, 3]);
    const parsed = lines.map((line) => JSON.parse(line) as SeriesLine);
    expect(parsed.map((l) => [l.run, l.scenario, l.second])).toEqual([0, 1, 2, 3].map((s) => ['20260102T030405Z-series-test', 'series-test', s]));
  });

  it('requests, rate and errors per second, overall and per operation, agree with the samples', () => {
    const parsed = seriesLines(report, 'r');
    const [s0, s1, s2, s3] = parsed;
    expect(s0?.requests).toBe(150);
    expect(s0?.operations?.['keys.verifyKey']?.requests).toBe(100);
    expect(s0?.operations?.['ratelimit.limit']?.requests).toBe(50);
    // Second 1 holds one timeout (an error without latency) and two 5xx (i = 120 and 160).
    expect(s1?.requests).toBe(151);
    expect(s1?.errors).toBe(3);
    expect(s1?.operations?.['keys.verifyKey']?.errors).toBe(1);
    expect(s1?.operations?.['keys.verifyKey']?.latencyMs.count).toBe(100);
    expect(s1?.operations?.['ratelimit.limit']?.errors).toBe(2);
    // The outlier shows in second 2's max, overall and for its operation.
    expect(s2?.latencyMs.max).toBeCloseTo(900, 0);
    expect(s2?.operations?.['keys.verifyKey']?.latencyMs.max).toBeCloseTo(900, 0);
    // The measured part ends half-way through second 3: its rate is over the half measured.
    expect(s3?.requests).toBe(75);
    expect(s3?.ratePerSec).toBe(150);
    expect(s0?.ratePerSec).toBe(150);
  });

  it('the all-operations percentiles are those of the merged histograms (p90, p99.9 and max included)', () => {
    for (const [line, point] of seriesLines(report, 'r').map((l, i) => [l, report.timeline[i]] as const)) {
      const merged = mergeHistograms((point?.operations ?? []).map((o) => decodeHistogram(o.histogram)));
      expect(line.latencyMs.count).toBe(merged.totalCount);
      // The same samples as the second's own histogram, to its precision (3 significant digits).
      expect(Math.abs((line.latencyMs.p50 ?? NaN) - (point?.p50Ms ?? NaN))).toBeLessThanOrEqual((point?.p50Ms ?? 0) * 0.001 + 0.001);
      expect(Math.abs((line.latencyMs.p99 ?? NaN) - (point?.p99Ms ?? NaN))).toBeLessThanOrEqual((point?.p99Ms ?? 0) * 0.001 + 0.001);
      expect(line.latencyMs.p90).toBeGreaterThanOrEqual(line.latencyMs.p50 ?? Infinity);
      expect(line.latencyMs.p999).toBeGreaterThanOrEqual(line.latencyMs.p99 ?? Infinity);
      expect(line.latencyMs.max).toBeGreaterThanOrEqual(line.latencyMs.p999 ?? Infinity);
    }
  });

  it('a report written before keysim kept per-operation seconds: p50 and p99 only, the rest null, no operations', () => {
    const old = { ...report, timeline: report.timeline.map(({ operations: _dropped, ...point }) => point) };
    const [line] = seriesLines(old, 'r');
    expect(line?.latencyMs).toEqual({
      p50: report.timeline[0]?.p50Ms,
      p90: null,
      p99: report.timeline[0]?.p99Ms,
      p999: null,
      max: null,
      mean: null,
      count: null,
    });
    expect(line).not.toHaveProperty('operations');
  });

  it('several runs in one file stay apart by run and scenario; a run with no seconds adds no line', () => {
    const empty = { ...report, timeline: [] };
    const text2 = renderSeries([
      { report, run: 'a' },
      { report: empty, run: 'b' },
      { report, run: 'c' },
    ]);
    const runs = text2
      .trimEnd()
      .split('\n')
      .map((l) => (JSON.parse(l) as SeriesLine).run);
    expect(runs).toEqual(['a', 'a', 'a', 'a', 'c', 'c', 'c', 'c']);
  });
});

/** Parses HdrHistogram percentile-distribution text: the rows and the footer. */
function parseHgrm(text: string): { rows: Array<{ value: number; percentile: number; totalCount: number }>; mean: number; max: number; totalCount: number } {
  const lines = text.split('\n');
  expect(lines[0]).toBe('       Value     Percentile TotalCount 1/(1-Percentile)');
  expect(lines[1]).toBe('');
  const rows: Array<{ value: number; percentile: number; totalCount: number }> = [];
  let i = 2;
  for (; i < lines.length && !(lines[i] ?? '').startsWith('#'); i++) {
    const line = lines[i] ?? '';
    // Value %12.3f, percentile %2.12f, count %10d, and 1/(1-p) %14.2f except on the 100 % line.
    const match = /^ *(\d+\.\d{3}) (\d\.\d{12}) +(\d+)(?: +(\d+\.\d{2}))?$/.exec(line);
    if (match === null) throw new Error(`not a percentile row: ${JSON.stringify(line)}`);
    const percentile = Number(match[2]);
    if (match[4] !== undefined) expect(Number(match[4])).toBeCloseTo(1 / (1 - percentile), 1);
    else expect(percentile).toBe(1);
    rows.push({ value: Number(match[1]), percentile, totalCount: Number(match[3]) });
  }
  const footer = lines.slice(i).join('\n');
  const mean = /#\[Mean {4}= +([\d.]+), StdDeviation {3}= +([\d.]+)\]/.exec(footer);
  const max = /#\[Max {5}= +([\d.]+), Total count {4}= +(\d+)\]/.exec(footer);
  expect(footer).toMatch(/#\[Buckets = +\d+, SubBuckets {5}= +\d+\]\n$/);
  if (mean === null || max === null) throw new Error(`no footer in ${footer}`);
  return { rows, mean: Number(mean[1]), max: Number(max[1]), totalCount: Number(max[2]) };
}

/** The value at percentile `p` from parsed rows: the first row at or above it, as HdrHistogram reads its own output. */
function valueAt(rows: ReadonlyArray<{ value: number; percentile: number }>, p: number): number {
  return (rows.find((r) => r.percentile * 100 >= p - 1e-9) ?? rows[rows.length - 1])?.value ?? NaN;
}

describe('.hgrm files', () => {
  const report = recordedReport();

  it("parsed back, each gives the report's count, max, mean and percentiles (ms, within the histogram's precision)", () => {
    for (const op of [report.overall, ...report.operations]) {
      const parsed = parseHgrm(renderHgrm(op.histograms.corrected));
      const p = op.latency.corrected;
      expect(parsed.totalCount).toBe(p.count);
      expect(parsed.rows[parsed.rows.length - 1]?.totalCount).toBe(p.count);
      expect(parsed.max).toBeCloseTo(p.max, 0);
      expect(parsed.mean).toBeCloseTo(p.mean, 1);
      for (const [percentile, expected] of [
        [50, p.p50],
        [90, p.p90],
        [99, p.p99],
      ] as const) {
        // Three significant digits: a bucket is at most 0.1 % wide.
        expect(Math.abs(valueAt(parsed.rows, percentile) - expected), `${op.operation} p${percentile}`).toBeLessThanOrEqual(expected * 0.002 + 0.002);
      }
      // Rows climb: percentiles and counts never go down.
      for (let i = 1; i < parsed.rows.length; i++) {
        expect(parsed.rows[i]?.percentile).toBeGreaterThanOrEqual(parsed.rows[i - 1]?.percentile ?? 0);
        expect(parsed.rows[i]?.totalCount).toBeGreaterThanOrEqual(parsed.rows[i - 1]?.totalCount ?? 0);
      }
    }
  });

  it('values are milliseconds: the recorded microseconds divided by the scaling ratio', () => {
    expect(HGRM_SCALING_RATIO).toBe(1000);
    const verify = report.operations.find((o) => o.operation === 'keys.verifyKey') as OperationStats;
    const parsed = parseHgrm(renderHgrm(verify.histograms.corrected));
    expect(parsed.rows[0]?.value).toBeCloseTo(1, 2);
    expect(parsed.max).toBeCloseTo(900, 0);
  });

  it('hgrmFiles: all and every operation, corrected and uncorrected in the open model, corrected only in the closed one; no file for an operation never answered', () => {
    const withSilent: OperationStats[] = [
      ...report.operations,
      {
        ...report.operations[0],
        operation: 'keys.getKey',
        requests: 2,
        latency: { corrected: { ...report.overall.latency.corrected, count: 0 }, uncorrected: { ...report.overall.latency.uncorrected, count: 0 } },
      } as OperationStats,
    ];
    expect(hgrmFiles(withSilent, report.overall, 'open').map((f) => f.name)).toEqual([
      'all.hgrm',
      'all.uncorrected.hgrm',
      'keys.verifyKey.hgrm',
      'keys.verifyKey.uncorrected.hgrm',
      'ratelimit.limit.hgrm',
      'ratelimit.limit.uncorrected.hgrm',
    ]);
    expect(hgrmFiles(report.operations, report.overall, 'closed').map((f) => f.name)).toEqual(['all.hgrm', 'keys.verifyKey.hgrm', 'ratelimit.limit.hgrm']);
    expect(hgrmFileName('a/b c..')).toBe('a_b_c...hgrm');
  });

  it("report.json's encoded histograms decode and merge into the all-operations figures (what another run or tool does)", () => {
    const parsed = parseReport(renderJson(report));
    if (!parsed.ok) throw new Error(parsed.error);
    const merged = mergeHistograms(parsed.report.operations.map((o) => decodeHistogram(o.histograms.corrected)));
    expect(merged.totalCount).toBe(parsed.report.overall.latency.corrected.count);
    expect(encodeHistogram(merged)).toBe(parsed.report.overall.histograms.corrected);
    // The seconds of one operation merge into its whole-run histogram.
    const seconds = mergeHistograms(
      parsed.report.timeline.flatMap((p) => (p.operations ?? []).filter((o) => o.operation === 'ratelimit.limit').map((o) => decodeHistogram(o.histogram))),
    );
    const whole = decodeHistogram(parsed.report.operations.find((o) => o.operation === 'ratelimit.limit')?.histograms.corrected ?? '');
    expect(seconds.totalCount).toBe(whole.totalCount);
    expect(seconds.maxValue).toBe(whole.maxValue);
  });
});
