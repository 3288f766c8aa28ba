/**
 * A comparison as text: the terminal table and the Markdown fit to paste as a pull-request
 * comment (a summary line, a table of the figures that matter, the rest collapsed). Pure
 * functions of the {@link Comparison}.
 */
import { ALL_OPERATIONS, type Comparison, type FigureComparison } from './compare-model.js';
import { NOT_AVAILABLE, formatFixed, formatMs, formatRate } from './format.js';
import { escapeMarkdown, markdownTable } from './markdown-text.js';

const FIGURE_LABEL: Readonly<Record<FigureComparison['figure'], string>> = {
  p50: 'p50',
  p90: 'p90',
  p99: 'p99',
  p999: 'p99.9',
  throughput: 'throughput',
  errors: 'error share',
  late: 'late sends',
};

export function figureLabel(f: FigureComparison): string {
  return FIGURE_LABEL[f.figure];
}

export function operationLabel(operation: string): string {
  return operation === ALL_OPERATIONS ? 'all operations' : operation;
}

/** A side's value in its unit: `3.91 ms`, `498.7/s`, `0.52 %`. */
export function formatFigureValue(f: FigureComparison, value: number | undefined): string {
  if (value === undefined || !Number.isFinite(value)) return NOT_AVAILABLE;
  if (f.unit === 'ms') return formatMs(value);
  if (f.unit === 'req/s') return `${formatRate(value)}/s`;
  return `${formatFixed(value * 100, 2)} %`;
}

const signed = (x: number, decimals: number) => `${x > 0 ? '+' : ''}${formatFixed(x, decimals)}`;

/** `+20.1 %` (relative) or `+0.50 pp` (a difference of shares). */
export function formatChange(f: FigureComparison, change: number | null): string {
  if (change === null || !Number.isFinite(change)) return NOT_AVAILABLE;
  return f.changeKind === 'relative' ? `${signed(change * 100, 1)} %` : `${signed(change * 100, 2)} pp`;
}

/** `[+18.0, +22.3]` in the change's unit, or `—` without an interval. */
export function formatInterval(f: FigureComparison): string {
  if (f.interval === null) return '—';
  const d = f.changeKind === 'relative' ? 1 : 2;
  return `[${signed(f.interval.low * 100, d)}, ${signed(f.interval.high * 100, d)}]`;
}

/** The verdict of a figure a generator-limited run held back. */
export const GENERATOR_LIMITED_LABEL = 'inconclusive — the machine (the load generator) was the limit: run on a quieter machine or at a lower rate';

export function verdictLabel(f: FigureComparison): string {
  switch (f.verdict) {
    case 'worse':
      return 'WORSE';
    case 'better':
      return 'better';
    case 'same':
      return 'same';
    case 'inconclusive':
      // Where the load generator was the limit, more runs on the same machine would not help.
      return f.limitedBy === 'generator' ? GENERATOR_LIMITED_LABEL : 'inconclusive — collect more';
    default:
      return 'not judged';
  }
}

/** One sentence: the outcome for the watched figures. */
export function comparisonSummary(c: Comparison): string {
  const watched = c.figures.filter((f) => f.watched);
  if (c.worse.length > 0)
    return `WORSE: ${c.worse.join(', ')} (${c.worse.length} of ${watched.length} watched ${watched.length === 1 ? 'figure' : 'figures'}).`;
  const count = (v: string) => watched.filter((f) => f.verdict === v).length;
  const parts = [
    ['same', count('same')],
    ['better', count('better')],
    ['inconclusive', count('inconclusive')],
  ]
    .filter(([, n]) => (n as number) > 0)
    .map(([v, n]) => `${String(n)} ${String(v)}`);
  return `No watched figure is worse (${parts.join(', ') || 'none judged'}).`;
}

function methodLine(c: Comparison): string {
  const s = c.settings;
  const runs = `${c.baseline.length} baseline ${c.baseline.length === 1 ? 'run' : 'runs'} against ${c.candidate.length} candidate ${c.candidate.length === 1 ? 'run' : 'runs'}`;
  const noise = `noise ±${formatFixed(s.noise * 100, 1)} %`;
  if (c.method === 'bootstrap') {
    const block = s.blockSeconds === undefined ? '' : `, blocks of ${s.blockSeconds.baseline}/${s.blockSeconds.candidate} s`;
    const between = s.betweenRuns === true ? ', widened by the between-run term' : '';
    return `${runs}: block bootstrap over per-second histograms (${s.resamples ?? 0} resamples${block}, seed ${s.seed})${between}, ${formatFixed(s.confidence * 100, 0)} % intervals, ${noise}.`;
  }
  return `${runs}: run by run (Mann–Whitney U, medians with order-statistic intervals, Hodges–Lehmann interval of the ratio), ${noise}.`;
}

