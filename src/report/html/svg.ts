/** SVG and HTML primitives of the report page: escaping, scales, axes, legends. Coordinates go through `n`, which turns a non-finite number into 0, so an empty run draws an empty chart, not NaN. */
import { formatFixed } from '../format.js';

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

export const esc = escapeHtml;

/** An SVG coordinate: one decimal, never NaN, Infinity or `-0`. */
export function n(x: number): string {
  if (!Number.isFinite(x)) return '0';
  const rounded = Math.round(x * 10) / 10;
  return rounded === 0 ? '0' : String(rounded);
}

/** Shortens a label for a fixed-width slot (the full text stays in a `<title>`). */
export function truncate(text: string, maxChars: number): string {
  const chars = Array.from(text); // code points: never split a surrogate pair
  return chars.length <= maxChars ? text : `${chars.slice(0, Math.max(1, maxChars - 1)).join('')}…`;
}

/** Maps [d0, d1] onto [r0, r1]; a zero-width domain maps everything to r0. */
export function linear(d0: number, d1: number, r0: number, r1: number): (v: number) => number {
  const span = d1 - d0;
  return (v) => (span === 0 || !Number.isFinite(span) || !Number.isFinite(v) ? r0 : r0 + ((v - d0) / span) * (r1 - r0));
}

/** Round axis ticks from 0 to a "nice" maximum covering `max` (1, 2 or 5 × 10^k steps). */
export function niceTicks(max: number, count = 5, minStep = 0): { max: number; ticks: number[]; decimals: number } {
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

export function axisLabel(value: number, decimals: number): string {
  return formatFixed(value, decimals);
}

export interface Box {
  width: number;
  height: number;
  left: number;
  right: number;
  top: number;
  bottom: number;
}

export const plotWidth = (b: Box) => b.width - b.left - b.right;
export const plotHeight = (b: Box) => b.height - b.top - b.bottom;

/** Opens an accessible chart: role="img", an aria-label and a `<title>`. */
export function svgOpen(box: Box, label: string, cls: string): string {
  return (
    `<svg class="chart ${cls}" role="img" aria-label="${esc(label)}" viewBox="0 0 ${box.width} ${box.height}" ` +
    `width="${box.width}" height="${box.height}" preserveAspectRatio="xMidYMid meet" xmlns="http://www.w3.org/2000/svg">` +
    `<title>${esc(label)}</title>`
  );
}

export function noData(box: Box, message: string): string {
  const x = box.left + plotWidth(box) / 2;
  const y = box.top + plotHeight(box) / 2;
  return `<text class="no-data" x="${n(x)}" y="${n(y)}" text-anchor="middle" dominant-baseline="middle">${esc(message)}</text>`;
}

/** Plot background, horizontal grid with y labels, and axis titles. */
export function yGrid(box: Box, ticks: number[], decimals: number, y: (v: number) => number, yTitle: string): string {
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

export function legend(x: number, y: number, items: ReadonlyArray<{ label: string; cls: string; kind: 'line' | 'box' }>): string {
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

/** An SVG path through the points. */
export function linePath(points: ReadonlyArray<{ x: number; y: number }>): string {
  return points.map((p, i) => `${i === 0 ? 'M' : 'L'}${n(p.x)} ${n(p.y)}`).join('');
}
