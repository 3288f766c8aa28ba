/**
 * The per-second timeline per operation: its counts add up to the overall second, its encoded
 * histograms decode to the second's samples, and merging them gives the run's histogram (what
 * series exports, comparisons and merges of several runs rely on).
 */
import { expect, test } from 'vitest';
import { Recorder, type Sample } from '../../src/load/metrics/recorder.js';
import { decodeHistogram, encodeHistogram, mergeHistograms } from '../../src/report/histogram.js';

function sample(operation: string, doneMs: number, latencyMs: number, status: number | undefined): Sample {
  return {
    operation,
    intendedMs: doneMs - latencyMs,
    sentMs: doneMs - latencyMs,
    doneMs,
    status,
    transportError: status === undefined ? 'refused' : undefined,
    body: undefined,
    checkFailed: false,
    warmup: false,
  };
}

test('each second of the timeline carries its operations, with counts and a mergeable histogram', () => {
  const recorder = new Recorder();
  recorder.startMeasuring(1000);
  // Second 0: 3 verifications (one a 500) and 1 limit; second 2: 2 limits (one refused).
  recorder.record(sample('keys.verifyKey', 1100, 2, 200));
  recorder.record(sample('keys.verifyKey', 1200, 4, 200));
  recorder.record(sample('keys.verifyKey', 1300, 8, 500));
  recorder.record(sample('ratelimit.limit', 1400, 1, 200));
  recorder.record(sample('ratelimit.limit', 3100, 16, 200));
  recorder.record(sample('ratelimit.limit', 3200, 1, undefined));
  const { timeline, operations } = recorder.finish(3000);

  expect(timeline.map((p) => p.second)).toEqual([0, 2]);
  for (const point of timeline) {
    const ops = point.operations ?? [];
    expect(ops.reduce((n, o) => n + o.requests, 0)).toBe(point.requests);
    expect(ops.reduce((n, o) => n + o.errors, 0)).toBe(point.errors);
  }
  const first = timeline[0]?.operations ?? [];
  expect(first.map((o) => [o.operation, o.requests, o.errors])).toEqual([
    ['keys.verifyKey', 3, 1],
    ['ratelimit.limit', 1, 0],
  ]);
  const verify0 = first[0];
  expect(verify0?.latency.count).toBe(3);
  expect(decodeHistogram(verify0?.histogram ?? '').totalCount).toBe(3);
  // The refused request has no latency: counted in the second, not in its histogram.
  const limit2 = timeline[1]?.operations?.[0];
  expect([limit2?.requests, limit2?.errors, limit2?.latency.count]).toEqual([2, 1, 1]);

  // Merging an operation's seconds gives exactly its whole-run corrected histogram.
  for (const stats of operations) {
    const seconds = timeline.flatMap((p) => (p.operations ?? []).filter((o) => o.operation === stats.operation));
    const merged = mergeHistograms(seconds.map((o) => decodeHistogram(o.histogram)));
    expect(encodeHistogram(merged)).toBe(stats.histograms.corrected);
  }
});

test('a second closed during the run lends its histograms to later seconds without leaking samples into them', () => {
  const recorder = new Recorder();
  recorder.startMeasuring(0);
  // Twelve seconds, each with its own latency (second s: s + 1 ms, five samples), so that the
  // seconds closed while the run goes on hand their histograms to the later ones.
  for (let second = 0; second < 12; second++) {
    for (let i = 0; i < 5; i++) recorder.record(sample('keys.verifyKey', second * 1000 + 100 + i * 100, second + 1, 200));
  }
  const { timeline, operations } = recorder.finish(12_000);
  expect(timeline.map((p) => p.second)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
  for (const point of timeline) {
    const expected = point.second + 1;
    expect([point.second, point.requests, point.p50Ms, point.p99Ms]).toEqual([point.second, 5, expected, expected]);
    const op = point.operations?.[0];
    expect([point.second, op?.latency.count, op?.latency.max, decodeHistogram(op?.histogram ?? '').totalCount]).toEqual([point.second, 5, expected, 5]);
  }
  // And the seconds still add up to the run.
  const merged = mergeHistograms(timeline.map((p) => decodeHistogram(p.operations?.[0]?.histogram ?? '')));
  expect(encodeHistogram(merged)).toBe(operations[0]?.histograms.corrected);
});

test("the progress line's p99 so far is the run's corrected p99, with one operation and with two", () => {
  const recorder = new Recorder();
  recorder.startMeasuring(0);
  for (let i = 1; i <= 100; i++) recorder.record(sample('keys.verifyKey', 10 * i, i, 200));
  // One operation: its histogram is read directly.
  const one = recorder.p99SoFarMs();
  expect(one).toBeCloseTo(99, 0);
  for (let i = 1; i <= 100; i++) recorder.record(sample('ratelimit.limit', 10 * i + 5, 200 + i, 200));
  // Two: their histograms are merged first; the slow half moves the p99 up.
  const two = recorder.p99SoFarMs();
  expect(two).toBeGreaterThan(290);
  expect(two).toBe(recorder.finish(2000).overall.latency.corrected.p99);
});
