/**
 * `keysim compare`: the figures of a baseline's runs against a candidate's, each change with a
 * confidence interval and a verdict (docs/compare.md). A pure function of the reports: the CLI
 * reads the files and prints.
 *
 * - Fewer than three runs on either side: the block bootstrap over per-second histograms
 *   (compare-bootstrap.ts), each side's replicates widened by the variation between runs its own
 *   parts show (compare-between.ts). Two runs on a side are pooled, second by second.
 * - Three or more runs on both sides: one figure per run, Mann–Whitney U over them, medians with
 *   order-statistic intervals, and the Hodges–Lehmann interval of the ratio (on log values).
 */
import type { OperationStats, RunReport } from './model.js';
import {
  ALL_OPERATIONS,
  COMPARE_DEFAULTS,
  COMPARISON_SCHEMA,
  COMPARISON_VERSION,
  type Comparison,
  type Figure,
  type FigureComparison,
  type RunRef,
  type SideFigure,
  type SpectrumCurve,
  figureExpression,
} from './compare-model.js';
import { type BootstrapResult, type BootstrapSide, type SideSample, bootstrapOperation, centralInterval } from './compare-bootstrap.js';
import { type BetweenSpread, shiftReplicates, sideSpread } from './compare-between.js';
import { hashString, mannWhitneyU, median, medianInterval, seededRandom, shiftInterval, verdictOf } from './compare-stats.js';
import { type Watch, checkWatches, defaultWatches } from './compare-watch.js';
import { decodeHistogram, mergeHistograms } from './histogram.js';
import { spectrumDecades } from './html/spectrum-chart.js';

/** Below this many seconds in a run, the bootstrap's intervals are flagged as rough. */
const SHORT_RUN_SECONDS = 10;

export interface CompareInput {
  /** Where the report came from (shown in the output). */
  source: string;
  report: RunReport;
}

export interface CompareOptions {
  /** Practical threshold, 0..1 (default 0.05). */
  noise?: number;
  seed?: number;
  resamples?: number;
  confidence?: number;
  /** Bootstrap block length, seconds (default ⌈√seconds⌉). */
  blockSeconds?: number;
  /** Default: p99 of every operation and the error share of all. */
  watches?: readonly Watch[];
  /**
   * One or two runs per side: widen the bootstrap by the between-run term (default true;
   * docs/compare.md#the-between-run-term). False gives the bootstrap of the runs' seconds alone.
   */
  betweenRuns?: boolean;
}

export type CompareResult = { ok: true; comparison: Comparison } | { ok: false; error: string };

const PERCENTILE_FIGURES: ReadonlyArray<{ figure: Figure; key: 'p50' | 'p90' | 'p99' | 'p999' }> = [
  { figure: 'p50', key: 'p50' },
  { figure: 'p90', key: 'p90' },
  { figure: 'p99', key: 'p99' },
  { figure: 'p999', key: 'p999' },
];

