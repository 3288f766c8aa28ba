/**
 * The load plan is pure (docs/architecture.md#conventions): counts, intended send times and phase layout are
 * checked as properties over arbitrary rates and durations; durations are parsed from flags.
 */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { intendedOffsetMs, parseDurationMs, planPhases, plannedCount } from '../../src/load/plan/plan.js';
import { assertProperty } from '../helpers/property.js';

/** Rates from a trickle to far more than a loopback run ever uses, requests/s. */
const rate = fc.double({ min: 0.01, max: 50_000, noNaN: true, noDefaultInfinity: true });
/** Phase durations from 1 ms to a day. */
const durationMs = fc.integer({ min: 1, max: 86_400_000 });

const phaseInput = fc.record({
  name: fc.string({ maxLength: 8 }),
  durationMs,
  rate,
  warmup: fc.boolean(),
});

describe('plannedCount', () => {
  test('is round(rate × duration in seconds); exact for whole rates and whole seconds', () => {
    expect(plannedCount(100, 10_000)).toBe(1_000);
    expect(plannedCount(50, 2_000)).toBe(100);
    expect(plannedCount(3, 500)).toBe(2); // 1.5 rounds up
    expect(plannedCount(1, 400)).toBe(0);
    assertProperty(
      fc.property(fc.integer({ min: 1, max: 100_000 }), fc.integer({ min: 1, max: 86_400 }), (r, seconds) => {
        expect(plannedCount(r, seconds * 1000)).toBe(r * seconds);
      }),
    );
    assertProperty(
      fc.property(rate, durationMs, (r, d) => {
        const count = plannedCount(r, d);
        expect(Number.isInteger(count)).toBe(true);
        expect(Math.abs(count - (r * d) / 1000)).toBeLessThanOrEqual(0.5 + 1e-9);
      }),
    );
  });

  test('plans nothing for a zero, negative or NaN rate or duration', () => {
    for (const [r, d] of [
      [0, 1000],
      [-5, 1000],
      [Number.NaN, 1000],
      [100, 0],
      [100, -1000],
      [100, Number.NaN],
    ] as const) {
      expect(plannedCount(r, d)).toBe(0);
    }
  });
});

describe('intended send times', () => {
  test('start at 0, never decrease, are evenly spaced by 1000/rate and all fall inside [0, duration)', () => {
    assertProperty(
      fc.property(rate, durationMs, (r, d) => {
        const count = plannedCount(r, d);
        fc.pre(count > 0);
        const spacing = 1000 / r;
        // Check the edges and a stride through the middle: plans can hold millions of sends.
        const stride = Math.max(1, Math.floor(count / 200));
        const indices = new Set<number>([0, 1, count - 2, count - 1]);
        for (let i = 0; i < count; i += stride) indices.add(i);
        const sorted = [...indices].filter((i) => i >= 0 && i < count).sort((a, b) => a - b);
        expect(intendedOffsetMs(0, r)).toBe(0);
        const problems: string[] = [];
        let previous = -Infinity;
        for (const i of sorted) {
          const at = intendedOffsetMs(i, r);
          const next = intendedOffsetMs(i + 1, r);
          if (at < previous) problems.push(`offset ${i} (${at}) is before offset ${i - 1}`);
          if (!(at >= 0 && at < d)) problems.push(`offset ${i} (${at}) is outside [0, ${d})`);
          // Floating point: the error grows with the offset's magnitude, not with the spacing.
          if (Math.abs(next - at - spacing) > spacing * 1e-9 + next * 1e-12) problems.push(`gap after ${i} is ${next - at}, not ${spacing}`);
          previous = at;
        }
        expect(problems).toEqual([]);
      }),
    );
  });

  test('a whole plan of moderate size: every offset, in order, inside the phase', () => {
    assertProperty(
      fc.property(fc.integer({ min: 1, max: 2_000 }), fc.integer({ min: 1, max: 5_000 }), (r, d) => {
        const count = plannedCount(r, d);
        const offsets = Array.from({ length: count }, (_, i) => intendedOffsetMs(i, r));
        // One assertion per plan (not per offset): plans have up to ten thousand sends here.
        const outside = offsets.filter((at) => !(at >= 0 && at < d));
        const unordered = offsets.filter((at, i) => i > 0 && !(at > (offsets[i - 1] as number)));
        expect({ count: offsets.length, outside, unordered }).toEqual({ count: plannedCount(r, d), outside: [], unordered: [] });
      }),
      { numRuns: 50 },
    );
  });
});

describe('planPhases', () => {
  test('lays phases end to end, keeps their settings and plans round(rate × duration) each', () => {
    assertProperty(
      fc.property(fc.array(phaseInput, { maxLength: 8 }), (inputs) => {
        const planned = planPhases(inputs);
        expect(planned).toHaveLength(inputs.length);
        let start = 0;
        for (const [i, phase] of planned.entries()) {
          const input = inputs[i];
          if (input === undefined) throw new Error('unreachable');
          expect(phase).toEqual({ ...input, startMs: start, count: plannedCount(input.rate, input.durationMs) });
          start += input.durationMs;
        }
        const last = planned.at(-1);
        if (last !== undefined) expect(last.startMs + last.durationMs).toBe(inputs.reduce((n, p) => n + p.durationMs, 0));
      }),
    );
  });

  test('is pure: the same input gives the same plan, and the input is not modified', () => {
    assertProperty(
      fc.property(fc.array(phaseInput, { maxLength: 5 }), (inputs) => {
        const copy = structuredClone(inputs);
        expect(planPhases(inputs)).toEqual(planPhases(copy));
        expect(inputs).toEqual(copy);
      }),
    );
  });

  test('an example: warm-up 1 s at 10/s, then 2 s at 50/s', () => {
    expect(
      planPhases([
        { name: 'warm-up', durationMs: 1_000, rate: 10, warmup: true },
        { name: 'load', durationMs: 2_000, rate: 50, warmup: false },
      ]),
    ).toEqual([
      { name: 'warm-up', durationMs: 1_000, rate: 10, warmup: true, startMs: 0, count: 10 },
      { name: 'load', durationMs: 2_000, rate: 50, warmup: false, startMs: 1_000, count: 100 },
    ]);
  });
});

describe('parseDurationMs', () => {
  test.each([
    ['30s', 30_000],
    ['500ms', 500],
    ['2m', 120_000],
    ['1h', 3_600_000],
    ['1.5s', 1_500],
    ['0.25m', 15_000],
    ['10', 10_000],
    [' 3s ', 3_000],
    ['0s', 0],
    ['0', 0],
  ])('%j → %d ms', (text, ms) => {
    expect(parseDurationMs(text)).toBe(ms);
  });

  test.each(['', ' ', 's', 'ms', '-1s', '+1s', '1.s', '.5s', '1d', '1e3', '1,5s', '30sec', 'NaN', 'Infinity', 'abc', '1 2s', '1s2', '9'.repeat(400)])(
    'rejects %j',
    (text) => {
      expect(parseDurationMs(text)).toBeUndefined();
    },
  );

  test('a whole number with a unit is that many units', () => {
    const factors = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 } as const;
    assertProperty(
      fc.property(fc.integer({ min: 0, max: 1_000_000 }), fc.constantFrom('ms', 's', 'm', 'h'), (n, unit) => {
        expect(parseDurationMs(`${n}${unit}`)).toBe(n * factors[unit]);
      }),
    );
  });
});
