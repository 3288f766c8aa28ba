/**
 * A run's measures as text (model-measures.ts): one line per measure for the terminal summary and
 * the JUnit properties, the cells of the Markdown and HTML tables. A measure is a figure shown
 * with its promise, never a verdict: checks, invariants and thresholds judge.
 */
import type { Measure } from './model.js';
import { formatFixed, formatMs } from './format.js';

/** A value in the measure's unit: `11.0 s` or `420 ms`, `7.0 %` of the limit, `12 credits`. */
export function measureValueText(m: Pick<Measure, 'unit'>, value: number): string {
  switch (m.unit) {
    case 'ms':
      // Lags are seconds long; a short one keeps its milliseconds.
      return value !== 0 && Math.abs(value) < 1000 ? formatMs(value) : `${formatFixed(value / 1000, 1)} s`;
    case 'share':
      return `${formatFixed(value * 100, 1)} %`;
    case 'credits':
      return `${formatFixed(value, Number.isInteger(value) ? 0 : 2)} credits`;
  }
}

/** The promise in the measure's unit, as a bound reads: `60 s`, `10.0 %`, `100 credits`. */
export function measurePromiseText(m: Measure): string | undefined {
  if (m.promise === undefined) return undefined;
  if (m.unit === 'ms' && m.promise % 1000 === 0) return `${m.promise / 1000} s`;
  return measureValueText(m, m.promise);
}

/** `3 samples`, `3 samples, 1 unknown`. */
export function measureSamplesText(m: Measure): string {
  const unknown = m.unknown === undefined ? '' : `, ${m.unknown} unknown`;
  return `${m.count} sample${m.count === 1 ? '' : 's'}${unknown}`;
}

/** `p50 0.0 s · p95 11.0 s · max 11.0 s`, or what is missing: no sample, percentiles not kept (a merge). */
export function measureFiguresText(m: Measure): string {
  if (m.count === 0) return 'no sample measured';
  const figures = (['p50', 'p95', 'max'] as const).flatMap((k) => (m[k] === undefined ? [] : [`${k} ${measureValueText(m, m[k])}`]));
  return figures.length === 3 ? figures.join(' · ') : `${figures.join(' · ')} (p50 and p95 not kept across segments)`;
}

/** One measure in a line: `lag.credits p50 0.0 s · p95 11.0 s · max 11.0 s — promise 60 s, 3 samples`. */
export function measureLine(m: Measure): string {
  const promise = measurePromiseText(m);
  return `${m.name} ${measureFiguresText(m)} — ${promise === undefined ? 'no promise' : `promise ${promise}`}, ${measureSamplesText(m)}`;
}

/** The columns of the measures' tables. */
export const MEASURE_COLUMNS = ['measure', 'p50', 'p95', 'max', 'promise', 'samples', 'unknown', 'from', 'what it measures'] as const;

/** One measure's cells, in MEASURE_COLUMNS' order; unescaped (the renderer escapes them). */
export function measureCells(m: Measure): string[] {
  const figure = (k: 'p50' | 'p95' | 'max') => (m[k] === undefined ? '–' : measureValueText(m, m[k]));
  return [
    m.name,
    figure('p50'),
    figure('p95'),
    figure('max'),
    measurePromiseText(m) ?? '–',
    String(m.count),
    String(m.unknown ?? 0),
    m.source === 'scenario' ? 'the scenario' : 'the history',
    m.title,
  ];
}

/** What every rendering says of the measures under their table. */
export const MEASURES_NOTE =
  'Figures measured against the promise set in force: they are shown, not judged — the checks, invariants and thresholds judge (a threshold can name a measure, e.g. p95(lag.credits) < 60s). Unknown: samples that could not be measured (an answer that never came).';
