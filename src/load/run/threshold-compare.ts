/** A parsed threshold, and how its measured value is compared and shown (shared by thresholds.ts and pace-verdict.ts). */

export type Comparator = '<' | '<=' | '>' | '>=' | '==' | '!=';

export interface Threshold {
  expression: string;
  metric: string;
  argument: string | undefined;
  comparator: Comparator;
  /** In ms for latencies (and for a measure given a latency unit); a plain number otherwise. */
  value: number;
  /** Set when `argument` names a measure (`p95(lag.credits)`), not an operation: thresholds-measures.ts judges it. */
  measure?: true;
  /** The unit written after the value, as written (a measure's is checked against its unit when judged). */
  unit?: string;
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
