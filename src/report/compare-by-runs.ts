/**
 * The comparison of three or more runs on both sides (compare.ts): one figure per run, Mann–Whitney
 * U over them, medians with order-statistic intervals, and the Hodges–Lehmann interval of the
 * ratio (on log values).
 */
import type { OperationStats, RunReport } from './model.js';
import { ALL_OPERATIONS, type Figure, type FigureComparison, type SideFigure } from './compare-model.js';
import { mannWhitneyU, median, medianInterval, shiftInterval, verdictOf } from './compare-stats.js';
import { type CompareInput, PERCENTILE_FIGURES, errorShare, lateShare, opStats, shareNoise } from './compare-run-values.js';
import type { MethodResult, MethodSettings } from './compare-method.js';

/** Three or more runs on both sides: every figure of every operation from one value per run. */
export function compareByRuns(
  baseline: readonly CompareInput[],
  candidate: readonly CompareInput[],
  compared: readonly string[],
  s: MethodSettings,
): MethodResult {
  const base = baseline.map((i) => i.report);
  const cand = candidate.map((i) => i.report);
  const figures: FigureComparison[] = [];
  for (const operation of compared) figures.push(...runsFigures(operation, base, cand, s.noise, s.confidence));
  figures.push(runsFigure(ALL_OPERATIONS, 'late', 'share', base.map(lateShare), cand.map(lateShare), s.noise, s.confidence, true));
  const notes: string[] = [];
  const small = Math.min(baseline.length, candidate.length) < 6;
  if (small) {
    const level = figures[0]?.interval?.confidence;
    if (level !== undefined && level < s.confidence) {
      const wanted = (s.confidence * 100).toFixed(0);
      notes.push(
        `With ${baseline.length} and ${candidate.length} runs the intervals reach ${(level * 100).toFixed(1)} % confidence, not ${wanted} %: more runs give ${wanted} %.`,
      );
    }
  }
  return { ok: true, figures, notes };
}

/** One figure by the several-runs method, from one value per run. */
function runsFigure(
  operation: string,
  name: Figure,
  unit: FigureComparison['unit'],
  base: number[],
  cand: number[],
  noise: number,
  confidence: number,
  higherIsWorse: boolean,
): FigureComparison {
  const kind = unit === 'share' ? 'absolute' : 'relative';
  const side = (values: number[]): SideFigure => ({
    value: median(values),
    ...(({ low, high }) => ({ low, high }))(medianInterval(values, confidence)),
    runs: values,
  });
  const mb = median(base);
  const mc = median(cand);
  const p = mannWhitneyU(cand, base).p;
  let change: number | null;
  let interval: FigureComparison['interval'];
  let threshold: number;
  if (kind === 'relative') {
    threshold = noise;
    const positive = [...base, ...cand].every((v) => v > 0);
    change = mb > 0 ? mc / mb - 1 : null;
    const ci = positive ? shiftInterval(base.map(Math.log), cand.map(Math.log), confidence) : null;
    interval = ci === null ? null : { low: Math.exp(ci.low) - 1, high: Math.exp(ci.high) - 1, confidence: ci.confidence };
  } else {
    threshold = shareNoise(noise, mb);
    change = mc - mb;
    const ci = shiftInterval(base, cand, confidence);
    interval = { low: ci.low, high: ci.high, confidence: ci.confidence };
  }
  return {
    operation,
    figure: name,
    unit,
    baseline: side(base),
    candidate: side(cand),
    changeKind: kind,
    change,
    interval,
    noise: threshold,
    verdict: interval === null ? 'inconclusive' : verdictOf(interval.low, interval.high, threshold, higherIsWorse),
    p,
    watched: false,
  };
}

function runsFigures(operation: string, base: readonly RunReport[], cand: readonly RunReport[], noise: number, confidence: number): FigureComparison[] {
  const values = (reports: readonly RunReport[], pick: (op: OperationStats, r: RunReport) => number) =>
    reports.map((r) => pick(opStats(r, operation) as OperationStats, r));
  const figures = PERCENTILE_FIGURES.map(({ figure, key }) =>
    runsFigure(
      operation,
      figure,
      'ms',
      values(base, (op) => op.latency.corrected[key]),
      values(cand, (op) => op.latency.corrected[key]),
      noise,
      confidence,
      true,
    ),
  );
  figures.push(
    runsFigure(
      operation,
      'throughput',
      'req/s',
      values(base, (op) => op.ratePerSec),
      values(cand, (op) => op.ratePerSec),
      noise,
      confidence,
      false,
    ),
  );
  figures.push(
    runsFigure(
      operation,
      'errors',
      'share',
      values(base, (_, r) => errorShare(r, operation)),
      values(cand, (_, r) => errorShare(r, operation)),
      noise,
      confidence,
      true,
    ),
  );
  return figures;
}
