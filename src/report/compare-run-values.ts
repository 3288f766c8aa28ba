/**
 * What a comparison (compare.ts) reads from one run's report: an operation's statistics, its
 * error share, the share of late sends, the latency spectrum; and which figures it compares.
 */
import type { OperationStats, RunReport } from './model.js';
import { ALL_OPERATIONS, COMPARE_DEFAULTS, type Figure, type RunRef, type SpectrumCurve } from './compare-model.js';
import { decodeHistogram, mergeHistograms } from './histogram.js';
import { spectrumDecades } from './html/spectrum-chart.js';

export interface CompareInput {
  /** Where the report came from (shown in the output). */
  source: string;
  report: RunReport;
}

export const PERCENTILE_FIGURES: ReadonlyArray<{ figure: Figure; key: 'p50' | 'p90' | 'p99' | 'p999' }> = [
  { figure: 'p50', key: 'p50' },
  { figure: 'p90', key: 'p90' },
  { figure: 'p99', key: 'p99' },
  { figure: 'p999', key: 'p999' },
];

export function runRef(input: CompareInput): RunRef {
  const r = input.report;
  return {
    source: input.source,
    scenario: r.scenario.name,
    startedAt: r.startedAt,
    measuredMs: r.measuredMs,
    requests: r.totals.requests,
    generatorLimited: r.generator?.limited === true,
  };
}

export const hasSeconds = (r: RunReport) => r.timeline.length > 0 && r.timeline.every((p) => p.operations !== undefined);

export function opStats(report: RunReport, operation: string): OperationStats | undefined {
  return operation === ALL_OPERATIONS ? report.overall : report.operations.find((o) => o.operation === operation);
}

/** Errors of one operation in one run: from its seconds when recorded, else transport errors and 5xx. */
export function errorShare(report: RunReport, operation: string): number {
  if (operation === ALL_OPERATIONS) return report.totals.requests === 0 ? 0 : report.totals.errors / report.totals.requests;
  const op = opStats(report, operation);
  if (op === undefined || op.requests === 0) return 0;
  let errors = 0;
  if (hasSeconds(report)) {
    for (const p of report.timeline) for (const o of p.operations ?? []) if (o.operation === operation) errors += o.errors;
  } else {
    errors =
      Object.values(op.transportErrors).reduce((a, b) => a + b, 0) + Object.entries(op.statuses).reduce((a, [s, c]) => a + (Number(s) >= 500 ? c : 0), 0);
  }
  return errors / op.requests;
}

/** Share of the planned sends that started late (open model); 0 when nothing was scheduled. */
export function lateShare(report: RunReport): number {
  const scheduled = report.generator?.phases.reduce((a, p) => a + (p.scheduledSends ?? 0), 0) ?? 0;
  const planned = scheduled > 0 ? scheduled : report.totals.requests + report.totals.dropped;
  return planned === 0 ? 0 : report.totals.late / planned;
}

export function spectrumOf(reports: readonly RunReport[], operation: string): SpectrumCurve {
  const histograms = reports.flatMap((r) => {
    const op = opStats(r, operation);
    if (op === undefined || op.histograms.corrected === '') return [];
    try {
      return [decodeHistogram(op.histograms.corrected)];
    } catch {
      return [];
    }
  });
  const merged = mergeHistograms(histograms);
  if (merged.totalCount === 0) return { points: [] };
  const decades = spectrumDecades(merged.totalCount);
  const points: SpectrumCurve['points'] = [];
  for (let k = 0; k <= decades * 8; k++) {
    const x = k / 8;
    points.push({ x, ms: Math.min(merged.maxValue, merged.getValueAtPercentile(100 * (1 - 10 ** -x))) / 1000 });
  }
  return { points };
}

/** The smallest change of an error or late share that counts, at this practical threshold. */
export function shareNoise(noise: number, baseline: number): number {
  return Math.max(noise * baseline, COMPARE_DEFAULTS.minShareNoise);
}
