/**
 * `report.html`: one self-contained page — inline CSS, inline SVG charts drawn here at render
 * time, no scripts, no fonts or images to fetch (a Content-Security-Policy forbids any network
 * use). Every string from the report is untrusted and HTML-escaped; every coordinate goes through
 * one formatter that turns a non-finite number into 0, so empty runs draw empty charts, not NaN.
 */
import { type CheckResult, type OperationStats, type Percentiles, type RunReport, TRANSPORT_ERROR_KINDS, type ThresholdResult, type TimelinePoint } from './model.js';
import { type Histogram, decodeHistogram } from './histogram.js';
import {
  formatBytes,
  formatCount,
  formatDuration,
  formatFixed,
  formatMs,
  formatMsValue,
  formatPercent,
  formatRate,
  formatValue,
  sortedCounts,
  sumCounts,
  unionKeys,
} from './format.js';


/** Escapes text for HTML content and quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => {
    switch (ch) {
      case '&':
        return '&amp;';
      case '<':
        return '&lt;';
      case '>':
        return '&gt;';
      case '"':
        return '&quot;';
      default:
        return '&#39;';
    }
  });
}

const esc = escapeHtml;

/** An SVG coordinate: one decimal, never NaN, Infinity or `-0`. */
function n(x: number): string {
  if (!Number.isFinite(x)) return '0';
  const rounded = Math.round(x * 10) / 10;
  return rounded === 0 ? '0' : String(rounded);
}

/** Shortens a label for a fixed-width slot (the full text stays in a `<title>`). */
function truncate(text: string, maxChars: number): string {
  const chars = Array.from(text); // code points: never split a surrogate pair
  return chars.length <= maxChars ? text : `${chars.slice(0, Math.max(1, maxChars - 1)).join('')}…`;
}

/** Maps [d0, d1] onto [r0, r1]; a zero-width domain maps everything to r0. */
function linear(d0: number, d1: number, r0: number, r1: number): (v: number) => number {
  const span = d1 - d0;
  return (v) => (span === 0 || !Number.isFinite(span) || !Number.isFinite(v) ? r0 : r0 + ((v - d0) / span) * (r1 - r0));
}

/** Round axis ticks from 0 to a "nice" maximum covering `max` (1, 2 or 5 × 10^k steps). */
function niceTicks(max: number, count = 5, minStep = 0): { max: number; ticks: number[]; decimals: number } {
  const top = Number.isFinite(max) && max > 0 ? max : 1;
  const raw = Math.max(top / count, minStep);
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const step = ([1, 2, 2.5, 5, 10].find((m) => m * magnitude >= raw) ?? 10) * magnitude;
  const steps = Math.max(1, Math.ceil(top / step - 1e-9));
  const decimals = Math.max(0, -Math.floor(Math.log10(step) + 1e-9) + (step / magnitude === 2.5 ? 1 : 0));
  const ticks: number[] = [];
  for (let i = 0; i <= steps; i++) ticks.push(Number((i * step).toFixed(decimals)));
  return { max: steps * step, ticks, decimals };
}

function axisLabel(value: number, decimals: number): string {
  return formatFixed(value, decimals);
}

interface Box {
  width: number;
  height: number;
  left: number;
  right: number;
  top: number;
  bottom: number;
}

const plotWidth = (b: Box) => b.width - b.left - b.right;
const plotHeight = (b: Box) => b.height - b.top - b.bottom;

/** Opens an accessible chart: role="img", an aria-label and a `<title>`. */
function svgOpen(box: Box, label: string, cls: string): string {
  return (
    `<svg class="chart ${cls}" role="img" aria-label="${esc(label)}" viewBox="0 0 ${box.width} ${box.height}" ` +
    `width="${box.width}" height="${box.height}" preserveAspectRatio="xMidYMid meet" xmlns="http://www.w3.org/2000/svg">` +
    `<title>${esc(label)}</title>`
  );
}

function noData(box: Box, message: string): string {
  const x = box.left + plotWidth(box) / 2;
  const y = box.top + plotHeight(box) / 2;
  return `<text class="no-data" x="${n(x)}" y="${n(y)}" text-anchor="middle" dominant-baseline="middle">${esc(message)}</text>`;
}

/** Plot background, horizontal grid with y labels, and axis titles. */
function yGrid(box: Box, ticks: number[], decimals: number, y: (v: number) => number, yTitle: string): string {
  const x0 = box.left;
  const x1 = box.width - box.right;
  let out = `<rect class="plot-bg" x="${n(x0)}" y="${n(box.top)}" width="${n(plotWidth(box))}" height="${n(plotHeight(box))}"/>`;
  for (const t of ticks) {
    out += `<path class="grid" d="M${n(x0)} ${n(y(t))}H${n(x1)}"/>`;
    out += `<text class="tick" x="${n(x0 - 6)}" y="${n(y(t))}" text-anchor="end" dominant-baseline="middle">${esc(axisLabel(t, decimals))}</text>`;
  }
  out += `<text class="axis-title" transform="translate(${n(14)} ${n(box.top + plotHeight(box) / 2)}) rotate(-90)" text-anchor="middle">${esc(yTitle)}</text>`;
  return out;
}

function legend(x: number, y: number, items: ReadonlyArray<{ label: string; cls: string; kind: 'line' | 'box' }>): string {
  let out = '';
  let cx = x;
  for (const item of items) {
    out +=
      item.kind === 'line'
        ? `<path class="swatch line ${item.cls}" d="M${n(cx)} ${n(y)}h22"/>`
        : `<rect class="swatch ${item.cls}" x="${n(cx + 4)}" y="${n(y - 6)}" width="14" height="12" rx="2"/>`;
    out += `<text class="legend" x="${n(cx + 28)}" y="${n(y)}" dominant-baseline="middle">${esc(item.label)}</text>`;
    cx += 40 + item.label.length * 7;
  }
  return out;
}

/* ---------------------------------------------------------------------------------------------
 * Latency percentile spectrum. The x axis is log-scaled in "nines" as HdrHistogram plots it:
 * x = log10(1 / (1 - p)), so 0 → 0 %, 1 → 90 %, 2 → 99 %, 3 → 99.9 %. It runs to the first
 * decade past which the samples cannot resolve anything more (10^x ≥ count): beyond it every
 * percentile is the maximum.
 * ------------------------------------------------------------------------------------------- */

