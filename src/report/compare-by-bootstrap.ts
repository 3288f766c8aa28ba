/**
 * The comparison of one or two runs per side (compare.ts): the block bootstrap over per-second
 * histograms (compare-bootstrap.ts), each side's replicates widened by the variation between runs
 * its own parts show (compare-between.ts). Two runs on a side are pooled, second by second.
 */
import type { RunReport } from './model.js';
import { ALL_OPERATIONS, type Figure, type FigureComparison, type SideFigure } from './compare-model.js';
import { type BootstrapResult, type BootstrapSide, type SideSample, bootstrapOperation, centralInterval } from './compare-bootstrap.js';
import { type BetweenSpread, shiftReplicates, sideSpread } from './compare-between.js';
import { hashString, median, seededRandom, verdictOf } from './compare-stats.js';
import { type CompareInput, PERCENTILE_FIGURES, hasSeconds, lateShare, shareNoise } from './compare-run-values.js';
import type { MethodResult, MethodSettings } from './compare-method.js';

/** Below this many seconds in a run, the bootstrap's intervals are flagged as rough. */
const SHORT_RUN_SECONDS = 10;

/** Fewer than three runs on a side: every figure of every operation by the block bootstrap over the runs' seconds. */
export function compareByBootstrap(
  baseline: readonly CompareInput[],
  candidate: readonly CompareInput[],
  compared: readonly string[],
  s: MethodSettings,
): MethodResult {
  const all = [...baseline, ...candidate];
  const old = all.find((i) => !hasSeconds(i.report));
  if (old !== undefined) {
    return {
      ok: false,
      error:
        `${old.source} is too old for a comparison with fewer than three runs per side: it has no per-second histograms (keysim writes them since this version). ` +
        'Run it again with this keysim, or give three or more runs per side (--baseline a b c --candidate d e f), which are compared run by run.',
    };
  }
  const base = baseline.map((i) => i.report);
  const cand = candidate.map((i) => i.report);
  const figures: FigureComparison[] = [];
  let blockSeconds: { baseline: number; candidate: number } | undefined;
  for (const operation of compared) {
    const random = seededRandom((s.seed ^ hashString(operation)) >>> 0);
    const result = bootstrapOperation(base, cand, operation === ALL_OPERATIONS ? null : operation, {
      resamples: s.resamples,
      random,
      ...(s.blockSeconds === undefined ? {} : { blockSeconds: s.blockSeconds }),
    });
    blockSeconds ??= { baseline: result.baseline.blockSeconds, candidate: result.candidate.blockSeconds };
    if (s.betweenRuns) {
      // Drawn after the resamples from the same stream: with the term off, the resamples are as before.
      const widened = withBetweenRuns(result, random);
      figures.push(...bootstrapFigures(operation, widened.result, s.noise, s.confidence, widened.spread));
    } else {
      figures.push(...bootstrapFigures(operation, result, s.noise, s.confidence));
    }
  }
  figures.push(lateNotJudged(base, cand, s.noise));
  const shortest = Math.min(...all.map((i) => i.report.timeline.length));
  return {
    ok: true,
    figures,
    notes: bootstrapNotes(baseline.length, candidate.length, shortest, s.betweenRuns),
    ...(blockSeconds === undefined ? {} : { blockSeconds }),
  };
}

/** What the reader of a bootstrap comparison should know about its intervals. */
function bootstrapNotes(baselineRuns: number, candidateRuns: number, shortest: number, betweenRuns: boolean): string[] {
  const notes: string[] = [];
  if (shortest < SHORT_RUN_SECONDS) {
    notes.push(
      `A run of ${shortest} s leaves few seconds to resample: the intervals are rough (a single stalled second moves them). Runs of 30 s or more, or three runs per side, give firmer verdicts.`,
    );
  }
  if (betweenRuns && Math.min(baselineRuns, candidateRuns) === 1) {
    notes.push(
      'One run per side: the variation between runs is estimated from how much each run drifted between its halves, which is a lower bound (a run cannot show what stays constant within it, such as how its code was compiled). Three or more runs per side, interleaved, measure it.',
    );
  }
  if (baselineRuns === 2 || candidateRuns === 2) {
    notes.push(
      betweenRuns
        ? 'Two runs on a side are pooled second by second; the variation between them widens the interval (one degree of freedom: a rough estimate). Three or more runs per side are compared run by run.'
        : 'Two runs on a side are pooled second by second: the interval reflects the variation within those runs, not between runs. Three or more runs per side are compared run by run.',
    );
  }
  return notes;
}

