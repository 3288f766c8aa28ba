/**
 * The latency (y) axis of the report's latency charts, drawn twice: on a logarithmic scale, where
 * the median and the tail (p99.9, max) are both readable, and on a linear one. The page switches
 * between them with two radio buttons and CSS alone (`latencyScaleSwitch`, `.y-log`/`.y-linear`):
 * no script, so the page stays self-contained under its Content-Security-Policy.
 */
import { formatCount } from '../format.js';
import { type Box, esc, linear, n, niceTicks, plotHeight, plotWidth } from './svg.js';

export type LatencyScale = 'log' | 'linear';

/** The radio buttons' ids: the inputs sit at the top of the page, before every section they switch. */
export const SCALE_INPUT_ID: Record<LatencyScale, string> = { log: 'latency-scale-log', linear: 'latency-scale-linear' };

/** The two (visually hidden) radio inputs; placed as earlier siblings of the sections, which CSS `~` needs. Log is checked. */
export function latencyScaleInputs(): string {
  return (
    `<input type="radio" class="scale-input sr-only" name="latency-scale" id="${SCALE_INPUT_ID.log}" checked aria-label="logarithmic latency axis">` +
    `<input type="radio" class="scale-input sr-only" name="latency-scale" id="${SCALE_INPUT_ID.linear}" aria-label="linear latency axis">`
  );
}

/** The visible switch: two labels for the inputs. */
export function latencyScaleSwitch(): string {
  return (
    `<p class="scale-switch" role="group" aria-label="latency axis">Latency axis: ` +
    `<label for="${SCALE_INPUT_ID.log}" class="scale-log">logarithmic (shows the tail)</label> ` +
    `<label for="${SCALE_INPUT_ID.linear}" class="scale-linear">linear</label></p>`
  );
}

/** The CSS of the switch: the unchecked scale's groups are hidden, the checked label is marked. */
export const SCALE_CSS =
  `#${SCALE_INPUT_ID.log}:checked~section .y-linear,#${SCALE_INPUT_ID.linear}:checked~section .y-log{display:none}` +
  `.scale-switch label{cursor:pointer;padding:2px 10px;border:1px solid var(--line);border-radius:999px;margin-left:4px}` +
  `#${SCALE_INPUT_ID.log}:checked~section .scale-switch .scale-log,#${SCALE_INPUT_ID.linear}:checked~section .scale-switch .scale-linear{background:var(--corrected);border-color:var(--corrected);color:#fff}` +
  `#${SCALE_INPUT_ID.log}:focus-visible~section .scale-switch .scale-log,#${SCALE_INPUT_ID.linear}:focus-visible~section .scale-switch .scale-linear{outline:2px solid var(--fg)}`;

/** A y scale of milliseconds onto the box, with its ticks. */
export interface YScale {
  scale: LatencyScale;
  y: (ms: number) => number;
  ticks: Array<{ ms: number; label: string }>;
}

function logLabel(ms: number): string {
  if (ms >= 1000) return `${formatCount(ms / 1000)} s`;
  return ms >= 1 ? formatCount(ms) : String(Number(ms.toPrecision(1)));
}

/**
 * Both scales for values up to `maxMs` whose smallest positive one is `minPositiveMs`. The log
 * scale runs over whole decades (1 µs at the lowest); a value of 0 sits on its floor.
 */
export function yScales(box: Box, minPositiveMs: number, maxMs: number): Record<LatencyScale, YScale> {
  const bottom = box.height - box.bottom;
  const lin = niceTicks(maxMs);
  const linearY = linear(0, lin.max, bottom, box.top);
  const top = Number.isFinite(maxMs) && maxMs > 0 ? maxMs : 1;
  const floor = Number.isFinite(minPositiveMs) && minPositiveMs > 0 ? Math.min(minPositiveMs, top) : top / 10;
  const lo = Math.max(-3, Math.floor(Math.log10(floor) - 1e-9));
  const hi = Math.max(lo + 1, Math.ceil(Math.log10(top) - 1e-9));
  const logY = linear(lo, hi, bottom, box.top);
  const ticks: Array<{ ms: number; label: string }> = [];
  for (let d = lo; d <= hi; d++) ticks.push({ ms: 10 ** d, label: logLabel(10 ** d) });
  return {
    linear: { scale: 'linear', y: linearY, ticks: lin.ticks.map((ms) => ({ ms, label: formatTick(ms, lin.decimals) })) },
    log: { scale: 'log', y: (ms) => logY(Math.log10(Math.max(ms, 10 ** lo))), ticks },
  };
}

function formatTick(ms: number, decimals: number): string {
  return decimals === 0 ? formatCount(ms) : ms.toFixed(decimals);
}

/** Horizontal grid, y labels and the axis title for one scale (the plot background is drawn once, outside). */
export function yAxis(box: Box, scale: YScale, title: string): string {
  const x0 = box.left;
  const x1 = box.width - box.right;
  let out = '';
  for (const t of scale.ticks) {
    out += `<path class="grid" d="M${n(x0)} ${n(scale.y(t.ms))}H${n(x1)}"/>`;
    out += `<text class="tick" x="${n(x0 - 6)}" y="${n(scale.y(t.ms))}" text-anchor="end" dominant-baseline="middle">${esc(t.label)}</text>`;
  }
  const suffix = scale.scale === 'log' ? ', log scale' : '';
  out += `<text class="axis-title" transform="translate(${n(14)} ${n(box.top + plotHeight(box) / 2)}) rotate(-90)" text-anchor="middle">${esc(`${title}${suffix}`)}</text>`;
  return out;
}

/** The plot's background rectangle. */
export function plotBackground(box: Box): string {
  return `<rect class="plot-bg" x="${n(box.left)}" y="${n(box.top)}" width="${n(plotWidth(box))}" height="${n(plotHeight(box))}"/>`;
}

/** Draws `body` once per scale, each in its group (`y-log`, `y-linear`) for the switch. */
export function perScale(scales: Record<LatencyScale, YScale>, body: (scale: YScale) => string): string {
  return (['log', 'linear'] as const).map((s) => `<g class="y-${s}">${body(scales[s])}</g>`).join('');
}