interface SpectrumPoint {
  /** Decades of nines. */
  x: number;
  ms: number;
}

interface Spectrum {
  points: SpectrumPoint[];
  /** True when drawn from the summary percentiles because the histogram could not be read. */
  approximate: boolean;
}

const SPECTRUM_STEPS_PER_DECADE = 8;

function spectrumDecades(count: number): number {
  if (!Number.isFinite(count) || count <= 1) return 2;
  return Math.min(7, Math.max(2, Math.ceil(Math.log10(count) - 1e-9)));
}

function decadeLabel(decade: number): string {
  if (decade === 0) return '0%';
  if (decade === 1) return '90%';
  return `99${decade > 2 ? `.${'9'.repeat(decade - 2)}` : ''}%`;
}

function tryDecode(encoded: string): Histogram | undefined {
  if (encoded === '') return undefined;
  try {
    const histogram = decodeHistogram(encoded);
    return histogram.totalCount > 0 ? histogram : undefined;
  } catch {
    return undefined;
  }
}

function spectrum(encoded: string, summary: Percentiles, decades: number): Spectrum {
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

function linePath(points: ReadonlyArray<{ x: number; y: number }>): string {
  return points.map((p, i) => `${i === 0 ? 'M' : 'L'}${n(p.x)} ${n(p.y)}`).join('');
}

function spectrumChart(op: OperationStats, title: string, size: 'large' | 'small'): string {
  const box: Box =
    size === 'large'
      ? { width: 1000, height: 340, left: 64, right: 36, top: 36, bottom: 44 }
      : { width: 500, height: 276, left: 58, right: 30, top: 52, bottom: 40 };
  const count = Math.max(op.latency.corrected.count, op.latency.uncorrected.count, op.requests);
  const decades = spectrumDecades(count);
  const corrected = spectrum(op.histograms.corrected, op.latency.corrected, decades);
  const uncorrected = spectrum(op.histograms.uncorrected, op.latency.uncorrected, decades);
  const maxMs = Math.max(0, ...corrected.points.map((p) => p.ms), ...uncorrected.points.map((p) => p.ms));
  const yAxis = niceTicks(maxMs);
  const x = linear(0, decades, box.left, box.width - box.right);
  const y = linear(0, yAxis.max, box.height - box.bottom, box.top);
  const label =
    `Latency percentile spectrum, ${title}: ` +
    (corrected.points.length === 0 && uncorrected.points.length === 0
      ? 'no samples'
      : `corrected p99 ${formatMs(op.latency.corrected.p99)}, max ${formatMs(op.latency.corrected.max)}; ` +
        `uncorrected p99 ${formatMs(op.latency.uncorrected.p99)}, max ${formatMs(op.latency.uncorrected.max)}`);
  let out = svgOpen(box, label, `spectrum ${size}`);
  out += `<text class="chart-title" x="${n(box.left)}" y="16">${esc(truncate(title, size === 'large' ? 60 : 54))}</text>`;
  out += yGrid(box, yAxis.ticks, yAxis.decimals, y, 'latency (ms)');
  for (let d = 0; d <= decades; d++) {
    out += `<path class="grid" d="M${n(x(d))} ${n(box.top)}V${n(box.height - box.bottom)}"/>`;
    out += `<text class="tick" x="${n(x(d))}" y="${n(box.height - box.bottom + 16)}" text-anchor="middle">${decadeLabel(d)}</text>`;
  }
  out += `<text class="axis-title" x="${n(box.left + plotWidth(box) / 2)}" y="${n(box.height - 6)}" text-anchor="middle">percentile</text>`;
  if (corrected.points.length === 0 && uncorrected.points.length === 0) {
    out += noData(box, 'no samples');
  } else {
    // Uncorrected last: dashed on top, so both stay visible where the curves coincide.
    for (const [curve, cls] of [
      [corrected, 'corrected'],
      [uncorrected, 'uncorrected'],
    ] as const) {
      if (curve.points.length === 0) continue;
      const pts = curve.points.map((p) => ({ x: x(p.x), y: y(p.ms) }));
      out += `<path class="line ${cls}" d="${linePath(pts)}"><title>${cls}</title></path>`;
      if (curve.approximate || pts.length === 1) {
        for (const p of pts) out += `<circle class="dot ${cls}" cx="${n(p.x)}" cy="${n(p.y)}" r="3"/>`;
      }
    }
  }
  const approx = corrected.approximate || uncorrected.approximate ? ' (from summary percentiles)' : '';
  // Small charts: the legend gets its own row under the title, so long operation names fit.
  out += legend(size === 'large' ? box.width - box.right - 250 - approx.length * 6 : box.left, size === 'large' ? 16 : 36, [
    { label: 'corrected', cls: 'corrected', kind: 'line' },
    { label: `uncorrected${approx}`, cls: 'uncorrected', kind: 'line' },
  ]);
  return `${out}</svg>`;
}

/* ------------------------------------------------------------------------- timeline charts */

/** x ticks over `seconds`: seconds for short runs, minutes for long ones. */
function timeTicks(seconds: number): Array<{ at: number; label: string }> {
  if (seconds < 300) {
    const t = niceTicks(seconds, 6, 1);
    return t.ticks.filter((s) => s <= seconds + 1e-9).map((s) => ({ at: s, label: `${axisLabel(s, t.decimals)} s` }));
  }
  const t = niceTicks(seconds / 60, 6);
  return t.ticks.filter((m) => m * 60 <= seconds + 1e-9).map((m) => ({ at: m * 60, label: `${axisLabel(m, t.decimals)} min` }));
}

function timelineSpan(report: RunReport): number {
  const last = report.timeline.reduce((max, p) => (Number.isFinite(p.second) ? Math.max(max, p.second + 1) : max), 0);
  const measured = Number.isFinite(report.measuredMs) ? Math.ceil(report.measuredMs / 1000) : 0;
  return Math.max(1, last, measured);
}

function timeAxis(box: Box, span: number, x: (s: number) => number): string {
  let out = '';
  for (const t of timeTicks(span)) {
    out += `<path class="tick-mark" d="M${n(x(t.at))} ${n(box.height - box.bottom)}v4"/>`;
    out += `<text class="tick" x="${n(x(t.at))}" y="${n(box.height - box.bottom + 16)}" text-anchor="middle">${esc(t.label)}</text>`;
  }
  out += `<text class="axis-title" x="${n(box.left + plotWidth(box) / 2)}" y="${n(box.height - 6)}" text-anchor="middle">time since the measured part began</text>`;
  return out;
}

const TIMELINE_BOX: Box = { width: 1000, height: 250, left: 64, right: 36, top: 36, bottom: 44 };
/** Above this many seconds the bars would be thinner than a pixel: draw an area instead. */
const MAX_BARS = 300;

function throughputChart(report: RunReport): string {
  const box = TIMELINE_BOX;
  const points = report.timeline.filter((p) => Number.isFinite(p.second));
  const span = timelineSpan(report);
  const intended = report.settings.model === 'open' && Number.isFinite(report.settings.rate) && report.settings.rate > 0 ? report.settings.rate : 0;
  const peak = points.reduce((max, p) => Math.max(max, Number.isFinite(p.requests) ? p.requests : 0), 0);
  const yAxis = niceTicks(Math.max(peak, intended));
  const x = linear(0, span, box.left, box.width - box.right);
  const y = linear(0, yAxis.max, box.height - box.bottom, box.top);
  const label =
    points.length === 0
      ? 'Throughput per second: no data'
      : `Throughput per second over ${formatCount(span)} s: peak ${formatCount(peak)} requests/s, ${formatCount(points.reduce((s, p) => s + p.errors, 0))} errors`;
  let out = svgOpen(box, label, 'throughput');
  out += `<text class="chart-title" x="${n(box.left)}" y="16">Throughput (requests/s)</text>`;
  out += yGrid(box, yAxis.ticks, yAxis.decimals, y, 'requests/s');
  out += timeAxis(box, span, x);
  if (points.length === 0) {
    out += noData(box, 'no per-second data');
  } else if (points.length <= MAX_BARS) {
    for (const p of points) {
      const x0 = x(p.second);
      const w = Math.max(0.5, x(p.second + 1) - x0 - Math.min(2, (x(p.second + 1) - x0) * 0.15));
      const errors = Math.min(p.requests, p.errors);
      const yTop = y(p.requests);
      // A single error in hundreds of requests must still show: at least 1.5 units tall.
      const yErr = errors > 0 ? Math.min(y(errors), y(0) - 1.5) : y(0);
      const tip = `${formatCount(p.second)} s: ${formatCount(p.requests)} requests, ${formatCount(p.errors)} errors`;
      out += `<rect class="bar requests" x="${n(x0)}" y="${n(yTop)}" width="${n(w)}" height="${n(y(0) - yTop)}"><title>${esc(tip)}</title></rect>`;
      if (errors > 0) out += `<rect class="bar errors" x="${n(x0)}" y="${n(yErr)}" width="${n(w)}" height="${n(y(0) - yErr)}"/>`;
    }
  } else {
    const area = (value: (p: TimelinePoint) => number) =>
      `M${n(x(points[0]?.second ?? 0))} ${n(y(0))}` +
      points.map((p) => `L${n(x(p.second))} ${n(y(value(p)))}L${n(x(p.second + 1))} ${n(y(value(p)))}`).join('') +
      `L${n(x((points[points.length - 1]?.second ?? 0) + 1))} ${n(y(0))}Z`;
    out += `<path class="bar requests" d="${area((p) => p.requests)}"/>`;
    out += `<path class="bar errors" d="${area((p) => Math.min(p.requests, p.errors))}"/>`;
  }
  if (intended > 0) {
    out += `<path class="line target" d="M${n(box.left)} ${n(y(intended))}H${n(box.width - box.right)}"/>`;
  }
  const items: Array<{ label: string; cls: string; kind: 'line' | 'box' }> = [
    { label: 'requests', cls: 'bar requests', kind: 'box' },
    { label: 'errors', cls: 'bar errors', kind: 'box' },
  ];
  if (intended > 0) items.push({ label: `intended ${formatRate(intended)}/s`, cls: 'target', kind: 'line' });
  out += legend(box.width - box.right - 330, 16, items);
  return `${out}</svg>`;
}

function latencyOverTimeChart(report: RunReport): string {
  const box = TIMELINE_BOX;
  const points = report.timeline.filter((p) => Number.isFinite(p.second));
  const span = timelineSpan(report);
  const peak = points.reduce((max, p) => Math.max(max, Number.isFinite(p.p99Ms) ? p.p99Ms : 0, Number.isFinite(p.p50Ms) ? p.p50Ms : 0), 0);
  const yAxis = niceTicks(peak);
  const x = linear(0, span, box.left, box.width - box.right);
  const y = linear(0, yAxis.max, box.height - box.bottom, box.top);
  const label =
    points.length === 0 ? 'Latency over time: no data' : `p99 and p50 latency per second (corrected): highest p99 ${formatMs(peak)}`;
  let out = svgOpen(box, label, 'latency-over-time');
  out += `<text class="chart-title" x="${n(box.left)}" y="16">Latency per second (corrected, ms)</text>`;
  out += yGrid(box, yAxis.ticks, yAxis.decimals, y, 'latency (ms)');
  out += timeAxis(box, span, x);
  if (points.length === 0) {
    out += noData(box, 'no per-second data');
  } else {
    for (const [cls, value] of [
      ['p50', (p: TimelinePoint) => p.p50Ms],
      ['p99', (p: TimelinePoint) => p.p99Ms],
    ] as const) {
      const pts = points.map((p) => ({ x: x(p.second + 0.5), y: y(value(p)) }));
      out += `<path class="line ${cls}" d="${linePath(pts)}"/>`;
      if (points.length <= 60) {
        points.forEach((p, i) => {
          const at = pts[i];
          if (at === undefined) return;
          out += `<circle class="dot ${cls}" cx="${n(at.x)}" cy="${n(at.y)}" r="${points.length === 1 ? 4 : 2.5}"><title>${esc(`${formatCount(p.second)} s: ${cls} ${formatMs(value(p))}`)}</title></circle>`;
        });
      }
    }
  }
  out += legend(box.width - box.right - 150, 16, [
    { label: 'p99', cls: 'p99', kind: 'line' },
    { label: 'p50', cls: 'p50', kind: 'line' },
  ]);
  return `${out}</svg>`;
}

/* ----------------------------------------------------------------------- outcome breakdown */

type Tone = 'ok' | 'warn' | 'error' | 'neutral';

interface OutcomeRow {
  label: string;
  count: number;
  tone: Tone;
}

interface OutcomeSection {
  title: string;
  rows: OutcomeRow[];
  /** Denominator for the percentages. */
  total: number;
}

function statusTone(status: string): Tone {
  const code = Number(status);
  if (!Number.isInteger(code)) return 'neutral';
  if (code >= 200 && code < 300) return 'ok';
  if (code >= 500) return 'error';
  if (code >= 400) return 'warn';
  return 'neutral';
}

function outcomeSections(op: OperationStats): OutcomeSection[] {
  const sections: OutcomeSection[] = [];
  const statuses = sortedCounts(op.statuses).filter(([, c]) => c > 0);
  const transport = TRANSPORT_ERROR_KINDS.filter((k) => op.transportErrors[k] > 0);
  const answeredOrFailed = sumCounts(op.statuses) + TRANSPORT_ERROR_KINDS.reduce((s, k) => s + (Number.isFinite(op.transportErrors[k]) ? op.transportErrors[k] : 0), 0);
  if (statuses.length > 0 || transport.length > 0) {
    sections.push({
      title: 'HTTP status / transport error',
      total: Math.max(answeredOrFailed, op.requests),
      rows: [
        ...statuses.map(([status, count]): OutcomeRow => ({ label: `HTTP ${status}`, count, tone: statusTone(status) })),
        ...transport.map((kind): OutcomeRow => ({ label: `${kind} (transport)`, count: op.transportErrors[kind], tone: 'error' })),
      ],
    });
  }
  const codes = sortedCounts(op.codes)
    .filter(([, c]) => c > 0)
    .sort((a, b) => b[1] - a[1]);
  if (codes.length > 0) {
    sections.push({
      title: 'Verification code',
      total: sumCounts(op.codes),
      rows: codes.map(([code, count]): OutcomeRow => ({ label: code, count, tone: code === 'VALID' ? 'ok' : 'warn' })),
    });
  }
  const { allowed, denied } = op.ratelimit;
  if (allowed + denied > 0) {
    sections.push({
      title: 'Rate limit',
      total: allowed + denied,
      rows: [
        { label: 'allowed', count: allowed, tone: 'ok' },
        { label: 'denied', count: denied, tone: 'warn' },
      ],
    });
  }
  return sections;
}

function outcomeChart(report: RunReport): string {
  const sections = outcomeSections(report.overall);
  const rowHeight = 22;
  const titleHeight = 28;
  const rows = sections.reduce((s, sec) => s + sec.rows.length, 0);
  const sectionGap = 12;
  const height = Math.max(120, 20 + sections.length * (titleHeight + sectionGap) - sectionGap + rows * rowHeight + 10);
  const box: Box = { width: 1000, height, left: 200, right: 170, top: 10, bottom: 10 };
  const label =
    sections.length === 0
      ? 'Outcome breakdown: no outcomes recorded'
      : `Outcome breakdown, all operations: ${sections
          .map((s) => `${s.title}: ${s.rows.map((r) => `${r.label} ${formatCount(r.count)}`).join(', ')}`)
          .join('; ')}`;
  let out = svgOpen(box, label, 'outcomes');
  if (sections.length === 0) {
    out += `<rect class="track" x="${n(box.left)}" y="${n(box.top)}" width="${n(plotWidth(box))}" height="${n(plotHeight(box))}" rx="4"/>`;
    out += noData(box, 'no requests were answered');
    return `${out}</svg>`;
  }
  const barX = linear(0, 1, box.left, box.width - box.right);
  let yPos = box.top + 10;
  sections.forEach((section, si) => {
    if (si > 0) yPos += sectionGap;
    out += `<text class="section-title" x="16" y="${n(yPos + 12)}">${esc(section.title)}</text>`;
    yPos += titleHeight;
    for (const row of section.rows) {
      const share = section.total > 0 ? Math.min(1, row.count / section.total) : 0;
      const w = barX(share) - box.left;
      const mid = yPos + rowHeight / 2 - 2;
      out += `<text class="tick" x="${n(box.left - 8)}" y="${n(mid)}" text-anchor="end" dominant-baseline="middle">${esc(truncate(row.label, 26))}<title>${esc(row.label)}</title></text>`;
      out += `<rect class="track" x="${n(box.left)}" y="${n(yPos + 2)}" width="${n(plotWidth(box))}" height="${n(rowHeight - 8)}" rx="3"/>`;
      out += `<rect class="bar tone-${row.tone}" x="${n(box.left)}" y="${n(yPos + 2)}" width="${n(Math.max(share > 0 ? 1.5 : 0, w))}" height="${n(rowHeight - 8)}" rx="3"><title>${esc(`${row.label}: ${formatCount(row.count)} (${formatPercent(row.count, section.total)})`)}</title></rect>`;
      out += `<text class="value" x="${n(box.width - box.right + 8)}" y="${n(mid)}" dominant-baseline="middle">${esc(`${formatCount(row.count)} (${formatPercent(row.count, section.total)})`)}</text>`;
      yPos += rowHeight;
    }
  });
  return `${out}</svg>`;
}

/* ------------------------------------------------------------------- thresholds and checks */

function verdictChart(thresholds: readonly ThresholdResult[], checks: readonly CheckResult[]): string {
  const box: Box = { width: 1000, height: 116, left: 110, right: 190, top: 12, bottom: 12 };
  const groups: Array<{ title: string; items: Array<{ passed: boolean; name: string; label: string }> }> = [
    { title: 'Thresholds', items: thresholds.map((t) => ({ passed: t.passed, name: t.expression, label: `${t.expression}: ${t.passed ? 'passed' : 'FAILED'} (actual ${t.actual === null ? 'no data' : formatValue(t.actual)})` })) },
    { title: 'Checks', items: checks.map((c) => ({ passed: c.passed, name: c.name, label: `${c.name}: ${c.passed ? 'passed' : 'FAILED'}` })) },
  ];
  const summary = groups
    .map((g) => (g.items.length === 0 ? `${g.title}: none` : `${g.title}: ${g.items.filter((i) => i.passed).length} of ${g.items.length} passed`))
    .join('; ');
  let out = svgOpen(box, summary, 'verdicts');
  const width = plotWidth(box);
  groups.forEach((group, gi) => {
    const yTop = box.top + 8 + gi * 48;
    const h = 26;
    out += `<text class="section-title" x="16" y="${n(yTop + h / 2)}" dominant-baseline="middle">${group.title}</text>`;
    if (group.items.length === 0) {
      out += `<rect class="track" x="${n(box.left)}" y="${n(yTop)}" width="${n(width)}" height="${h}" rx="4"/>`;
      out += `<text class="no-data" x="${n(box.left + width / 2)}" y="${n(yTop + h / 2)}" text-anchor="middle" dominant-baseline="middle">none defined</text>`;
      out += `<text class="value" x="${n(box.width - box.right + 10)}" y="${n(yTop + h / 2)}" dominant-baseline="middle">—</text>`;
      return;
    }
    const gap = group.items.length > 40 ? 0.5 : 3;
    const segment = width / group.items.length;
    group.items.forEach((item, i) => {
      const x = box.left + i * segment;
      out += `<rect class="segment ${item.passed ? 'tone-ok' : 'tone-error'}" x="${n(x)}" y="${n(yTop)}" width="${n(Math.max(0.5, segment - gap))}" height="${h}" rx="3"><title>${esc(item.label)}</title></rect>`;
      if (segment >= 26) {
        const text = segment >= 80 ? `${item.passed ? '✓' : '✗'} ${truncate(item.name, Math.floor((segment - gap - 28) / 7))}` : item.passed ? '✓' : '✗';
        out += `<text class="segment-mark" x="${n(x + (segment - gap) / 2)}" y="${n(yTop + h / 2)}" text-anchor="middle" dominant-baseline="central">${esc(text)}</text>`;
      }
    });
    const passed = group.items.filter((i) => i.passed).length;
    const failed = group.items.length - passed;
    out += `<text class="value ${failed > 0 ? 'failed' : 'passed'}" x="${n(box.width - box.right + 10)}" y="${n(yTop + h / 2)}" dominant-baseline="middle">${passed}/${group.items.length} passed${failed > 0 ? ` · ${failed} failed` : ''}</text>`;
  });
  return `${out}</svg>`;
}

/* ------------------------------------------------------------------------------- tables */

function td(text: string, cls = ''): string {
  return `<td${cls === '' ? '' : ` class="${cls}"`}>${text}</td>`;
}

function latencyTable(report: RunReport): string {
  const cols = (p: Percentiles) => [p.p50, p.p90, p.p99, p.p999, p.max, p.mean].map((v) => td(p.count > 0 ? formatMsValue(v) : '—', 'num')).join('');
  const row = (name: string, op: OperationStats, cls = '') =>
    `<tr${cls === '' ? '' : ` class="${cls}"`}><th scope="row">${name}</th>${td(formatCount(op.requests), 'num')}${td(formatRate(op.ratePerSec), 'num')}` +
    `${cols(op.latency.corrected)}${cols(op.latency.uncorrected).replace(/class="num"/g, 'class="num uncorr"')}</tr>`;
  const pcts = ['p50', 'p90', 'p99', 'p99.9', 'max', 'mean'].map((p) => `<th scope="col" class="num">${p}</th>`).join('');
  return (
    `<div class="table-wrap"><table class="latency"><caption>Latency by operation, ms — corrected (from the intended send time) beside uncorrected (from the actual send)</caption>` +
    `<thead><tr><th rowspan="2" scope="col">Operation</th><th rowspan="2" scope="col" class="num">Requests</th><th rowspan="2" scope="col" class="num">req/s</th>` +
    `<th colspan="6" scope="colgroup" class="group corrected-head">corrected</th><th colspan="6" scope="colgroup" class="group uncorrected-head">uncorrected</th></tr>` +
    `<tr>${pcts}${pcts}</tr></thead><tbody>` +
    report.operations.map((op) => row(esc(op.operation), op)).join('') +
    `</tbody><tfoot>${row('all operations', report.overall, 'total')}</tfoot></table></div>`
  );
}

function countsTable(
  caption: string,
  ops: readonly OperationStats[],
  pick: (op: OperationStats) => Record<string, number>,
  order?: readonly string[],
): string {
  const used = ops.filter((op) => sumCounts(pick(op)) > 0);
  if (used.length === 0) return '';
  const keys = order ?? unionKeys(used.map(pick));
  const head = keys.map((k) => `<th scope="col" class="num">${esc(k)}</th>`).join('');
  const body = used
    .map((op) => {
      const counts = new Map(sortedCounts(pick(op)));
      return `<tr><th scope="row">${esc(op.operation)}</th>${keys.map((k) => td(formatCount(counts.get(k) ?? 0), 'num')).join('')}</tr>`;
    })
    .join('');
  return `<div class="table-wrap"><table><caption>${esc(caption)}</caption><thead><tr><th scope="col">Operation</th>${head}</tr></thead><tbody>${body}</tbody></table></div>`;
}

function outcomeTables(report: RunReport): string {
  const tables = [
    countsTable('HTTP statuses by operation', report.operations, (op) => op.statuses),
    countsTable('Verification codes by operation', report.operations, (op) => op.codes),
    countsTable('Rate-limit decisions by operation', report.operations, (op) => ({ allowed: op.ratelimit.allowed, denied: op.ratelimit.denied }), ['allowed', 'denied']),
    countsTable('Transport errors by operation', report.operations, (op) => ({ ...op.transportErrors }), TRANSPORT_ERROR_KINDS),
    countsTable("Responses failing the scenario's check", report.operations, (op) => ({ responses: op.checkFailures })),
  ].filter((t) => t !== '');
  return tables.length === 0 ? '<p class="muted">No outcomes recorded.</p>' : tables.join('');
}

function verdictTables(report: RunReport): string {
  const badge = (passed: boolean) => `<span class="badge ${passed ? 'pass' : 'fail'}">${passed ? '✓ passed' : '✗ failed'}</span>`;
  const thresholds =
    report.thresholds.length === 0
      ? '<p class="muted">No thresholds defined.</p>'
      : `<div class="table-wrap"><table><caption>Thresholds</caption><thead><tr><th scope="col">Result</th><th scope="col">Threshold</th><th scope="col" class="num">Actual</th><th scope="col">Detail</th></tr></thead><tbody>` +
        report.thresholds
          .map((t) => `<tr class="${t.passed ? 'pass' : 'fail'}">${td(badge(t.passed))}${td(`<code>${esc(t.expression)}</code>`)}${td(t.actual === null ? 'no data' : esc(formatValue(t.actual)), 'num')}${td(esc(t.detail))}</tr>`)
          .join('') +
        `</tbody></table></div>`;
  const checks =
    report.checks.length === 0
      ? '<p class="muted">No checks were run.</p>'
      : `<div class="table-wrap"><table><caption>Checks</caption><thead><tr><th scope="col">Result</th><th scope="col">Check</th><th scope="col">Detail</th></tr></thead><tbody>` +
        report.checks.map((c) => `<tr class="${c.passed ? 'pass' : 'fail'}">${td(badge(c.passed))}${td(esc(c.name))}${td(esc(c.detail))}</tr>`).join('') +
        `</tbody></table></div>`;
  return thresholds + checks;
}

function timelineTable(report: RunReport): string {
  if (report.timeline.length === 0) return '<p class="muted">No per-second data.</p>';
  const rows = report.timeline
    .map((p) => `<tr>${td(formatCount(p.second), 'num')}${td(formatCount(p.requests), 'num')}${td(formatCount(p.errors), 'num')}${td(formatMsValue(p.p50Ms), 'num')}${td(formatMsValue(p.p99Ms), 'num')}</tr>`)
    .join('');
  return (
    `<details><summary>Per-second figures (${formatCount(report.timeline.length)} ${report.timeline.length === 1 ? 'row' : 'rows'})</summary><div class="table-wrap"><table><caption>Per second of the measured part</caption>` +
    `<thead><tr><th scope="col" class="num">Second</th><th scope="col" class="num">Requests</th><th scope="col" class="num">Errors</th><th scope="col" class="num">p50 (ms)</th><th scope="col" class="num">p99 (ms)</th></tr></thead>` +
    `<tbody>${rows}</tbody></table></div></details>`
  );
}

function phasesTable(report: RunReport): string {
  if (report.phases.length === 0) return '<p class="muted">No phases ran.</p>';
  const rows = report.phases
    .map(
      (p) =>
        `<tr><th scope="row">${esc(p.name)}</th>${td(`+${esc(formatDuration(p.startMs))}`, 'num')}${td(esc(formatDuration(p.durationMs)), 'num')}` +
        `${td(report.settings.model === 'open' ? `${formatRate(p.rate)} req/s` : `${formatCount(p.rate)} conn.`, 'num')}${td(p.warmup ? 'warm-up' : 'measured')}` +
        `${td(p.serviceClockFrom === undefined && p.serviceClockTo === undefined ? '—' : `${esc(p.serviceClockFrom ?? '?')} → ${esc(p.serviceClockTo ?? '?')}`)}</tr>`,
    )
    .join('');
  return (
    `<div class="table-wrap"><table><caption class="sr-only">Phases</caption><thead><tr><th scope="col">Phase</th><th scope="col" class="num">Start</th><th scope="col" class="num">Duration</th>` +
    `<th scope="col" class="num">Rate</th><th scope="col">Kind</th><th scope="col">Service clock</th></tr></thead><tbody>${rows}</tbody></table></div>`
  );
}

/* --------------------------------------------------------------------------------- page */

function statusBanner(report: RunReport): string {
  if (report.status === 'interrupted') {
    return (
      `<div class="banner interrupted" role="alert"><strong>Interrupted.</strong> The run was stopped before its end: the figures cover only the ` +
      `${esc(formatDuration(report.measuredMs))} that were measured, and ${esc(formatCount(report.totals.dropped))} planned sends were never made.</div>`
    );
  }
  if (report.status === 'failed') {
    return `<div class="banner failed" role="alert"><strong>Failed.</strong> The run could not go on; the figures are partial or empty. See the notes.</div>`;
  }
  return '';
}

/** Red badges beside the status when thresholds or checks failed: a completed run can still be a failing one. */
function verdictBadges(report: RunReport): string {
  const thresholds = report.thresholds.filter((t) => !t.passed).length;
  const checks = report.checks.filter((c) => !c.passed).length;
  let out = '';
  if (thresholds > 0) out += `<span class="status failed">${thresholds} ${thresholds === 1 ? 'threshold' : 'thresholds'} failed</span>`;
  if (checks > 0) out += `<span class="status failed">${checks} ${checks === 1 ? 'check' : 'checks'} failed</span>`;
  return out;
}

function card(label: string, value: string, detail: string, tone: Tone | '' = ''): string {
  return `<div class="card${tone === '' ? '' : ` tone-${tone}`}"><div class="card-label">${esc(label)}</div><div class="card-value">${esc(value)}</div><div class="card-detail">${esc(detail)}</div></div>`;
}

function summaryCards(report: RunReport): string {
  const t = report.totals;
  const failedThresholds = report.thresholds.filter((x) => !x.passed).length;
  const failedChecks = report.checks.filter((x) => !x.passed).length;
  const planned = t.requests + t.dropped;
  return (
    `<div class="cards">` +
    card('Requests', formatCount(t.requests), `${formatRate(t.ratePerSec)} req/s`) +
    card('Errors', formatCount(t.errors), formatPercent(t.errors, t.requests), t.errors > 0 ? 'warn' : '') +
    (report.overall.latency.corrected.count > 0
      ? card('p99 corrected', formatMs(report.overall.latency.corrected.p99), `uncorrected ${formatMs(report.overall.latency.uncorrected.p99)}`)
      : card('p99 corrected', '—', 'no samples')) +
    card('Late sends', formatCount(t.late), `> ${formatValue(t.lateThresholdMs)} ms late · ${formatPercent(t.late, planned)}`, t.late > 0 ? 'warn' : '') +
    card('Dropped sends', formatCount(t.dropped), `never sent · ${formatPercent(t.dropped, planned)}`, t.dropped > 0 ? 'warn' : '') +
    card(
      'Thresholds',
      report.thresholds.length === 0 ? 'none' : `${report.thresholds.length - failedThresholds}/${report.thresholds.length}`,
      report.thresholds.length === 0 ? 'defined' : failedThresholds === 0 ? 'all passed' : `${failedThresholds} failed`,
      report.thresholds.length === 0 ? '' : failedThresholds === 0 ? 'ok' : 'error',
    ) +
    card(
      'Checks',
      report.checks.length === 0 ? 'none' : `${report.checks.length - failedChecks}/${report.checks.length}`,
      report.checks.length === 0 ? 'run' : failedChecks === 0 ? 'all passed' : `${failedChecks} failed`,
      report.checks.length === 0 ? '' : failedChecks === 0 ? 'ok' : 'error',
    ) +
    `</div>`
  );
}

function detailsList(report: RunReport): string {
  const s = report.settings;
  const env = report.environment;
  const items: Array<[string, string]> = [
    ['Seed', String(report.seed)],
    ['Target', `${report.target.kind} · ${report.target.url}`],
    ['Load model', s.model === 'open' ? `open · ${formatRate(s.rate)} req/s intended` : 'closed'],
    ['Connections', `${formatCount(s.connections)} · pipelining ${formatCount(s.pipelining)} · timeout ${formatDuration(s.timeoutMs)}`],
    ['Duration', `${formatDuration(report.measuredMs)} measured (planned ${formatDuration(s.durationMs)} + ${formatDuration(s.warmupMs)} warm-up)`],
    ['Started', report.startedAt],
    ['Finished', report.finishedAt],
    ['Environment', `keysim ${env.keysimVersion} · Node ${env.node} · ${env.platform}/${env.arch} · ${formatCount(env.cpus)} × ${env.cpuModel} · ${formatBytes(env.totalMemoryBytes)}`],
  ];
  return `<dl class="details">${items.map(([k, v]) => `<dt>${esc(k)}</dt><dd>${esc(v)}</dd>`).join('')}</dl>`;
}

const CSS = `
:root{--bg:#f8fafc;--panel:#fff;--fg:#0f172a;--muted:#475569;--line:#e2e8f0;--grid:#e5e7eb;--plot:#fbfdff;
--corrected:#2563eb;--uncorrected:#ea580c;--p50:#0891b2;--p99:#7c3aed;--req:#60a5fa;--ok:#16a34a;--warn:#d97706;--error:#dc2626;--neutral:#64748b;--track:#f1f5f9}
@media (prefers-color-scheme:dark){:root{--bg:#0b1120;--panel:#111827;--fg:#e5e7eb;--muted:#94a3b8;--line:#1f2937;--grid:#243042;--plot:#0f172a;--track:#1e293b;--req:#3b82f6}}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);font:14px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif}
main{max-width:1120px;margin:0 auto;padding:24px 20px 48px}
h1{font-size:24px;margin:0 0 4px;word-break:break-word}
h2{font-size:18px;margin:32px 0 12px;padding-bottom:6px;border-bottom:1px solid var(--line)}
h3{font-size:15px;margin:20px 0 8px}
p{margin:6px 0}
.muted,.description{color:var(--muted)}
.status{display:inline-block;padding:2px 10px;border-radius:999px;font-size:13px;font-weight:600;vertical-align:middle;margin-left:8px;color:#fff}
.status.completed{background:var(--ok)}.status.interrupted{background:var(--warn)}.status.failed{background:var(--error)}
.banner{margin:16px 0;padding:12px 16px;border-radius:8px;border:2px solid;font-size:15px}
.banner.interrupted{border-color:var(--warn);background:rgba(217,119,6,.1)}
.banner.failed{border-color:var(--error);background:rgba(220,38,38,.1)}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(140px,1fr));gap:10px;margin:16px 0}
.card{background:var(--panel);border:1px solid var(--line);border-left:4px solid var(--line);border-radius:8px;padding:10px 12px}
.card.tone-ok{border-left-color:var(--ok)}.card.tone-warn{border-left-color:var(--warn)}.card.tone-error{border-left-color:var(--error)}
.card-label{font-size:12px;color:var(--muted);text-transform:uppercase;letter-spacing:.04em}
.card-value{font-size:22px;font-weight:650;font-variant-numeric:tabular-nums}
.card-detail{font-size:12px;color:var(--muted)}
.details{display:grid;grid-template-columns:max-content 1fr;gap:4px 16px;background:var(--panel);border:1px solid var(--line);border-radius:8px;padding:12px 16px;margin:0}
.details dt{color:var(--muted)}.details dd{margin:0;word-break:break-word}
.panel{background:var(--panel);border:1px solid var(--line);border-radius:8px;padding:12px;margin:12px 0}
.chart{display:block;width:100%;height:auto}
.chart.small{max-width:560px}
.grid-charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(380px,100%),1fr));gap:12px}
.grid-charts .panel{margin:0}
svg text{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;font-size:12px;fill:var(--muted)}
svg .chart-title,svg .section-title{font-size:13px;font-weight:600;fill:var(--fg)}
svg .axis-title{font-size:11px}
svg .legend{font-size:12px;fill:var(--fg)}
svg .value{fill:var(--fg);font-variant-numeric:tabular-nums}
svg .value.failed{fill:var(--error);font-weight:600}svg .value.passed{fill:var(--ok);font-weight:600}
svg .no-data{font-size:14px;font-style:italic}
svg .plot-bg{fill:var(--plot);stroke:var(--line)}
svg .frame{fill:none;stroke:var(--line)}
svg .grid{stroke:var(--grid);stroke-width:1;fill:none}
svg .tick-mark{stroke:var(--muted)}
svg .line{fill:none;stroke-width:2.2;stroke-linejoin:round;stroke-linecap:round}
svg .line.corrected{stroke:var(--corrected)}
svg .line.uncorrected{stroke:var(--uncorrected);stroke-dasharray:6 4}
svg .line.p50{stroke:var(--p50);stroke-width:1.6}svg .line.p99{stroke:var(--p99)}
svg .dot.corrected{fill:var(--corrected)}svg .dot.uncorrected{fill:var(--uncorrected)}svg .dot.p50{fill:var(--p50)}svg .dot.p99{fill:var(--p99)}
svg .bar.requests{fill:var(--req)}svg .bar.errors{fill:var(--error)}
svg .line.target{stroke:var(--muted);stroke-width:1.5;stroke-dasharray:4 4}
svg .track{fill:var(--track)}
svg .tone-ok{fill:var(--ok)}svg .tone-warn{fill:var(--warn)}svg .tone-error{fill:var(--error)}svg .tone-neutral{fill:var(--neutral)}
svg .segment-mark{fill:#fff;font-size:12px;font-weight:600}
.sr-only{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
.table-wrap{overflow-x:auto;margin:10px 0}
table{border-collapse:collapse;background:var(--panel);border:1px solid var(--line);font-variant-numeric:tabular-nums;min-width:50%}
caption{text-align:left;font-weight:600;padding:4px 0;caption-side:top}
th,td{padding:4px 10px;border-bottom:1px solid var(--line);text-align:left;vertical-align:top;word-break:break-word}
thead th{background:var(--track);font-weight:600}
.num{text-align:right;white-space:nowrap}
td.uncorr{color:var(--muted)}
th.group{text-align:center}.corrected-head{color:var(--corrected)}.uncorrected-head{color:var(--uncorrected)}
tfoot th,tfoot td{font-weight:650;border-top:2px solid var(--line)}
tr.fail td{background:rgba(220,38,38,.06)}
.badge{display:inline-block;padding:0 8px;border-radius:999px;font-size:12px;font-weight:600;color:#fff;white-space:nowrap}
.badge.pass{background:var(--ok)}.badge.fail{background:var(--error)}
code{font-family:ui-monospace,"DejaVu Sans Mono",monospace;font-size:13px;word-break:break-word}
details{margin:10px 0}summary{cursor:pointer;color:var(--muted)}
.notes li{margin:4px 0;white-space:pre-wrap;word-break:break-word}
footer{margin-top:40px;color:var(--muted);font-size:12px}
`;

/** The run report as one self-contained HTML page: a pure function of the report (the CLI writes the file). */
export function renderHtml(report: RunReport): string {
  const statusLabel = report.status === 'completed' ? 'completed' : report.status === 'interrupted' ? 'INTERRUPTED' : 'FAILED';
  const title = `keysim run: ${report.scenario.name} (${statusLabel})`;
  const perOperation =
    report.operations.length === 0
      ? '<p class="muted">No operations ran.</p>'
      : `<div class="grid-charts">${report.operations.map((op) => `<div class="panel">${spectrumChart(op, op.operation, 'small')}</div>`).join('')}</div>`;
  const body = [
    `<header><h1>${esc(`keysim run: ${report.scenario.name}`)}<span class="status ${report.status}">${statusLabel}</span>${verdictBadges(report)}</h1>`,
    report.scenario.description.trim() === '' ? '' : `<p class="description">${esc(report.scenario.description)}</p>`,
    `</header>`,
    statusBanner(report),
    summaryCards(report),
    `<section aria-labelledby="h-run"><h2 id="h-run">Run</h2>${detailsList(report)}</section>`,
    `<section aria-labelledby="h-latency"><h2 id="h-latency">Latency percentile spectrum</h2>`,
    `<p class="muted">Corrected latency is measured from the intended send time, so a stalled server shows in it (coordinated omission); uncorrected from the actual send, as most load tools report it. The x axis is logarithmic in nines.</p>`,
    `<div class="panel">${spectrumChart(report.overall, 'All operations', 'large')}</div>`,
    `<h3>By operation</h3>${perOperation}`,
    latencyTable(report),
    `</section>`,
    `<section aria-labelledby="h-time"><h2 id="h-time">Over time</h2>`,
    `<div class="panel">${throughputChart(report)}</div><div class="panel">${latencyOverTimeChart(report)}</div>`,
    timelineTable(report),
    `</section>`,
    `<section aria-labelledby="h-outcomes"><h2 id="h-outcomes">Outcomes</h2>`,
    `<div class="panel">${outcomeChart(report)}</div>`,
    outcomeTables(report),
    `</section>`,
    `<section aria-labelledby="h-verdicts"><h2 id="h-verdicts">Thresholds and checks</h2>`,
    `<div class="panel">${verdictChart(report.thresholds, report.checks)}</div>`,
    verdictTables(report),
    `</section>`,
    `<section aria-labelledby="h-phases"><h2 id="h-phases">Phases</h2>${phasesTable(report)}</section>`,
    report.notes.length === 0
      ? ''
      : `<section aria-labelledby="h-notes"><h2 id="h-notes">Notes</h2><ul class="notes">${report.notes.map((note) => `<li>${esc(note)}</li>`).join('')}</ul></section>`,
    `<footer>Generated by keysim ${esc(report.environment.keysimVersion)} from a ${esc(report.schema)} v${esc(String(report.version))} report. Self-contained: no scripts, nothing fetched.</footer>`,
  ].join('\n');
  return (
    `<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n` +
    `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">\n` +
    `<meta name="viewport" content="width=device-width, initial-scale=1">\n<link rel="icon" href="data:,">\n` +
    `<title>${esc(title)}</title>\n<style>${CSS}</style>\n</head>\n<body>\n<main>\n${body}\n</main>\n</body>\n</html>\n`
  );
}
