/**
 * Histograms are values (docs/architecture.md#conventions): they survive encoding, merge exactly, and their
 * percentiles stay consistent (never above the max). Latencies are in ms; buckets in µs.
 */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import {
  HISTOGRAM_HIGHEST_US,
  HISTOGRAM_LOWEST_US,
  type Histogram,
  decodeHistogram,
  encodeHistogram,
  mergeHistograms,
  newHistogram,
  percentileSpectrumMs,
  percentilesMs,
  recordMs,
} from '../../src/report/histogram.js';
import type { Percentiles } from '../../src/report/model.js';
import { assertProperty } from '../helpers/property.js';

/** Latencies from sub-microsecond to ten minutes, ms. */
const latencyMs = fc.double({ min: 0, max: 600_000, noNaN: true, noDefaultInfinity: true });
const samples = fc.array(latencyMs, { maxLength: 300 });
const PERCENTILES = [0, 1, 10, 25, 50, 75, 90, 99, 99.9, 99.99, 100] as const;

function histogramOf(values: readonly number[]): Histogram {
  const h = newHistogram();
  for (const ms of values) recordMs(h, ms);
  return h;
}

/**
 * Equal within the histogram's declared precision (3 significant digits): an encoded histogram
 * keeps its bucket counts, not the exact largest sample, so a decoded max is its bucket's top.
 */
function expectSamePercentiles(actual: Percentiles, expected: Percentiles): void {
  expect(actual.count).toBe(expected.count);
  for (const key of ['p50', 'p90', 'p95', 'p99', 'p999', 'max', 'mean'] as const) {
    const tolerance = Math.max(0.001, (expected[key] ?? 0) / 1000);
    expect(Math.abs((actual[key] ?? Number.NaN) - (expected[key] ?? Number.NaN)), `${key}: ${actual[key]} vs ${expected[key]}`).toBeLessThanOrEqual(tolerance);
  }
}

describe('encode / decode', () => {
  test('a round trip keeps the count, every bucket and the percentiles', () => {
    assertProperty(
      fc.property(samples, (values) => {
        const original = histogramOf(values);
        const encoded = encodeHistogram(original);
        expect(encoded).toMatch(/^[A-Za-z0-9+/=]+$/);
        const decoded = decodeHistogram(encoded);
        expect(decoded.totalCount).toBe(values.length);
        for (const p of PERCENTILES) expect(decoded.getValueAtPercentile(p)).toBe(original.getValueAtPercentile(p));
        expectSamePercentiles(percentilesMs(decoded), percentilesMs(original));
        // And encoding is stable: the decoded histogram encodes to the same bucket counts again.
        const again = decodeHistogram(encodeHistogram(decoded));
        expect(again.totalCount).toBe(values.length);
        for (const p of PERCENTILES) expect(again.getValueAtPercentile(p)).toBe(original.getValueAtPercentile(p));
      }),
      { numRuns: 60 },
    );
  });

  test('an empty histogram round-trips to an empty one', () => {
    const decoded = decodeHistogram(encodeHistogram(newHistogram()));
    expect(decoded.totalCount).toBe(0);
    expect(percentilesMs(decoded)).toEqual({ p50: 0, p90: 0, p95: 0, p99: 0, p999: 0, max: 0, mean: 0, count: 0 });
  });

  test('known samples: 1..1000 ms', () => {
    const h = histogramOf(Array.from({ length: 1000 }, (_, i) => i + 1));
    const p = percentilesMs(decodeHistogram(encodeHistogram(h)));
    expect(p.count).toBe(1000);
    expect(p.p50).toBeCloseTo(500, -1);
    expect(p.p99).toBeCloseTo(990, -1);
    expect(p.max).toBeGreaterThanOrEqual(1000);
    expect(p.max).toBeLessThanOrEqual(1001);
  });
});

