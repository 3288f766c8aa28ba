/** Throughput and latency over time. */
import { type RunReport, type TimelinePoint } from '../model.js';
import { formatCount, formatMs, formatRate } from '../format.js';
import { targetLine } from '../stages-text.js';
import { type Box, axisLabel, esc, legend, linePath, linear, n, niceTicks, noData, plotWidth, svgOpen, yGrid } from './svg.js';
import { perScale, plotBackground, yAxis, yScales } from './latency-axis.js';
import { chartThresholds, latencyThresholdsOf, rateThresholds, thresholdLines } from './threshold-lines.js';

/** x ticks over `seconds`: seconds for short runs, minutes for long ones. */
export function timeTicks(seconds: number): Array<{ at: number; label: string }> {
  if (seconds < 300) {
    const t = niceTicks(seconds, 6, 1);
    return t.ticks.filter((s) => s <= seconds + 1e-9).map((s) => ({ at: s, label: `${axisLabel(s, t.decimals)} s` }));
  }
  const t = niceTicks(seconds / 60, 6);
  return t.ticks.filter((m) => m * 60 <= seconds + 1e-9).map((m) => ({ at: m * 60, label: `${axisLabel(m, t.decimals)} min` }));
}

export function timelineSpan(report: RunReport): number {
  const last = report.timeline.reduce((max, p) => (Number.isFinite(p.second) ? Math.max(max, p.second + 1) : max), 0);
  const measured = Number.isFinite(report.measuredMs) ? Math.ceil(report.measuredMs / 1000) : 0;
  return Math.max(1, last, measured);
}

export function timeAxis(box: Box, span: number, x: (s: number) => number): string {
  let out = '';
  for (const t of timeTicks(span)) {
    out += `<path class="tick-mark" d="M${n(x(t.at))} ${n(box.height - box.bottom)}v4"/>`;
    out += `<text class="tick" x="${n(x(t.at))}" y="${n(box.height - box.bottom + 16)}" text-anchor="middle">${esc(t.label)}</text>`;
  }
  out += `<text class="axis-title" x="${n(box.left + plotWidth(box) / 2)}" y="${n(box.height - 6)}" text-anchor="middle">time since the measured part began</text>`;
  return out;
}

export const TIMELINE_BOX: Box = { width: 1000, height: 250, left: 64, right: 36, top: 36, bottom: 44 };
/** Above this many seconds the bars would be thinner than a pixel: draw an area instead. */
export const MAX_BARS = 300;

export function throughputChart(report: RunReport): string {
  const box = TIMELINE_BOX;
  const points = report.timeline.filter((p) => Number.isFinite(p.second));
  const span = timelineSpan(report);
  // A run with stages draws its ramping target instead of one flat intended rate.
  const staged = targetLine(report);
  const intended =
    staged === undefined && report.settings.model === 'open' && Number.isFinite(report.settings.rate) && report.settings.rate > 0 ? report.settings.rate : 0;
  const peak = points.reduce((max, p) => Math.max(max, Number.isFinite(p.requests) ? p.requests : 0), 0);
  const rpsThresholds = rateThresholds(chartThresholds(report));
  const yTicks = niceTicks(Math.max(peak, intended, staged?.peak ?? 0, ...rpsThresholds.map((t) => t.value)));
  const x = linear(0, span, box.left, box.width - box.right);
  const y = linear(0, yTicks.max, box.height - box.bottom, box.top);
  const label =
    points.length === 0
      ? 'Throughput per second: no data'
      : `Throughput per second over ${formatCount(span)} s: peak ${formatCount(peak)} requests/s, ${formatCount(points.reduce((s, p) => s + p.errors, 0))} errors`;
  let out = svgOpen(box, label, 'throughput');
  out += `<text class="chart-title" x="${n(box.left)}" y="16">Throughput (requests/s)</text>`;
  out += yGrid(box, yTicks.ticks, yTicks.decimals, y, 'requests/s');
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
  if (staged !== undefined) {
    const at = (second: number) => x(Math.min(span, Math.max(0, second)));
    for (const b of staged.boundaries) {
      if (b > 0 && b < span) out += `<path class="stage-boundary" d="M${n(at(b))} ${n(box.top)}V${n(box.height - box.bottom)}"/>`;
    }
    out += `<path class="line target stages" d="${staged.points.map((q, i) => `${i === 0 ? 'M' : 'L'}${n(at(q.second))} ${n(y(q.rate))}`).join('')}"/>`;
  }
  out += thresholdLines(box, rpsThresholds, y);
  const items: Array<{ label: string; cls: string; kind: 'line' | 'box' }> = [
    { label: 'requests', cls: 'bar requests', kind: 'box' },
    { label: 'errors', cls: 'bar errors', kind: 'box' },
  ];
  if (intended > 0) items.push({ label: `intended ${formatRate(intended)}/s`, cls: 'target', kind: 'line' });
  if (staged !== undefined) items.push({ label: 'target rate (stages)', cls: 'target', kind: 'line' });
  out += legend(box.width - box.right - 330, 16, items);
  return `${out}</svg>`;
}

