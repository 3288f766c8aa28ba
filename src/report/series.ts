/**
 * `--series FILE`: the run second by second as NDJSON (one JSON object per line), for
 * dashboards, notebooks and `jq`. One line per second of the measured part and scenario run:
 *
 *   {"run":"…","scenario":"mixed","second":3,"requests":512,"ratePerSec":512,"errors":0,
 *    "latencyMs":{"p50":…,"p90":…,"p99":…,"p999":…,"max":…,"mean":…,"count":…},
 *    "operations":{"keys.verifyKey":{"requests":…,"ratePerSec":…,"errors":…,"latencyMs":{…}},…}}
 *
 * Latency is the corrected one (from the intended send; from the actual send in the closed model),
 * of answered requests, in milliseconds. The all-operations percentiles of a second are those of
 * its operations' histograms merged, so they are exact to the histograms' precision; a report
 * written before keysim kept per-operation seconds has only p50 and p99 (the others are null)
 * and no `operations`.
 */
import type { Percentiles, RunReport, TimelinePoint } from './model.js';
import { decodeHistogram, mergeHistograms, percentilesMs, type Histogram } from './histogram.js';

/** Latency of one second: null where the report does not have the figure. */
export interface SeriesLatency {
  p50: number | null;
  p90: number | null;
  p99: number | null;
  p999: number | null;
  max: number | null;
  mean: number | null;
  /** Answered requests the percentiles are of. */
  count: number | null;
}

export interface SeriesOperation {
  requests: number;
  ratePerSec: number;
  errors: number;
  latencyMs: SeriesLatency;
}

/** One line of the series. */
export interface SeriesLine {
  /** The run's name (its folder's name), so several runs in one file stay apart. */
  run: string;
  scenario: string;
  /** Seconds since the measured part began (the line covers [second, second + 1)). */
  second: number;
  requests: number;
  /** Requests completed per second: `requests` over the part of the second that was measured. */
  ratePerSec: number;
  errors: number;
  latencyMs: SeriesLatency;
  /** The same second per operation, keyed by operation name; absent from old reports. */
  operations?: Record<string, SeriesOperation>;
}

const fromPercentiles = (p: Percentiles): SeriesLatency => ({ p50: p.p50, p90: p.p90, p99: p.p99, p999: p.p999, max: p.max, mean: p.mean, count: p.count });

const round2 = (x: number) => Math.round(x * 100) / 100;

function tryDecode(encoded: string): Histogram | undefined {
  try {
    return decodeHistogram(encoded);
  } catch {
    return undefined;
  }
}

/** The seconds of one run as series lines, in time order. */
export function seriesLines(report: RunReport, run: string): SeriesLine[] {
  const measuredSeconds = Number.isFinite(report.measuredMs) ? report.measuredMs / 1000 : 0;
  // The last second can be cut short by the end of the measured part: its rate is over the part measured.
  const covered = (second: number) => {
    const part = measuredSeconds - second;
    return part > 0 && part < 1 ? part : 1;
  };
  return [...report.timeline]
    .sort((a, b) => a.second - b.second)
    .map((point: TimelinePoint): SeriesLine => {
      const span = covered(point.second);
      const line: SeriesLine = {
        run,
        scenario: report.scenario.name,
        second: point.second,
        requests: point.requests,
        ratePerSec: round2(point.requests / span),
        errors: point.errors,
        latencyMs: { p50: point.p50Ms, p90: null, p99: point.p99Ms, p999: null, max: null, mean: null, count: null },
      };
      if (point.operations !== undefined) {
        const histograms = point.operations.map((o) => tryDecode(o.histogram));
        if (histograms.every((h) => h !== undefined)) line.latencyMs = fromPercentiles(percentilesMs(mergeHistograms(histograms as Histogram[])));
        line.operations = Object.fromEntries(
          point.operations.map((o) => [
            o.operation,
            { requests: o.requests, ratePerSec: round2(o.requests / span), errors: o.errors, latencyMs: fromPercentiles(o.latency) },
          ]),
        );
      }
      return line;
    });
}

/** The runs' seconds as NDJSON: one object per line, each line ending in a newline. */
export function renderSeries(runs: ReadonlyArray<{ report: RunReport; run: string }>): string {
  return runs.flatMap(({ report, run }) => seriesLines(report, run).map((line) => `${JSON.stringify(line)}\n`)).join('');
}
