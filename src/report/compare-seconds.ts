/**
 * One operation's run as a series of seconds, each a sparse latency histogram, ready to be merged
 * thousands of times by the block bootstrap. Merging HDR histograms themselves would walk their
 * ~45 000 buckets per merge; a second holds only the few hundred values it recorded, so they are
 * kept as (value, count) pairs over one shared list of values and summed into a dense array.
 */
import type { JsHistogram } from 'hdr-histogram-js';
import type { RunReport } from './model.js';
import { decodeHistogram } from './histogram.js';

/** One second of one operation: counts at indexes into the shared value list. */
export interface Second {
  idx: Int32Array;
  counts: Float64Array;
  /** Latency samples in the second. */
  samples: number;
  requests: number;
  errors: number;
}

/** The shared, sorted list of latency values (µs, each the top of its HDR bucket) the seconds index into. */
export class ValueIndex {
  readonly #positions = new Map<number, number>();
  #values: number[] = [];
  #sorted = false;

  /** Registers values; call {@link seal} before any index is used. */
  add(valueUs: number): void {
    if (!this.#positions.has(valueUs)) {
      this.#positions.set(valueUs, -1);
      this.#values.push(valueUs);
      this.#sorted = false;
    }
  }

  seal(): void {
    if (this.#sorted) return;
    this.#values.sort((a, b) => a - b);
    this.#values.forEach((v, i) => this.#positions.set(v, i));
    this.#sorted = true;
  }

  indexOf(valueUs: number): number {
    return this.#positions.get(valueUs) ?? -1;
  }

  get values(): readonly number[] {
    return this.#values;
  }
}

/** The recorded (value µs, count) pairs of an encoded histogram; empty for an empty string. */
export function histogramEntries(encoded: string): Array<[number, number]> {
  if (encoded === '') return [];
  const h = decodeHistogram(encoded) as unknown as JsHistogram;
  const entries: Array<[number, number]> = [];
  if (h.totalCount === 0) return entries;
  for (let i = 0; i < h.countsArrayLength; i++) {
    const c = h.getCountAtIndex(i);
    // The top of the bucket, as getValueAtPercentile reports it, so the figures match the report's.
    if (c > 0) entries.push([h.highestEquivalentValue(h.valueFromIndex(i)), c]);
  }
  return entries;
}

/** Raw per-second entries of one operation (or of all operations, `overall`), before indexing. */
export function rawSeconds(report: RunReport, operation: string | null): Array<{ entries: Array<[number, number]>; requests: number; errors: number }> {
  return report.timeline.map((point) => {
    const ops = (point.operations ?? []).filter((o) => operation === null || o.operation === operation);
    const sum = new Map<number, number>();
    let requests = 0;
    let errors = 0;
    for (const o of ops) {
      requests += o.requests;
      errors += o.errors;
      for (const [v, c] of histogramEntries(o.histogram)) sum.set(v, (sum.get(v) ?? 0) + c);
    }
    return { entries: [...sum.entries()], requests, errors };
  });
}

/** Indexes raw seconds against `index` (which must already hold their values and be sealed). */
export function indexSeconds(raw: ReturnType<typeof rawSeconds>, index: ValueIndex): Second[] {
  return raw.map((s) => {
    const idx = new Int32Array(s.entries.length);
    const counts = new Float64Array(s.entries.length);
    let samples = 0;
    s.entries.forEach(([v, c], i) => {
      idx[i] = index.indexOf(v);
      counts[i] = c;
      samples += c;
    });
    return { idx, counts, samples, requests: s.requests, errors: s.errors };
  });
}

/**
 * Percentiles (0..100, ascending) of the merge of `seconds`, in µs, as HDR computes them: the
 * smallest value whose cumulative count reaches ⌈p/100 · total⌉ (at least 1). NaN when empty.
 * `dense` is scratch space of the index's length.
 */
export function mergedPercentiles(seconds: readonly Second[], values: readonly number[], percentiles: readonly number[], dense: Float64Array): number[] {
  dense.fill(0);
  let total = 0;
  for (const s of seconds) {
    for (let i = 0; i < s.idx.length; i++) dense[s.idx[i] as number] = (dense[s.idx[i] as number] as number) + (s.counts[i] as number);
    total += s.samples;
  }
  if (total === 0) return percentiles.map(() => Number.NaN);
  const targets = percentiles.map((p) => Math.max(1, Math.ceil((p / 100) * total - 1e-9)));
  const out: number[] = [];
  let cumulative = 0;
  let next = 0;
  for (let i = 0; i < dense.length && next < targets.length; i++) {
    cumulative += dense[i] as number;
    while (next < targets.length && cumulative >= (targets[next] as number)) {
      out.push(values[i] as number);
      next++;
    }
  }
  while (out.length < percentiles.length) out.push(values[values.length - 1] as number);
  return out;
}
