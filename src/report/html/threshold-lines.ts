/**
 * Threshold lines on the report's charts: a latency threshold (`p99(keys.verifyKey) < 20ms`) as a
 * horizontal line on that operation's percentile spectrum (the all-operations chart and the
 * latency-over-time chart for one without an operation), a throughput one (`rps >= 100`) on the
 * throughput chart. The report keeps thresholds as written, so they are read back from their
 * expression here; the other kinds (errors, rates of outcomes, counts) have no line to draw.
 */
import type { RunReport } from '../model.js';
import { thresholdVerdict } from '../generator-text.js';
import { type Box, esc, n, truncate } from './svg.js';

export interface ChartThreshold {
  expression: string;
  /** p50 p90 p99 p999 max mean, or rps. */
  metric: string;
  /** The operation it is of; undefined: all operations. */
  operation: string | undefined;
  /** ms for a latency, requests/s for rps. */
  value: number;
  verdict: 'passed' | 'failed' | 'inconclusive';
}

const PATTERN = /^\s*(p50|p90|p99|p999|max|mean|rps)\s*(?:\(\s*([^()\s]+)\s*\))?\s*(?:<=|>=|==|!=|<|>)\s*(\d+(?:\.\d+)?)\s*(us|µs|ms|s)?\s*$/i;

/** The report's thresholds that can be drawn on a latency or a throughput chart. */
export function chartThresholds(report: Pick<RunReport, 'thresholds'>): ChartThreshold[] {
  const out: ChartThreshold[] = [];
  for (const t of report.thresholds) {
    const match = PATTERN.exec(t.expression);
    if (match === null) continue;
    const metric = (match[1] ?? '').toLowerCase();
    const unit = match[4]?.toLowerCase();
    if (metric === 'rps' && unit !== undefined) continue;
    let value = Number(match[3]);
    if (metric !== 'rps') value = unit === 's' ? value * 1000 : unit === 'us' || unit === 'µs' ? value / 1000 : value;
    out.push({ expression: t.expression, metric, operation: match[2], value, verdict: thresholdVerdict(t) });
  }
  return out;
}

/** The latency thresholds of one operation (undefined: those of all operations together). */
export function latencyThresholdsOf(thresholds: readonly ChartThreshold[], operation: string | undefined): ChartThreshold[] {
  return thresholds.filter((t) => t.metric !== 'rps' && t.operation === operation);
}

/** The throughput thresholds of all operations together. */
export function rateThresholds(thresholds: readonly ChartThreshold[]): ChartThreshold[] {
  return thresholds.filter((t) => t.metric === 'rps' && t.operation === undefined);
}

/** Dashed horizontal lines at each threshold's value, labelled with its expression and coloured by its verdict. */
export function thresholdLines(box: Box, thresholds: readonly ChartThreshold[], y: (value: number) => number): string {
  let out = '';
  thresholds.forEach((t, i) => {
    const at = y(t.value);
    const x1 = box.width - box.right;
    out +=
      `<g class="threshold ${t.verdict}"><path class="threshold-line" d="M${n(box.left)} ${n(at)}H${n(x1)}"><title>${esc(`threshold ${t.expression}: ${t.verdict}`)}</title></path>` +
      `<text class="threshold-label" x="${n(x1 - 4)}" y="${n(at - 4 - (i % 2) * 12)}" text-anchor="end">${esc(truncate(t.expression, 48))}</text></g>`;
  });
  return out;
}

export const THRESHOLD_CSS =
  `svg .threshold-line{fill:none;stroke-width:1.5;stroke-dasharray:8 3 2 3}` +
  `svg .threshold.passed .threshold-line{stroke:var(--ok)}svg .threshold.failed .threshold-line{stroke:var(--error)}svg .threshold.inconclusive .threshold-line{stroke:var(--warn)}` +
  `svg .threshold-label{font-size:11px;font-weight:600}svg .threshold.passed .threshold-label{fill:var(--ok)}svg .threshold.failed .threshold-label{fill:var(--error)}svg .threshold.inconclusive .threshold-label{fill:var(--warn)}`;