export function latencyOverTimeChart(report: RunReport): string {
  const box = TIMELINE_BOX;
  // Only the open model's latency is corrected: the closed model has no intended send times.
  const kind = report.settings.model === 'open' ? 'corrected' : 'from the actual send';
  const points = report.timeline.filter((p) => Number.isFinite(p.second));
  const span = timelineSpan(report);
  const peak = points.reduce((max, p) => Math.max(max, Number.isFinite(p.p99Ms) ? p.p99Ms : 0, Number.isFinite(p.p50Ms) ? p.p50Ms : 0), 0);
  // The thresholds of all operations together: the chart is of all operations.
  const thresholds = latencyThresholdsOf(chartThresholds(report), undefined);
  const values = [...points.flatMap((p) => [p.p50Ms, p.p99Ms]), ...thresholds.map((t) => t.value)].filter((v) => Number.isFinite(v));
  const scales = yScales(box, Math.min(...values.filter((v) => v > 0)), Math.max(0, ...values));
  const x = linear(0, span, box.left, box.width - box.right);
  const label = points.length === 0 ? 'Latency over time: no data' : `p99 and p50 latency per second (${kind}): highest p99 ${formatMs(peak)}`;
  let out = svgOpen(box, label, 'latency-over-time');
  out += `<text class="chart-title" x="${n(box.left)}" y="16">Latency per second (${kind}, ms)</text>`;
  out += plotBackground(box);
  out += timeAxis(box, span, x);
  const curves = (y: (ms: number) => number): string => {
    let drawn = '';
    for (const [cls, value] of [
      ['p50', (p: TimelinePoint) => p.p50Ms],
      ['p99', (p: TimelinePoint) => p.p99Ms],
    ] as const) {
      const pts = points.map((p) => ({ x: x(p.second + 0.5), y: y(value(p)) }));
      drawn += `<path class="line ${cls}" d="${linePath(pts)}"/>`;
      if (points.length <= 60) {
        points.forEach((p, i) => {
          const at = pts[i];
          if (at === undefined) return;
          drawn += `<circle class="dot ${cls}" cx="${n(at.x)}" cy="${n(at.y)}" r="${points.length === 1 ? 4 : 2.5}"><title>${esc(`${formatCount(p.second)} s: ${cls} ${formatMs(value(p))}`)}</title></circle>`;
        });
      }
    }
    return drawn;
  };
  out += perScale(
    scales,
    (scale) => yAxis(box, scale, 'latency (ms)') + (points.length === 0 ? '' : curves(scale.y)) + thresholdLines(box, thresholds, scale.y),
  );
  if (points.length === 0) out += noData(box, 'no per-second data');
  out += legend(box.width - box.right - 150, 16, [
    { label: 'p99', cls: 'p99', kind: 'line' },
    { label: 'p50', cls: 'p50', kind: 'line' },
  ]);
  return `${out}</svg>`;
}

/* ----------------------------------------------------------------------- outcome breakdown */
