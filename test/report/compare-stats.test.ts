/**
 * The statistics of `keysim compare`: Mann–Whitney U against R's / SciPy's values, the
 * order-statistic intervals, and the verdict rule at its boundaries.
 */
import { describe, expect, test } from 'vitest';
import fc from 'fast-check';
import { mannWhitneyU, medianInterval, normalCdf, seededRandom, shiftInterval, uCdf, verdictOf } from '../../src/report/compare-stats.js';
import { assertProperty } from '../helpers/property.js';

describe('Mann–Whitney U', () => {
  test("R's wilcox.test example (Hollander & Wolfe): W = 35, exact two-sided p = 0.2544", () => {
    // wilcox.test(x, y, alternative = "greater") in R's documentation gives W = 35, p = 0.1272.
    const x = [0.8, 0.83, 1.89, 1.04, 1.45, 1.38, 1.91, 1.64, 0.73, 1.46];
    const y = [1.15, 0.88, 0.9, 0.74, 1.21];
    const result = mannWhitneyU(x, y);
    expect(result.method).toBe('exact');
    expect(result.u).toBe(35);
    expect(result.p).toBeCloseTo(0.2544122544, 8);
  });

  test('six runs against six, no ties: exact p = 0.04113 (SciPy mannwhitneyu, method="exact")', () => {
    const result = mannWhitneyU([10.1, 12.3, 9.8, 11.0, 10.7, 13.2], [12.5, 13.9, 12.8, 14.1, 13.0, 12.2]);
    expect(result).toMatchObject({ u: 5, method: 'exact' });
    expect(result.p).toBeCloseTo(0.04112554113, 8);
  });

  test('ties: normal approximation with tie and continuity corrections, p = 0.02192 (R wilcox.test, SciPy asymptotic)', () => {
    const result = mannWhitneyU([1, 2, 2, 3, 4, 4, 4, 5], [3, 4, 5, 5, 6, 6, 7]);
    expect(result).toMatchObject({ u: 8, method: 'normal' });
    expect(result.p).toBeCloseTo(0.0219206559, 5);
  });

  test('the exact null distribution: P(U ≤ 0) = 1 / C(m+n, m), symmetric, sums to 1', () => {
    expect(uCdf(3, 3, 0)).toBeCloseTo(1 / 20, 12);
    expect(uCdf(4, 5, 20)).toBe(1);
    expect(uCdf(4, 5, 9)).toBeCloseTo(1 - uCdf(4, 5, 10), 12);
  });

  test('Φ agrees with known values', () => {
    expect(normalCdf(0)).toBeCloseTo(0.5, 7);
    expect(normalCdf(1.959964)).toBeCloseTo(0.975, 6);
    expect(normalCdf(-2.575829)).toBeCloseTo(0.005, 6);
  });
});

describe('distribution-free intervals', () => {
  test('median of 10 values at 95 %: [x(2), x(9)], coverage 97.85 %', () => {
    const ci = medianInterval([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect([ci.low, ci.high]).toEqual([2, 9]);
    expect(ci.confidence).toBeCloseTo(1 - 22 / 1024, 10);
  });

  test('median of 3 values: [min, max] with its coverage of 75 %, never a claimed 95 %', () => {
    const ci = medianInterval([5, 1, 3]);
    expect([ci.low, ci.high]).toEqual([1, 5]);
    expect(ci.confidence).toBeCloseTo(0.75, 10);
  });

  test('shift interval of 3 against 3: the extreme pairwise differences, at 90 % (the most three runs allow)', () => {
    const ci = shiftInterval([1, 2, 3], [11, 12, 14]);
    expect([ci.low, ci.high]).toEqual([8, 13]);
    expect(ci.confidence).toBeCloseTo(0.9, 10);
    expect(ci.estimate).toBe(10);
  });

  test('shift interval of 10 against 10 at 95 %: k from the exact U distribution (P(U ≤ 23) ≤ 2.5 %)', () => {
    const x = Array.from({ length: 10 }, (_, i) => i);
    const ci = shiftInterval(
      x,
      x.map((v) => v + 100),
    );
    // 100 pairwise differences 91..109; the 24th smallest and the 24th largest.
    expect(ci.confidence).toBeGreaterThanOrEqual(0.95);
    expect(uCdf(10, 10, 23)).toBeLessThanOrEqual(0.025);
    expect(uCdf(10, 10, 24)).toBeGreaterThan(0.025);
    const diffs = x.flatMap((a) => x.map((b) => b + 100 - a)).sort((a, b) => a - b);
    expect([ci.low, ci.high]).toEqual([diffs[23], diffs[76]]);
  });
});

describe('the verdict rule', () => {
  const noise = 0.05;
  test.each([
    [0.0501, 0.2, true, 'worse'],
    [0.05, 0.2, true, 'inconclusive'], // touching the threshold does not clear it
    [-0.05, 0.05, true, 'same'], // bounds included
    [-0.0501, 0.05, true, 'inconclusive'],
    [-0.2, -0.0501, true, 'better'],
    [-0.2, -0.05, true, 'inconclusive'],
    [-0.01, 0.3, true, 'inconclusive'],
    // Throughput: higher is better, the direction flips.
    [0.0501, 0.2, false, 'better'],
    [-0.2, -0.0501, false, 'worse'],
    [-0.02, 0.03, false, 'same'],
    [Number.NaN, 0.1, true, 'inconclusive'],
  ] as const)('[%f, %f] higherIsWorse=%s → %s', (low, high, higherIsWorse, verdict) => {
    expect(verdictOf(low, high, noise, higherIsWorse)).toBe(verdict);
  });

  test('property: an interval containing 0 is never better or worse', () => {
    assertProperty(
      fc.property(
        fc.double({ min: -1, max: 0, noNaN: true }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.double({ min: 0.001, max: 0.5, noNaN: true }),
        fc.boolean(),
        (low, high, n, dir) => {
          expect(['same', 'inconclusive']).toContain(verdictOf(low, high, n, dir));
        },
      ),
    );
  });
});

test('seededRandom: the same seed gives the same sequence, in [0, 1)', () => {
  const a = seededRandom(42);
  const b = seededRandom(42);
  const xs = Array.from({ length: 100 }, () => a());
  expect(Array.from({ length: 100 }, () => b())).toEqual(xs);
  expect(xs.every((x) => x >= 0 && x < 1)).toBe(true);
  expect(seededRandom(43)()).not.toBe(xs[0]);
});
