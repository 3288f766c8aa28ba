/**
 * Latency histograms as values (docs/architecture.md#conventions): HDR histograms of microseconds with a
 * declared range (1 µs .. 1 hour) and precision (3 significant digits), so memory stays flat
 * whatever the number of requests, and histograms from several workers or runs merge exactly.
 */
import * as hdr from 'hdr-histogram-js';
import type { Percentiles } from './model.js';

export type Histogram = hdr.Histogram;

export const HISTOGRAM_LOWEST_US = 1;
export const HISTOGRAM_HIGHEST_US = 3_600_000_000;
export const HISTOGRAM_DIGITS = 3;

export function newHistogram(): Histogram {
  return hdr.build({
    lowestDiscernibleValue: HISTOGRAM_LOWEST_US,
    highestTrackableValue: HISTOGRAM_HIGHEST_US,
    numberOfSignificantValueDigits: HISTOGRAM_DIGITS,
    autoResize: false,
  });
}

/** Records a latency given in milliseconds (clamped into the declared range). */
export function recordMs(histogram: Histogram, ms: number): void {
  if (Number.isNaN(ms)) return;
  const us = Math.round(ms * 1000);
  histogram.recordValue(Math.min(HISTOGRAM_HIGHEST_US, Math.max(HISTOGRAM_LOWEST_US, us)));
}

export function encodeHistogram(histogram: Histogram): string {
  return hdr.encodeIntoCompressedBase64(histogram);
}

export function decodeHistogram(encoded: string): Histogram {
  return hdr.decodeFromCompressedBase64(encoded);
}

/** A new histogram holding the samples of all the given ones. */
export function mergeHistograms(histograms: Iterable<Histogram>): Histogram {
  const merged = newHistogram();
  for (const h of histograms) merged.add(h);
  return merged;
}

const round3 = (x: number) => Math.round(x * 1000) / 1000;

/** p50, p90, p95, p99, p99.9, max and mean in milliseconds; zeros for an empty histogram. */
export function percentilesMs(histogram: Histogram): Percentiles {
  const count = histogram.totalCount;
  if (count === 0) return { p50: 0, p90: 0, p95: 0, p99: 0, p999: 0, max: 0, mean: 0, count: 0 };
  // A percentile is reported as the top of its bucket, which can lie above the largest sample.
  const max = round3(histogram.maxValue / 1000);
  const at = (p: number) => Math.min(max, round3(histogram.getValueAtPercentile(p) / 1000));
  return { p50: at(50), p90: at(90), p95: at(95), p99: at(99), p999: at(99.9), max, mean: round3(histogram.mean / 1000), count };
}

/**
 * The percentile spectrum for charts: latency (ms) at percentiles 0, 50, 75, 87.5, … up to the
 * max, as HdrHistogram plots it (each step halves the distance to 100 %).
 */
export function percentileSpectrumMs(histogram: Histogram, steps = 24): Array<{ percentile: number; ms: number }> {
  if (histogram.totalCount === 0) return [];
  const points: Array<{ percentile: number; ms: number }> = [];
  for (let i = 0; i <= steps; i++) {
    const percentile = 100 * (1 - 1 / 2 ** i);
    points.push({ percentile, ms: Math.min(round3(histogram.maxValue / 1000), round3(histogram.getValueAtPercentile(percentile) / 1000)) });
  }
  points.push({ percentile: 100, ms: round3(histogram.maxValue / 1000) });
  return points;
}
