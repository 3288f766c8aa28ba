/**
 * The checkers' measures (docs/consistency.md#measures): figures taken from the exact judgement
 * of a history, summarised against what the promise set in force allows. They never change a
 * verdict. Only what the history shows is a sample: an item whose answer never came, or whose
 * size the history cannot tell, is counted as `unknown`.
 *
 * - `ratelimit.over-admission.<window>`: per judged window (one with a surely admitted request),
 *   the share its surely admitted cost went over its limit (0: it did not); promise
 *   rateLimitOverAdmission × regions.
 * - `ratelimit.under-admission.<window>`: per judged denial, the share of the limit not yet usable
 *   when it came, (limit − most used − cost) / limit over the limit that came closest (0: the
 *   limit was reached); promise 1 − rateLimitUnderAdmission.
 * - `credits.over-spend`: per key and counter period, the credits granted beyond the exact
 *   balance (credits-over-spend.ts); promise (regions − 1) × the period's starting balance when
 *   every period has the same, else none.
 * - `credits.under-serve`: per USAGE_EXCEEDED judged, the credits surely left beyond the cost − 1 a
 *   refusal allows (0: the refusal was possible); promise 0 under exact, none under a set whose
 *   regions may refuse from a stale counter.
 * - `lag.refill`: per refill judged, how late an answer still saw the balance before it (0: on
 *   time); promise refillLagMs.
 */
import type { Measure } from '../../report/model.js';
import type { PromiseSet } from '../promises/index.js';
import type { OverSpendSample } from './credits-over-spend.js';
import type { CheckerSamples } from './types.js';

/** A window size as measures name it: `60s`, `1s`, `500ms`. */
export function windowName(durationMs: number): string {
  return durationMs % 1000 === 0 ? `${durationMs / 1000}s` : `${durationMs}ms`;
}

/** The nearest-rank percentile of sorted values. */
function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}

/** A measure over `values`, with its promise and its unknown count when there are any. */
export function summarise(base: Pick<Measure, 'name' | 'title' | 'unit'>, values: readonly number[], promise: number | undefined, unknown = 0): Measure {
  const sorted = [...values].sort((a, b) => a - b);
  return {
    ...base,
    count: sorted.length,
    ...(sorted.length === 0 ? {} : { p50: percentile(sorted, 50), p95: percentile(sorted, 95), max: sorted[sorted.length - 1] as number }),
    ...(promise === undefined ? {} : { promise }),
    ...(unknown > 0 ? { unknown } : {}),
    source: 'history',
  };
}

/** Samples grouped by window size, in ascending size. */
function byWindow<T extends { durationMs: number }>(samples: readonly T[]): Map<number, T[]> {
  const groups = new Map<number, T[]>();
  for (const s of [...samples].sort((a, b) => a.durationMs - b.durationMs)) {
    const list = groups.get(s.durationMs);
    if (list === undefined) groups.set(s.durationMs, [s]);
    else list.push(s);
  }
  return groups;
}

/** What the measures are taken from: the exact checkers' samples and the over-spend periods. */
export interface MeasureInput {
  rateLimit: CheckerSamples | undefined;
  credits: CheckerSamples | undefined;
  overSpend: readonly OverSpendSample[];
  set: PromiseSet;
  regions: number;
}

function rateLimitMeasures(input: MeasureInput): Measure[] {
  const { rateLimit, set, regions } = input;
  const count = (list: ReadonlyArray<{ durationMs: number | undefined }> | undefined, d: number) => (list ?? []).filter((u) => u.durationMs === d).length;
  const sizes = new Set<number>([...(rateLimit?.overAdmission ?? []).map((s) => s.durationMs), ...(rateLimit?.underAdmission ?? []).map((s) => s.durationMs)]);
  for (const u of [...(rateLimit?.overAdmissionUnknown ?? []), ...(rateLimit?.underAdmissionUnknown ?? [])])
    if (u.durationMs !== undefined) sizes.add(u.durationMs);
  const over = byWindow(rateLimit?.overAdmission ?? []);
  const under = byWindow(rateLimit?.underAdmission ?? []);
  const out: Measure[] = [];
  for (const d of [...sizes].sort((a, b) => a - b)) {
    const w = windowName(d);
    const windows = (over.get(d) ?? []).map((s) => s.share);
    const windowsUnknown = count(rateLimit?.overAdmissionUnknown, d);
    if (windows.length + windowsUnknown > 0)
      out.push(
        summarise(
          { name: `ratelimit.over-admission.${w}`, title: `Share of a ${w} window's admitted cost over its limit, per window`, unit: 'share' },
          windows,
          set.rateLimitOverAdmission * regions,
          windowsUnknown,
        ),
      );
    const denials = (under.get(d) ?? []).map((s) => s.share);
    const denialsUnknown = count(rateLimit?.underAdmissionUnknown, d);
    if (denials.length + denialsUnknown > 0)
      out.push(
        summarise(
          { name: `ratelimit.under-admission.${w}`, title: `Share of a ${w} limit not yet usable when a request was denied, per denial`, unit: 'share' },
          denials,
          1 - set.rateLimitUnderAdmission,
          denialsUnknown,
        ),
      );
  }
  return out;
}

/** The checkers' measures; none for what the history never exercised. */
export function checkerMeasures(input: MeasureInput): Measure[] {
  const out = rateLimitMeasures(input);
  if (input.overSpend.length > 0) {
    const bounds = new Set(input.overSpend.map((s) => s.bound));
    out.push(
      summarise(
        { name: 'credits.over-spend', title: "Credits a key's VALID answers granted beyond its exact balance, per counter period", unit: 'credits' },
        input.overSpend.map((s) => s.overSpend),
        bounds.size === 1 ? ([...bounds][0] as number) : undefined,
      ),
    );
  }
  const refusals = input.credits?.underServe ?? [];
  if (refusals.length > 0)
    out.push(
      summarise(
        { name: 'credits.under-serve', title: 'Credits surely left beyond what a USAGE_EXCEEDED allows, per refusal', unit: 'credits' },
        refusals,
        input.set.creditTtlMs === 0 && input.set.refillLagMs === 0 ? 0 : undefined,
      ),
    );
  const lags = input.credits?.refillLagMs ?? [];
  if (lags.length > 0)
    out.push(
      summarise({ name: 'lag.refill', title: 'How late a refill was first seen after its boundary, per refill', unit: 'ms' }, lags, input.set.refillLagMs),
    );
  return out;
}