function runRef(input: CompareInput): RunRef {
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

const hasSeconds = (r: RunReport) => r.timeline.length > 0 && r.timeline.every((p) => p.operations !== undefined);

function opStats(report: RunReport, operation: string): OperationStats | undefined {
  return operation === ALL_OPERATIONS ? report.overall : report.operations.find((o) => o.operation === operation);
}

/** Errors of one operation in one run: from its seconds when recorded, else transport errors and 5xx. */
function errorShare(report: RunReport, operation: string): number {
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

function spectrumOf(reports: readonly RunReport[], operation: string): SpectrumCurve {
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

function shareNoise(noise: number, baseline: number): number {
  return Math.max(noise * baseline, COMPARE_DEFAULTS.minShareNoise);
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

/** Figures a generator that fell behind its schedule distorts: it delays sends, and the open model counts the delay. */
const GENERATOR_PACED: ReadonlySet<Figure> = new Set<Figure>(['p50', 'p90', 'p99', 'p999', 'throughput']);

/**
 * A run whose generator could not keep its schedule measured the generator as much as the service
 * (docs/compare.md#the-busy-machine): its latency and throughput can move with the machine's load
 * alone, so a "worse" or "better" on them is held back as inconclusive, with the reason. "Same"
 * stands (the change is small whatever caused it), and so do the error shares.
 */
function holdBackGeneratorLimited(figures: FigureComparison[], base: readonly RunReport[], cand: readonly RunReport[]): void {
  const limited = (reports: readonly RunReport[]) => reports.some((r) => r.generator?.limited === true);
  const sides = [limited(base) ? 'baseline' : '', limited(cand) ? 'candidate' : ''].filter((s) => s !== '');
  if (sides.length === 0) return;
  const who = sides.length > 1 ? 'on both sides' : `on the ${sides[0] ?? ''} side`;
  const note = `held back: the load generator could not keep its schedule ${who}, so the change may be the machine's, not the service's`;
  for (const f of figures) {
    if (!GENERATOR_PACED.has(f.figure)) continue;
    // Inconclusive by its interval too: more runs on the same machine would not settle it.
    if (f.verdict === 'inconclusive') f.limitedBy = 'generator';
    if (f.verdict !== 'worse' && f.verdict !== 'better') continue;
    f.verdict = 'inconclusive';
    f.limitedBy = 'generator';
    f.note = f.note === undefined ? note : `${f.note}; ${note}`;
  }
}

/** Compares the candidate's runs with the baseline's. An error names what is wrong with the inputs. */
export function compareRuns(baseline: readonly CompareInput[], candidate: readonly CompareInput[], options: CompareOptions = {}): CompareResult {
  const noise = options.noise ?? COMPARE_DEFAULTS.noise;
  const seed = options.seed ?? COMPARE_DEFAULTS.seed;
  const resamples = options.resamples ?? COMPARE_DEFAULTS.resamples;
  const confidence = options.confidence ?? COMPARE_DEFAULTS.confidence;
  const betweenRuns = options.betweenRuns ?? true;
  if (baseline.length === 0 || candidate.length === 0) return { ok: false, error: 'Give at least one baseline run and one candidate run.' };
  const all = [...baseline, ...candidate];
  const names = (i: CompareInput) => i.report.operations.filter((o) => o.requests > 0).map((o) => o.operation);
  const operations = [...new Set(all.flatMap(names))].sort();
  for (const input of all) {
    const own = new Set(names(input));
    const missing = operations.filter((o) => !own.has(o));
    if (missing.length > 0) {
      return {
        ok: false,
        error: `${input.source} has no requests of ${missing.join(', ')}, which the other runs have: compare runs of the same scenario (it ran ${input.report.scenario.name}).`,
      };
    }
  }
  if (operations.length === 0) return { ok: false, error: 'No operation has any request in these runs: nothing to compare.' };
  const compared = [...operations, ALL_OPERATIONS];
  const watches = options.watches ?? defaultWatches(compared);
  const badWatch = checkWatches(watches, compared);
  if (badWatch !== undefined) return { ok: false, error: badWatch };

  const method = baseline.length >= 3 && candidate.length >= 3 ? 'runs' : 'bootstrap';
  const base = baseline.map((i) => i.report);
  const cand = candidate.map((i) => i.report);
  const notes: string[] = [];
  const figures: FigureComparison[] = [];
  let blockSeconds: { baseline: number; candidate: number } | undefined;
  if (method === 'bootstrap') {
    const old = all.find((i) => !hasSeconds(i.report));
    if (old !== undefined) {
      return {
        ok: false,
        error:
          `${old.source} is too old for a comparison with fewer than three runs per side: it has no per-second histograms (keysim writes them since this version). ` +
          'Run it again with this keysim, or give three or more runs per side (--baseline a b c --candidate d e f), which are compared run by run.',
      };
    }
    for (const operation of compared) {
      const random = seededRandom((seed ^ hashString(operation)) >>> 0);
      const result = bootstrapOperation(base, cand, operation === ALL_OPERATIONS ? null : operation, {
        resamples,
        random,
        ...(options.blockSeconds === undefined ? {} : { blockSeconds: options.blockSeconds }),
      });
      blockSeconds ??= { baseline: result.baseline.blockSeconds, candidate: result.candidate.blockSeconds };
      if (betweenRuns) {
        // Drawn after the resamples from the same stream: with the term off, the resamples are as before.
        const widened = withBetweenRuns(result, random);
        figures.push(...bootstrapFigures(operation, widened.result, noise, confidence, widened.spread));
      } else {
        figures.push(...bootstrapFigures(operation, result, noise, confidence));
      }
    }
    figures.push(lateNotJudged(base, cand, noise));
    const shortest = Math.min(...all.map((i) => i.report.timeline.length));
    if (shortest < SHORT_RUN_SECONDS) {
      notes.push(
        `A run of ${shortest} s leaves few seconds to resample: the intervals are rough (a single stalled second moves them). Runs of 30 s or more, or three runs per side, give firmer verdicts.`,
      );
    }
    if (betweenRuns && Math.min(baseline.length, candidate.length) === 1) {
      notes.push(
        'One run per side: the variation between runs is estimated from how much each run drifted between its halves, which is a lower bound (a run cannot show what stays constant within it, such as how its code was compiled). Three or more runs per side, interleaved, measure it.',
      );
    }
    if (baseline.length === 2 || candidate.length === 2) {
      notes.push(
        betweenRuns
          ? 'Two runs on a side are pooled second by second; the variation between them widens the interval (one degree of freedom: a rough estimate). Three or more runs per side are compared run by run.'
          : 'Two runs on a side are pooled second by second: the interval reflects the variation within those runs, not between runs. Three or more runs per side are compared run by run.',
      );
    }
  } else {
    for (const operation of compared) figures.push(...runsFigures(operation, base, cand, noise, confidence));
    figures.push(runsFigure(ALL_OPERATIONS, 'late', 'share', base.map(lateShare), cand.map(lateShare), noise, confidence, true));
    const small = Math.min(baseline.length, candidate.length) < 6;
    if (small) {
      const level = figures[0]?.interval?.confidence;
      if (level !== undefined && level < confidence) {
        notes.push(
          `With ${baseline.length} and ${candidate.length} runs the intervals reach ${(level * 100).toFixed(1)} % confidence, not ${(confidence * 100).toFixed(0)} %: more runs give ${(confidence * 100).toFixed(0)} %.`,
        );
      }
    }
  }
  holdBackGeneratorLimited(figures, base, cand);
  const watchedNames = new Set(watches.map((w) => figureExpression(w.figure, w.operation)));
  for (const f of figures) f.watched = watchedNames.has(figureExpression(f.figure, f.operation));
  const worse = figures.filter((f) => f.watched && f.verdict === 'worse').map((f) => figureExpression(f.figure, f.operation));

  const scenarios = new Set(all.map((i) => i.report.scenario.name));
  if (scenarios.size > 1) notes.push(`The runs are of different scenarios (${[...scenarios].join(', ')}): the figures may differ for that reason alone.`);
  const settings = (r: RunReport) => `${r.settings.model} ${r.settings.model === 'open' ? `${r.settings.rate}/s` : `${r.settings.connections} connections`}`;
  const baseSettings = new Set(base.map(settings));
  const candSettings = new Set(cand.map(settings));
  if ([...candSettings].some((s) => !baseSettings.has(s)))
    notes.push(`The load differs: baseline ${[...baseSettings].join(', ')}, candidate ${[...candSettings].join(', ')}.`);
  for (const input of all) {
    if (input.report.generator?.limited === true)
      notes.push(`${input.source}: the load generator could not keep its schedule; its latency and throughput measure the generator as much as the service.`);
    if (input.report.status !== 'completed') notes.push(`${input.source}: the run was ${input.report.status}; its figures are partial.`);
  }
  return {
    ok: true,
    comparison: {
      schema: COMPARISON_SCHEMA,
      version: COMPARISON_VERSION,
      method,
      settings: {
        noise,
        confidence,
        seed,
        ...(method === 'bootstrap' ? { resamples, ...(blockSeconds === undefined ? {} : { blockSeconds }), betweenRuns } : {}),
      },
      baseline: baseline.map(runRef),
      candidate: candidate.map(runRef),
      operations: compared,
      figures,
      watched: [...watchedNames],
      worse,
      spectra: compared.map((operation) => ({ operation, baseline: spectrumOf(base, operation), candidate: spectrumOf(cand, operation) })),
      notes,
    },
  };
}
