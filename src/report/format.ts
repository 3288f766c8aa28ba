/**
 * Number and text formatting shared by the Markdown and HTML renderers. Locale-free on purpose
 * (no `toLocaleString`): a report must render to the same bytes on every machine.
 */

/** Shown wherever a number is missing or not finite. */
export const NOT_AVAILABLE = 'n/a';

function groupThousands(digits: string): string {
  return digits.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/** Fixed decimals with thousands separators: `12,345.6`. */
export function formatFixed(x: number, decimals: number): string {
  if (!Number.isFinite(x)) return NOT_AVAILABLE;
  const fixed = Math.abs(x).toFixed(decimals);
  const [whole = '0', fraction] = fixed.split('.');
  const sign = x < 0 && Number(fixed) !== 0 ? '-' : '';
  return sign + groupThousands(whole) + (fraction === undefined ? '' : `.${fraction}`);
}

/** A count: `15,000`. */
export function formatCount(n: number): string {
  return formatFixed(Math.round(n), 0);
}

/** A latency in milliseconds, with precision that shrinks as the value grows: `0.412`, `3.91`, `27.4`, `1,204`. */
export function formatMsValue(ms: number): string {
  if (!Number.isFinite(ms)) return NOT_AVAILABLE;
  if (ms === 0) return '0';
  const abs = Math.abs(ms);
  if (abs < 1) return formatFixed(ms, 3);
  if (abs < 10) return formatFixed(ms, 2);
  if (abs < 100) return formatFixed(ms, 1);
  return formatFixed(ms, 0);
}

/** A latency with its unit: `3.91 ms`. */
export function formatMs(ms: number): string {
  const value = formatMsValue(ms);
  return value === NOT_AVAILABLE ? value : `${value} ms`;
}

/** A rate: `498.7`, `12,000`. */
export function formatRate(perSec: number): string {
  if (!Number.isFinite(perSec)) return NOT_AVAILABLE;
  return Math.abs(perSec) >= 1000 ? formatFixed(perSec, 0) : formatFixed(perSec, 1);
}

/** A generic measured value (threshold actuals): at most three decimals, trailing zeros dropped. */
export function formatValue(x: number | null): string {
  if (x === null || !Number.isFinite(x)) return NOT_AVAILABLE;
  const fixed = formatFixed(x, 3);
  return fixed.includes('.') ? fixed.replace(/\.?0+$/, '') : fixed;
}

/** `part` as a percentage of `total`: `12.3%`; `n/a` when the total is zero. */
export function formatPercent(part: number, total: number): string {
  if (!Number.isFinite(part) || !Number.isFinite(total) || total <= 0) return NOT_AVAILABLE;
  const percent = (100 * part) / total;
  // A few errors in many requests must not read as "0.0%".
  if (percent > 0 && percent < 0.05) return '<0.1%';
  return `${formatFixed(percent, 1)}%`;
}

/** A duration: `250 ms`, `1.4 s`, `30 s`, `2 min 5 s`, `1 h 2 min`. */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) return NOT_AVAILABLE;
  if (ms < 0) return `-${formatDuration(-ms)}`;
  if (ms < 1000) return `${formatFixed(ms, 0)} ms`;
  if (ms < 10_000) return `${formatFixed(ms / 1000, 1)} s`;
  const totalSec = Math.round(ms / 1000);
  if (totalSec < 60) return `${totalSec} s`;
  const sec = totalSec % 60;
  const totalMin = (totalSec - sec) / 60;
  if (totalMin < 60) return sec === 0 ? `${totalMin} min` : `${totalMin} min ${sec} s`;
  const min = totalMin % 60;
  const hours = (totalMin - min) / 60;
  return min === 0 ? `${formatCount(hours)} h` : `${formatCount(hours)} h ${min} min`;
}

/** An instant (Unix ms) as ISO 8601 UTC: `2027-01-15T12:00:00.012Z`; `n/a` when it is not one. */
export function formatInstant(ms: number): string {
  if (!Number.isFinite(ms)) return NOT_AVAILABLE;
  const date = new Date(ms);
  return Number.isNaN(date.getTime()) ? NOT_AVAILABLE : date.toISOString();
}

/** An operation's number as the history and `keysim check` write it: `1817`, no separators. */
export function seqText(seq: number): string {
  return Number.isFinite(seq) ? String(seq) : NOT_AVAILABLE;
}

/** A count and its noun, singular for exactly one: `1 key`, `2,048 verifications`. */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${formatCount(n)} ${n === 1 ? one : many}`;
}

/** A memory size in binary units: `7.8 GiB`. */
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes < 0) return NOT_AVAILABLE;
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${formatFixed(value, 0)} B` : `${formatFixed(value, 1)} ${units[unit] ?? ''}`;
}

/** Numeric-aware key order, so `"200"` comes before `"1000"` and codes sort alphabetically. */
export function compareKeys(a: string, b: string): number {
  const na = Number(a);
  const nb = Number(b);
  const aNumeric = a !== '' && Number.isFinite(na);
  const bNumeric = b !== '' && Number.isFinite(nb);
  if (aNumeric && bNumeric && na !== nb) return na - nb;
  if (aNumeric !== bNumeric) return aNumeric ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The entries of a count record in a stable order, non-finite counts read as 0. */
export function sortedCounts(record: Readonly<Record<string, number>>): Array<[string, number]> {
  return Object.keys(record)
    .sort(compareKeys)
    .map((key): [string, number] => {
      const value = record[key];
      return [key, typeof value === 'number' && Number.isFinite(value) ? value : 0];
    });
}

/** The union of the keys of several records, sorted with {@link compareKeys}. */
export function unionKeys(records: ReadonlyArray<Readonly<Record<string, number>>>): string[] {
  const keys = new Set<string>();
  for (const record of records) for (const key of Object.keys(record)) keys.add(key);
  return [...keys].sort(compareKeys);
}

/** Sum of the finite values of a record. */
export function sumCounts(record: Readonly<Record<string, number>>): number {
  let total = 0;
  for (const value of Object.values(record)) if (Number.isFinite(value)) total += value;
  return total;
}

/** A finite number or 0 (for arithmetic on figures that may be NaN in a broken report). */
export function finite(x: number): number {
  return Number.isFinite(x) ? x : 0;
}
