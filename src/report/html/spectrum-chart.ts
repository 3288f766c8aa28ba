/**
 * The latency percentile spectrum chart (corrected and uncorrected curves). The x axis is log-scaled in "nines" as HdrHistogram plots it:
 * x = log10(1 / (1 - p)), so 0 → 0 %, 1 → 90 %, 2 → 99 %, 3 → 99.9 %. It runs to the first
 * decade past which the samples cannot resolve anything more (10^x ≥ count): beyond it every
 * percentile is the maximum.
 */
import { type OperationStats, type Percentiles } from '../model.js';
import { type Histogram, decodeHistogram } from '../histogram.js';
import { formatMs } from '../format.js';
import { type Box, esc, legend, linePath, linear, n, noData, plotWidth, svgOpen, truncate } from './svg.js';
import { perScale, plotBackground, yAxis, yScales } from './latency-axis.js';
import { type ChartThreshold, thresholdLines } from './threshold-lines.js';

export interface SpectrumPoint {
  /** Decades of nines. */
  x: number;
  ms: number;
}

export interface Spectrum {
  points: SpectrumPoint[];
  /** True when drawn from the summary percentiles because the histogram could not be read. */
  approximate: boolean;
}

export const SPECTRUM_STEPS_PER_DECADE = 8;

export function spectrumDecades(count: number): number {
  if (!Number.isFinite(count) || count <= 1) return 2;
  return Math.min(7, Math.max(2, Math.ceil(Math.log10(count) - 1e-9)));
}

export function decadeLabel(decade: number): string {
  if (decade === 0) return '0%';
  if (decade === 1) return '90%';
  return `99${decade > 2 ? `.${'9'.repeat(decade - 2)}` : ''}%`;
}

export function tryDecode(encoded: string): Histogram | undefined {
  if (encoded === '') return undefined;
  try {
    const histogram = decodeHistogram(encoded);
    return histogram.totalCount > 0 ? histogram : undefined;
  } catch {
    return undefined;
  }
}

export function spectrum(encoded: string, summary: Percentiles, decades: number): Spectrum {
  const histogram = tryDecode(encoded);
  if (histogram !== undefined) {
    const points: SpectrumPoint[] = [];
    for (let k = 0; k <= decades * SPECTRUM_STEPS_PER_DECADE; k++) {
      const x = k / SPECTRUM_STEPS_PER_DECADE;
      const percentile = 100 * (1 - 10 ** -x);
      points.push({ x, ms: histogram.getValueAtPercentile(percentile) / 1000 });
    }
    return { points, approximate: false };
  }
  if (!(summary.count > 0)) return { points: [], approximate: false };
  // No readable histogram: the summary percentiles still give the curve's outline.
  const points: SpectrumPoint[] = [
    { x: Math.log10(2), ms: summary.p50 },
    { x: 1, ms: summary.p90 },
    { x: 2, ms: summary.p99 },
  ];
  if (decades >= 3) points.push({ x: 3, ms: summary.p999 });
  points.push({ x: decades, ms: summary.max });
  return { points, approximate: true };
}

/**
 * The spectrum of one operation. In the closed model (`model: 'closed'`) there are no intended
 * send times: one curve, the latency from the actual send, never labelled corrected. The latency
 * axis is drawn log and linear (latency-axis.ts); `thresholds` (ms) are drawn as lines on it.
 */