describe('merge', () => {
  test('merging two histograms equals recording all samples in one', () => {
    assertProperty(
      fc.property(samples, samples, (a, b) => {
        const merged = mergeHistograms([histogramOf(a), histogramOf(b)]);
        const together = histogramOf([...a, ...b]);
        expect(merged.totalCount).toBe(a.length + b.length);
        for (const p of PERCENTILES) expect(merged.getValueAtPercentile(p)).toBe(together.getValueAtPercentile(p));
        expect(percentilesMs(merged)).toEqual(percentilesMs(together));
      }),
      { numRuns: 60 },
    );
  });

  test('merging decoded histograms (several workers, one report) equals recording all samples', () => {
    assertProperty(
      fc.property(fc.array(samples, { minLength: 1, maxLength: 4 }), (parts) => {
        const merged = mergeHistograms(parts.map((values) => decodeHistogram(encodeHistogram(histogramOf(values)))));
        const together = histogramOf(parts.flat());
        expect(merged.totalCount).toBe(parts.flat().length);
        for (const p of PERCENTILES) expect(merged.getValueAtPercentile(p)).toBe(together.getValueAtPercentile(p));
        expectSamePercentiles(percentilesMs(merged), percentilesMs(together));
      }),
      { numRuns: 40 },
    );
  });

  test('merging leaves its inputs unchanged and nothing gives an empty histogram', () => {
    const a = histogramOf([1, 2, 3]);
    mergeHistograms([a, histogramOf([100])]);
    expect(a.totalCount).toBe(3);
    expect(mergeHistograms([]).totalCount).toBe(0);
  });
});

describe('percentilesMs', () => {
  test('ordered p50 ≤ p90 ≤ p99 ≤ p999 ≤ max, and p999 is never above max', () => {
    assertProperty(
      fc.property(fc.array(latencyMs, { minLength: 1, maxLength: 300 }), (values) => {
        const p = percentilesMs(histogramOf(values));
        expect(p.count).toBe(values.length);
        expect(p.p50).toBeLessThanOrEqual(p.p90);
        expect(p.p90).toBeLessThanOrEqual(p.p99);
        expect(p.p99).toBeLessThanOrEqual(p.p999);
        expect(p.p999).toBeLessThanOrEqual(p.max);
        expect(p.mean).toBeLessThanOrEqual(p.max * (1 + 1e-3) + 0.001);
        // The max is the largest sample (clamped to ≥ 1 µs), to the reported precision (0.001 ms).
        const largest = Math.max(HISTOGRAM_LOWEST_US / 1000, ...values);
        expect(Math.abs(p.max - largest)).toBeLessThanOrEqual(0.0005 + 1e-9);
      }),
    );
  });

  test('a single sample: every percentile is that sample (not the top of its bucket)', () => {
    const p = percentilesMs(histogramOf([123.456]));
    expect(p).toEqual({ p50: 123.456, p90: 123.456, p95: 123.456, p99: 123.456, p999: 123.456, max: 123.456, mean: expect.any(Number) as number, count: 1 });
  });

  test('the spectrum rises to the max and ends at 100 %', () => {
    assertProperty(
      fc.property(fc.array(latencyMs, { minLength: 1, maxLength: 200 }), (values) => {
        const h = histogramOf(values);
        const points = percentileSpectrumMs(h);
        const max = percentilesMs(h).max;
        expect(points.at(-1)).toEqual({ percentile: 100, ms: max });
        for (const [i, point] of points.entries()) {
          expect(point.ms).toBeLessThanOrEqual(max);
          if (i > 0) expect(point.ms).toBeGreaterThanOrEqual((points[i - 1] as { ms: number }).ms);
        }
      }),
      { numRuns: 50 },
    );
    expect(percentileSpectrumMs(newHistogram())).toEqual([]);
  });
});

describe('recordMs', () => {
  test('clamps values below the declared range to 1 µs', () => {
    const h = newHistogram();
    for (const ms of [0, -1, -1e9, 0.0001, Number.NEGATIVE_INFINITY]) recordMs(h, ms);
    expect(h.totalCount).toBe(5);
    expect(h.minNonZeroValue).toBe(HISTOGRAM_LOWEST_US);
    expect(h.maxValue).toBe(HISTOGRAM_LOWEST_US);
    expect(percentilesMs(h).max).toBe(0.001);
  });

  test('clamps values above the declared range to one hour', () => {
    const h = newHistogram();
    for (const ms of [4_000_000, 1e15, Number.POSITIVE_INFINITY]) recordMs(h, ms);
    expect(h.totalCount).toBe(3);
    expect(h.maxValue).toBe(HISTOGRAM_HIGHEST_US);
    expect(percentilesMs(h).max).toBe(HISTOGRAM_HIGHEST_US / 1000);
  });

  test('records in-range values to the microsecond', () => {
    const h = newHistogram();
    recordMs(h, 1.2344);
    recordMs(h, 1.2346);
    expect(h.minNonZeroValue).toBe(1234);
    expect(h.maxValue).toBe(1235);
  });
});
