/** Small helpers for the benchmarks: medians, number formatting and plain-text / Markdown tables. */

/** The median of a non-empty list (the mean of the two middle values for an even count). */
export function median(values: readonly number[]): number {
  if (values.length === 0) throw new RangeError('median of an empty list');
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export function min(values: readonly number[]): number {
  return values.reduce((a, b) => Math.min(a, b), Number.POSITIVE_INFINITY);
}

export function max(values: readonly number[]): number {
  return values.reduce((a, b) => Math.max(a, b), Number.NEGATIVE_INFINITY);
}

/** Seconds since `start` (a `process.hrtime.bigint()` reading). */
export function secondsSince(start: bigint): number {
  return Number(process.hrtime.bigint() - start) / 1e9;
}

/** 1234567.8 → "1,234,568". */
export function fmtInt(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

/** Operations per second, e.g. "612,345/s". */
export function fmtRate(perSecond: number): string {
  return `${fmtInt(perSecond)}/s`;
}

/** A duration given in nanoseconds, in the most readable unit. */
export function fmtNs(ns: number): string {
  if (ns < 1_000) return `${ns.toFixed(ns < 10 ? 1 : 0)} ns`;
  if (ns < 1_000_000) return `${(ns / 1_000).toFixed(ns < 10_000 ? 2 : 1)} µs`;
  if (ns < 1_000_000_000) return `${(ns / 1_000_000).toFixed(2)} ms`;
  return `${(ns / 1_000_000_000).toFixed(2)} s`;
}

/** Bytes as decimal megabytes (1 MB = 10^6 bytes), e.g. "612.3 MB". */
export function fmtMB(bytes: number): string {
  return `${(bytes / 1e6).toFixed(1)} MB`;
}

export function fmtPercent(fraction: number): string {
  return `${(fraction * 100).toFixed(0)} %`;
}

export function fmtRatio(ratio: number): string {
  return `${ratio.toFixed(ratio < 10 ? 2 : 1)}×`;
}

export function yesNo(value: boolean): string {
  return value ? 'yes' : 'no';
}

/**
 * A plain-text table. Columns whose cells all start with a digit, "≥", "<" or "—" are
 * right-aligned; the rest left-aligned.
 */
export function textTable(headers: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const widths = headers.map((h, c) => Math.max(h.length, ...rows.map((r) => (r[c] ?? '').length)));
  const numeric = headers.map((_, c) => rows.length > 0 && rows.every((r) => /^[\d≥<—~-]/.test(r[c] ?? '')));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, c) => (numeric[c] === true ? cell.padStart(widths[c] ?? 0) : cell.padEnd(widths[c] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(headers), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

/** A Markdown table. */
export function markdownTable(headers: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const line = (cells: readonly string[]) => `| ${cells.map((c) => c.replaceAll('|', '\\|')).join(' | ')} |`;
  return [line(headers), `|${headers.map(() => '---').join('|')}|`, ...rows.map(line)].join('\n');
}

/** One line of the summary table of docs/benchmarks.md. */
export interface SummaryRow {
  figure: string;
  median: string;
  target: string;
}
