/**
 * Measures a scenario reports (`ctx.measure`): figures measured against what the target promises,
 * e.g. how long a credit update took to be seen in every region. The runner collects the samples
 * per name and summarises them into the report's `Measure` (count, p50, p95, max, unknown); the
 * history checkers report theirs the same way. Thresholds name a measure (`p95(lag.credits) < 60s`),
 * so its name must be one a threshold can tell from an operation: one of MEASURE_FAMILIES.
 */
import type { Measure, MeasureUnit } from '../../report/model.js';
import { type MeasureSpec, OPERATIONS } from './scenario.js';

/** The families a measure's name starts with: `lag.credits`, `ratelimit.over-admission.60s`, `credits.over-spend`. */
export const MEASURE_FAMILIES: readonly string[] = ['lag', 'ratelimit', 'credits'];

const MEASURE_UNITS: readonly MeasureUnit[] = ['ms', 'share', 'credits'];
const NAME = /^[a-z]+(?:\.[a-z0-9][a-z0-9-]*)+$/;
const OPERATION_NAMES: ReadonlySet<string> = new Set(OPERATIONS);

/** Why `name` cannot name a measure, or undefined when it can. */
export function measureNameProblem(name: string): string | undefined {
  const families = MEASURE_FAMILIES.map((f) => `${f}.…`).join(', ');
  if (OPERATION_NAMES.has(name)) return `"${name}" is an operation, not a measure: a measure's name is of the families ${families} and names no operation`;
  if (!NAME.test(name) || !MEASURE_FAMILIES.includes(name.slice(0, name.indexOf('.'))))
    return `"${name}" is not a measure's name: use a dotted lower-case name of the families ${families} (e.g. lag.credits, ratelimit.over-admission.60s, credits.over-spend)`;
  return undefined;
}

/** A measure's spec refused: a name threshold cannot tell, a unit keysim does not know, or a spec that changed between samples. */
export class MeasureError extends Error {
  override readonly name = 'MeasureError';
}

/** The nearest-rank percentile `q` (0 < q ≤ 1) of sorted samples: a sample measured, never an interpolation. */
export function nearestRank(sorted: readonly number[], q: number): number | undefined {
  if (sorted.length === 0) return undefined;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

/** One measure summarised from its samples: count, nearest-rank p50 and p95, max; the unknown ones counted apart. */
export function summariseMeasure(spec: MeasureSpec, samples: readonly number[], unknown: number, source: Measure['source']): Measure {
  const sorted = [...samples].sort((a, b) => a - b);
  const measure: Measure = { name: spec.name, title: spec.title, unit: spec.unit, count: sorted.length, source };
  if (sorted.length > 0) {
    measure.p50 = nearestRank(sorted, 0.5) as number;
    measure.p95 = nearestRank(sorted, 0.95) as number;
    measure.max = sorted[sorted.length - 1] as number;
  }
  if (spec.promise !== undefined) measure.promise = spec.promise;
  if (unknown > 0) measure.unknown = unknown;
  return measure;
}

/** The samples of a run's scenario measures, by name, in the order they were first reported. */
export class MeasureCollector {
  readonly #byName = new Map<string, { spec: MeasureSpec; samples: number[]; unknown: number }>();

  /**
   * One sample of a measure; `value` undefined: it could not be measured (an answer that never
   * came), counted as unknown, never as evidence. Throws a MeasureError for a spec a threshold
   * could not name, or one that differs from the first sample's (unit or promise).
   */
  record(spec: MeasureSpec, value: number | undefined): void {
    const entry = this.#entry(spec);
    if (value === undefined) entry.unknown++;
    else if (!Number.isFinite(value))
      throw new MeasureError(`measure ${spec.name}: a sample must be a finite number, got ${String(value)}; report an unknown sample as undefined`);
    else entry.samples.push(value);
  }

  #entry(spec: MeasureSpec): { spec: MeasureSpec; samples: number[]; unknown: number } {
    const known = this.#byName.get(spec.name);
    if (known !== undefined) {
      if (known.spec.unit !== spec.unit || known.spec.promise !== spec.promise)
        throw new MeasureError(
          `measure ${spec.name}: reported in ${spec.unit}${spec.promise === undefined ? '' : ` with promise ${spec.promise}`} after ${known.spec.unit}${known.spec.promise === undefined ? '' : ` with promise ${known.spec.promise}`}: one measure has one unit and one promise`,
        );
      return known;
    }
    const problem = measureNameProblem(spec.name);
    if (problem !== undefined) throw new MeasureError(`ctx.measure: ${problem}.`);
    if (!MEASURE_UNITS.includes(spec.unit))
      throw new MeasureError(`measure ${spec.name}: unknown unit "${String(spec.unit)}"; use ${MEASURE_UNITS.join(', ')}`);
    if (spec.promise !== undefined && !Number.isFinite(spec.promise)) throw new MeasureError(`measure ${spec.name}: its promise must be a finite number`);
    const entry = { spec: { ...spec }, samples: [], unknown: 0 };
    this.#byName.set(spec.name, entry);
    return entry;
  }

  /** Every measure reported, summarised (source 'scenario'); empty when none was. */
  measures(): Measure[] {
    return [...this.#byName.values()].map((e) => summariseMeasure(e.spec, e.samples, e.unknown, 'scenario'));
  }
}
