/**
 * The segments' measures as one (keysim merge, docs/distributed.md#merge). A report keeps a
 * measure's summary, not its samples, so only what the summaries determine is kept — never a
 * figure invented: samples and unknown ones are summed, the max is the largest max, and p50 and
 * p95 are kept only when a single segment measured samples (theirs are then the whole run's);
 * otherwise they are left out, and a threshold on them says so rather than passing. A promise the
 * segments disagree on is left out too.
 */
import type { Measure } from './model.js';

/** One measure over the segments that reported it (same name and source). */
function mergeOne(parts: readonly Measure[]): Measure {
  const first = parts[0] as Measure;
  const measured = parts.filter((p) => p.count > 0);
  const merged: Measure = { name: first.name, title: first.title, unit: first.unit, count: measured.reduce((n, p) => n + p.count, 0), source: first.source };
  if (measured.length === 1) {
    const only = measured[0] as Measure;
    if (only.p50 !== undefined) merged.p50 = only.p50;
    if (only.p95 !== undefined) merged.p95 = only.p95;
  }
  const maxima = measured.flatMap((p) => (p.max === undefined ? [] : [p.max]));
  if (maxima.length === measured.length && maxima.length > 0) merged.max = Math.max(...maxima);
  const promises = new Set(parts.map((p) => p.promise));
  if (promises.size === 1 && first.promise !== undefined) merged.promise = first.promise;
  const unknown = parts.reduce((n, p) => n + (p.unknown ?? 0), 0);
  if (unknown > 0) merged.unknown = unknown;
  return merged;
}

/** The segments' measures combined by name and source, in the order they first appear (segment order); undefined when none has any. */
export function mergeMeasures(reports: ReadonlyArray<{ measures?: Measure[] }>): Measure[] | undefined {
  const groups = new Map<string, Measure[]>();
  for (const report of reports)
    for (const m of report.measures ?? []) {
      const key = `${m.source} ${m.name}`;
      groups.set(key, [...(groups.get(key) ?? []), m]);
    }
  if (groups.size === 0) return undefined;
  const merged = [...groups.values()].map(mergeOne);
  // The scenario's first, then the history checkers', as in a run's report.
  return [...merged.filter((m) => m.source === 'scenario'), ...merged.filter((m) => m.source === 'history')];
}

/**
 * A report's measures with the history checkers' replaced by a new judgement's (keysim merge
 * across segments, keysim check): the scenario's are kept, as only the run could measure them.
 * Undefined when none is left, so that the report stays without measures.
 */
export function withHistoryMeasures(measures: readonly Measure[] | undefined, history: readonly Measure[] | undefined): Measure[] | undefined {
  const kept = [...(measures ?? []).filter((m) => m.source === 'scenario'), ...(history ?? [])];
  return kept.length === 0 ? undefined : kept;
}