export function spectrumChart(
  op: OperationStats,
  title: string,
  size: 'large' | 'small',
  model: 'open' | 'closed' = 'open',
  thresholds: readonly ChartThreshold[] = [],
): string {
  const box: Box =
    size === 'large'
      ? { width: 1000, height: 340, left: 64, right: 36, top: 36, bottom: 44 }
      : { width: 500, height: 276, left: 58, right: 30, top: 52, bottom: 40 };
  const count = Math.max(op.latency.corrected.count, op.latency.uncorrected.count, op.requests);
  const decades = spectrumDecades(count);
  const open = model === 'open';
  const corrected = open ? spectrum(op.histograms.corrected, op.latency.corrected, decades) : { points: [], approximate: false };
  const uncorrected = spectrum(op.histograms.uncorrected, op.latency.uncorrected, decades);
  const values = [...corrected.points.map((p) => p.ms), ...uncorrected.points.map((p) => p.ms), ...thresholds.map((t) => t.value)].filter((v) =>
    Number.isFinite(v),
  );
  const maxMs = Math.max(0, ...values);
  const scales = yScales(box, Math.min(...values.filter((v) => v > 0)), maxMs);
  const x = linear(0, decades, box.left, box.width - box.right);
  const label =
    `Latency percentile spectrum, ${title}: ` +
    (corrected.points.length === 0 && uncorrected.points.length === 0
      ? 'no samples'
      : open
        ? `corrected p99 ${formatMs(op.latency.corrected.p99)}, max ${formatMs(op.latency.corrected.max)}; ` +
          `uncorrected p99 ${formatMs(op.latency.uncorrected.p99)}, max ${formatMs(op.latency.uncorrected.max)}`
        : `latency from the actual send (closed model) p99 ${formatMs(op.latency.uncorrected.p99)}, max ${formatMs(op.latency.uncorrected.max)}`);
  let out = svgOpen(box, label, `spectrum ${size}`);
  out += `<text class="chart-title" x="${n(box.left)}" y="16">${esc(truncate(title, size === 'large' ? 60 : 54))}</text>`;
  out += plotBackground(box);
  for (let d = 0; d <= decades; d++) {
    out += `<path class="grid" d="M${n(x(d))} ${n(box.top)}V${n(box.height - box.bottom)}"/>`;
    out += `<text class="tick" x="${n(x(d))}" y="${n(box.height - box.bottom + 16)}" text-anchor="middle">${decadeLabel(d)}</text>`;
  }
  out += `<text class="axis-title" x="${n(box.left + plotWidth(box) / 2)}" y="${n(box.height - 6)}" text-anchor="middle">percentile</text>`;
  const curvesOf = (y: (ms: number) => number): string => {
    let drawn = '';
    // Uncorrected last: dashed on top, so both stay visible where the curves coincide.
    const curves = open
      ? ([
          [corrected, 'corrected', 'corrected'],
          [uncorrected, 'uncorrected', 'uncorrected'],
        ] as const)
      : ([[uncorrected, 'corrected', 'latency']] as const);
    for (const [curve, cls, name] of curves) {
      if (curve.points.length === 0) continue;
      const pts = curve.points.map((p) => ({ x: x(p.x), y: y(p.ms) }));
      drawn += `<path class="line ${cls}" d="${linePath(pts)}"><title>${name}</title></path>`;
      if (curve.approximate || pts.length === 1) {
        for (const p of pts) drawn += `<circle class="dot ${cls}" cx="${n(p.x)}" cy="${n(p.y)}" r="3"/>`;
      }
    }
    return drawn;
  };
  const empty = corrected.points.length === 0 && uncorrected.points.length === 0;
  out += perScale(scales, (scale) => {
    const y = scale.y;
    let body = yAxis(box, scale, 'latency (ms)');
    if (!empty) body += curvesOf(y);
    return body + thresholdLines(box, thresholds, y);
  });
  if (empty) out += noData(box, 'no samples');
  const approx = corrected.approximate || uncorrected.approximate ? ' (from summary percentiles)' : '';
  // Small charts: the legend gets its own row under the title, so long operation names fit.
  out += legend(
    size === 'large' ? box.width - box.right - 250 - approx.length * 6 : box.left,
    size === 'large' ? 16 : 36,
    open
      ? [
          { label: 'corrected', cls: 'corrected', kind: 'line' },
          { label: `uncorrected${approx}`, cls: 'uncorrected', kind: 'line' },
        ]
      : [{ label: `latency, from the actual send${approx}`, cls: 'corrected', kind: 'line' }],
  );
  return `${out}</svg>`;
}

/* ------------------------------------------------------------------------- timeline charts */