/** The figures' between-run spreads of both sides, and the replicates shifted by them (one draw per replicate from `random`). */
function withBetweenRuns(
  result: BootstrapResult,
  random: () => number,
): { result: BootstrapResult; spread: { baseline: BetweenSpread; candidate: BetweenSpread } } {
  const side = (s: BootstrapSide) => {
    const spread = sideSpread(s.parts, s.resamples, s.runs);
    return { side: { ...s, resamples: shiftReplicates(s.resamples, spread, random) }, spread };
  };
  const b = side(result.baseline);
  const c = side(result.candidate);
  return { result: { baseline: b.side, candidate: c.side }, spread: { baseline: b.spread, candidate: c.spread } };
}

/** Figures of one operation by the bootstrap (`spread`: the between-run term that widened it, when on). */
function bootstrapFigures(
  operation: string,
  result: BootstrapResult,
  noise: number,
  confidence: number,
  spread?: { baseline: BetweenSpread; candidate: BetweenSpread },
): FigureComparison[] {
  const b = result.baseline;
  const c = result.candidate;
  const side = (full: number, samples: number[]): SideFigure => {
    const ci = centralInterval(samples, confidence);
    return { value: full, low: ci?.low ?? Number.NaN, high: ci?.high ?? Number.NaN };
  };
  const figure = (
    name: Figure,
    unit: FigureComparison['unit'],
    pick: (s: SideSample) => number,
    kind: 'relative' | 'absolute',
    higherIsWorse: boolean,
  ): FigureComparison => {
    const fullB = pick(b.full);
    const fullC = pick(c.full);
    const changes = b.resamples.map((sb, i) => {
      const vb = pick(sb);
      const vc = pick(c.resamples[i] as SideSample);
      return kind === 'relative' ? (vb > 0 ? vc / vb - 1 : Number.NaN) : vc - vb;
    });
    const ci = centralInterval(changes, confidence);
    const threshold = kind === 'relative' ? noise : shareNoise(noise, fullB);
    const change = kind === 'relative' ? (fullB > 0 ? fullC / fullB - 1 : null) : fullC - fullB;
    return {
      operation,
      figure: name,
      unit,
      baseline: Number.isFinite(fullB) ? side(fullB, b.resamples.map(pick)) : null,
      candidate: Number.isFinite(fullC) ? side(fullC, c.resamples.map(pick)) : null,
      changeKind: kind,
      change: change !== null && Number.isFinite(change) ? change : null,
      interval: ci === null ? null : { ...ci, confidence },
      noise: threshold,
      verdict: ci === null ? 'inconclusive' : verdictOf(ci.low, ci.high, threshold, higherIsWorse),
      watched: false,
      ...(spread === undefined ? {} : { betweenRun: { baseline: pick(spread.baseline), candidate: pick(spread.candidate) } }),
    };
  };
  return [
    ...PERCENTILE_FIGURES.map(({ figure: name }, i) => figure(name, 'ms', (s) => s.percentilesMs[i] as number, 'relative', true)),
    figure('throughput', 'req/s', (s) => s.throughput, 'relative', false),
    figure('errors', 'share', (s) => s.errorShare, 'absolute', true),
  ];
}

/** Late sends with one run per side: shown, not judged (the report counts them per run, not per second). */
function lateNotJudged(base: readonly RunReport[], cand: readonly RunReport[], noise: number): FigureComparison {
  const pooled = (reports: readonly RunReport[]) => median(reports.map(lateShare));
  const b = pooled(base);
  const c = pooled(cand);
  return {
    operation: ALL_OPERATIONS,
    figure: 'late',
    unit: 'share',
    baseline: { value: b, low: Number.NaN, high: Number.NaN },
    candidate: { value: c, low: Number.NaN, high: Number.NaN },
    changeKind: 'absolute',
    change: c - b,
    interval: null,
    noise: shareNoise(noise, b),
    verdict: 'not-judged',
    watched: false,
    note: 'late sends are counted per run, not per second: judged only with three or more runs per side',
  };
}
