/**
 * `ctx.measure`'s collector: samples summarised per name as the report's Measure (nearest-rank p50
 * and p95 — a sample measured, never an interpolation — max, count), unknown samples counted apart
 * and never as evidence, names a threshold could not tell from an operation refused.
 */
import { describe, expect, test } from 'vitest';
import { MeasureCollector, MeasureError, measureNameProblem, summariseMeasure } from '../../src/load/scenario/scenario-measures.js';
import type { MeasureSpec } from '../../src/load/scenario/scenario.js';

const LAG: MeasureSpec = { name: 'lag.credits', title: 'a credit update seen everywhere', unit: 'ms', promise: 60_000 };

describe('MeasureCollector', () => {
  test('three lags 0, 11 s, 0: p50 0, p95 11 s, max 11 s, 3 samples, with the promise', () => {
    const c = new MeasureCollector();
    for (const v of [0, 11_000, 0]) c.record(LAG, v);
    expect(c.measures()).toEqual([
      { name: 'lag.credits', title: LAG.title, unit: 'ms', count: 3, p50: 0, p95: 11_000, max: 11_000, promise: 60_000, source: 'scenario' },
    ]);
  });

  test('percentiles are nearest-rank over 20 samples: p50 the 10th, p95 the 19th, max the 20th', () => {
    const c = new MeasureCollector();
    // Reported out of order: the summary sorts them.
    for (let i = 20; i >= 1; i--) c.record(LAG, i * 100);
    const [m] = c.measures();
    expect(m).toMatchObject({ count: 20, p50: 1_000, p95: 1_900, max: 2_000 });
  });

  test('an unknown sample (undefined) is counted apart, and is no figure', () => {
    const c = new MeasureCollector();
    c.record(LAG, 5_000);
    c.record(LAG, undefined);
    c.record(LAG, undefined);
    expect(c.measures()[0]).toMatchObject({ count: 1, p50: 5_000, p95: 5_000, max: 5_000, unknown: 2 });
  });

  test('only unknown samples: count 0 and no p50, p95 or max (nothing invented)', () => {
    const c = new MeasureCollector();
    c.record({ name: 'lag.disable', title: 't', unit: 'ms' }, undefined);
    const [m] = c.measures();
    expect(m).toEqual({ name: 'lag.disable', title: 't', unit: 'ms', count: 0, unknown: 1, source: 'scenario' });
  });

  test('measures keep the order they were first reported in; nothing reported: none', () => {
    const c = new MeasureCollector();
    expect(c.measures()).toEqual([]);
    c.record({ name: 'lag.delete', title: 'd', unit: 'ms' }, 1);
    c.record({ name: 'credits.over-spend', title: 'o', unit: 'credits' }, 3);
    c.record({ name: 'lag.delete', title: 'd', unit: 'ms' }, 2);
    expect(c.measures().map((m) => [m.name, m.count])).toEqual([
      ['lag.delete', 2],
      ['credits.over-spend', 1],
    ]);
  });

  test.each([
    ['ratelimit.limit', /is an operation, not a measure/],
    ['keys.verifyKey', /is an operation, not a measure/],
    ['latency.credits', /families lag\.…, ratelimit\.…, credits\.…/],
    ['lag', /not a measure's name/],
    ['Lag.Credits', /not a measure's name/],
    ['lag.', /not a measure's name/],
  ])('the name %j is refused: a threshold could not name it', (name, message) => {
    expect(() => new MeasureCollector().record({ name, title: 't', unit: 'ms' }, 1)).toThrow(message);
    expect(measureNameProblem(name)).toMatch(message);
  });

  test.each(['lag.credits', 'ratelimit.over-admission.60s', 'credits.under-serve', 'lag.override'])('the name %j is a measure', (name) => {
    expect(measureNameProblem(name)).toBeUndefined();
  });

  test('one measure has one unit and one promise: a sample with another is refused', () => {
    const c = new MeasureCollector();
    c.record(LAG, 1);
    expect(() => c.record({ ...LAG, unit: 'share' }, 1)).toThrow(MeasureError);
    expect(() => c.record({ ...LAG, promise: 10_000 }, 1)).toThrow(/one measure has one unit and one promise/);
  });

  test('a sample that is not a finite number is refused (an unknown one is undefined)', () => {
    expect(() => new MeasureCollector().record(LAG, Number.NaN)).toThrow(/finite number.*undefined/);
  });

  test('summariseMeasure labels the source it is given', () => {
    expect(summariseMeasure({ name: 'credits.over-spend', title: 'o', unit: 'credits' }, [2], 0, 'history')).toMatchObject({ source: 'history', count: 1 });
  });
});
