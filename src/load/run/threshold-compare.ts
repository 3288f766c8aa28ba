/** A parsed threshold, and how its measured value is compared and shown (shared by thresholds.ts and pace-verdict.ts). */

export type Comparator = '<' | '<=' | '>' | '>=' | '==' | '!=';

export interface Threshold {
  expression: string;
  metric: string;
  argument: string | undefined;
  comparator: Comparator;
  /** In ms for latencies; a plain number otherwise. */
  value: number;
}

/** The latency metrics, each a field of the report's Percentiles. */
export const LATENCY: ReadonlySet<string> = new Set(['p50', 'p90', 'p95', 'p99', 'p999', 'max', 'mean']);

export function compare(actual: number, comparator: Comparator, expected: number): boolean {
  switch (comparator) {
    case '<':
      return actual < expected;
    case '<=':
      return actual <= expected;
    case '>':
      return actual > expected;
    case '>=':
      return actual >= expected;
    case '==':
      return actual === expected;
    case '!=':
      return actual !== expected;
  }
}

/** A measured value as a threshold's detail shows it. */
export const shown = (t: Threshold, value: number): string =>
  LATENCY.has(t.metric) ? `${Math.round(value * 1000) / 1000} ms` : t.metric === 'rate' ? value.toFixed(4) : String(value);