function rows(figures: readonly FigureComparison[]): string[][] {
  return figures.map((f) => [
    `${f.watched ? '* ' : ''}${operationLabel(f.operation)}`,
    figureLabel(f),
    formatFigureValue(f, f.baseline?.value),
    formatFigureValue(f, f.candidate?.value),
    formatChange(f, f.change),
    formatInterval(f),
    verdictLabel(f),
  ]);
}

const HEADER = ['operation', 'figure', 'baseline', 'candidate', 'change', 'interval', 'verdict'];

/** The plain-text table for a terminal: every figure, watched ones starred. */
export function renderCompareTable(c: Comparison): string {
  const body = rows(c.figures);
  const widths = HEADER.map((h, i) => Math.max(h.length, ...body.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, i) => (i >= 2 && i <= 5 ? cell.padStart(widths[i] ?? 0) : cell.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  const out = [comparisonSummary(c), methodLine(c), '', line(HEADER), line(widths.map((w) => '-'.repeat(w)))];
  let previous = '';
  for (const [i, r] of body.entries()) {
    const op = c.figures[i]?.operation ?? '';
    if (previous !== '' && op !== previous) out.push('');
    previous = op;
    out.push(line(r));
  }
  out.push('', "* watched (--watch). Interval: the change's confidence interval; relative (%) or in percentage points (pp) for shares.");
  for (const note of c.notes) out.push(`note: ${note}`);
  return `${out.join('\n')}\n`;
}

/**
 * Markdown for a pull-request comment: the summary line, a table of the watched figures and of any
 * other that changed (better or worse), then everything else inside a collapsed `<details>`.
 */
export function renderCompareMarkdown(c: Comparison): string {
  const esc = (cells: string[]) => cells.map((cell) => escapeMarkdown(cell));
  const mdRows = (figures: readonly FigureComparison[]) =>
    rows(figures).map((r, i) => {
      const cells = esc(r);
      const f = figures[i];
      if (f?.verdict === 'worse') cells[6] = `**${cells[6] ?? ''}** ❌`;
      if (f?.verdict === 'better') cells[6] = `${cells[6] ?? ''} ✅`;
      return cells;
    });
  const headline = c.figures.filter((f) => f.watched || f.verdict === 'worse' || f.verdict === 'better');
  const icon = c.worse.length > 0 ? '❌' : '✅';
  const out = [
    `### keysim compare: ${icon} ${escapeMarkdown(comparisonSummary(c))}`,
    '',
    escapeMarkdown(methodLine(c)),
    '',
    markdownTable(HEADER, mdRows(headline), 'llrrrrl'),
    '',
    '<details><summary>All figures</summary>',
    '',
    markdownTable(HEADER, mdRows(c.figures), 'llrrrrl'),
    '',
    '\\* watched. Interval: the confidence interval of the change, relative (%) or in percentage points (pp) for shares. ' +
      'A figure is worse only when its whole interval is beyond the noise threshold.',
    '',
    '</details>',
    '',
    '<details><summary>Runs</summary>',
    '',
    markdownTable(
      ['side', 'source', 'scenario', 'started', 'requests'],
      [...c.baseline.map((r) => ['baseline', r] as const), ...c.candidate.map((r) => ['candidate', r] as const)].map(([side, r]) =>
        esc([side, r.source, r.scenario, r.startedAt, String(r.requests)]),
      ),
      'llllr',
    ),
    '',
    '</details>',
  ];
  if (c.notes.length > 0) out.push('', ...c.notes.map((note) => `- ${escapeMarkdown(note)}`));
  return `${out.join('\n')}\n`;
}

/** The comparison as pretty JSON (NaN and infinities, which JSON lacks, as null). */
export function renderCompareJson(c: Comparison): string {
  return `${JSON.stringify(c, (_key, value: unknown) => (typeof value === 'number' && !Number.isFinite(value) ? null : value), 2)}\n`;
}
