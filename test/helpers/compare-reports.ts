/**
 * Hand-built run reports for the comparison tests: per-second latencies of each operation, recorded
 * into real HDR histograms (per second and whole-run), as keysim writes them.
 */
import { encodeHistogram, newHistogram, percentilesMs, recordMs } from '../../src/report/histogram.js';
import type { RunReport, TimelineOperation } from '../../src/report/model.js';
import { minimalReport } from './report-fixture.js';

/** operation → one array of latencies (ms) per second. */
export type SecondsByOperation = Record<string, number[][]>;

export function reportFromSeconds(byOperation: SecondsByOperation, errorsPerSecond = 0): RunReport {
  const ops = Object.entries(byOperation);
  const seconds = Math.max(...ops.map(([, s]) => s.length));
  const report = minimalReport({
    operations: ops.map(([operation, s]) => ({ operation, latenciesMs: s.flat() })),
    measuredMs: seconds * 1000,
  });
  report.timeline = Array.from({ length: seconds }, (_, second) => {
    const operations: TimelineOperation[] = ops.map(([operation, s]) => {
      const h = newHistogram();
      for (const ms of s[second] ?? []) recordMs(h, ms);
      return { operation, requests: (s[second] ?? []).length, errors: errorsPerSecond, latency: percentilesMs(h), histogram: encodeHistogram(h) };
    });
    const all = newHistogram();
    for (const [, s] of ops) for (const ms of s[second] ?? []) recordMs(all, ms);
    const p = percentilesMs(all);
    return { second, requests: p.count, errors: errorsPerSecond * ops.length, p50Ms: p.p50, p99Ms: p.p99, operations };
  });
  report.totals.errors = errorsPerSecond * ops.length * seconds;
  return report;
}

/** Lognormal-ish latencies (ms) from a seeded source: `perSecond` samples for each of `seconds` seconds. */
export function latencySeconds(random: () => number, seconds: number, perSecond: number, medianMs = 2): number[][] {
  return Array.from({ length: seconds }, () =>
    Array.from({ length: perSecond }, () => {
      // Box–Muller, σ = 0.5 in log space.
      const z = Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
      return medianMs * Math.exp(0.5 * z);
    }),
  );
}
