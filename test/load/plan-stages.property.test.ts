/**
 * The staged plan (a ramping arrival rate) is pure: its count, its send times and their place in
 * the stages are checked as properties against an integral of the rate computed independently here.
 */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { intendedOffsetMs, parseDurationMs, phaseOffsetMs, planPhases, plannedCount } from '../../src/load/plan/plan.js';
import { type Stage, parseStage, planStages, rateAt, stageOf, stagedCount, stagedOffsetMs, stagesProblem } from '../../src/load/plan/stages.js';
import { assertProperty } from '../helpers/property.js';

/** The integral of the rate from 0 to `t` ms, requests: the trapezoids of every stage up to t. */
function integral(startRate: number, stages: readonly Stage[], t: number): number {
  let n = 0;
  let from = startRate;
  let at = 0;
  for (const s of stages) {
    const end = at + s.durationMs;
    if (s.durationMs > 0) {
      const upTo = Math.min(Math.max(t, at), end);
      const rateThere = from + ((s.target - from) * (upTo - at)) / s.durationMs;
      n += ((from + rateThere) / 2) * ((upTo - at) / 1000);
    }
    from = s.target;
    at = end;
  }
  return n;
}

const total = (stages: readonly Stage[]) => stages.reduce((sum, s) => sum + s.durationMs, 0);

/** Small enough that every send of every case can be checked: at most 4 × 20 s × 400 req/s. */
const stage = fc.record({ durationMs: fc.integer({ min: 0, max: 20_000 }), target: fc.oneof(fc.constant(0), fc.double({ min: 0, max: 400, noNaN: true })) });
const stagesArb = fc
  .tuple(fc.oneof(fc.constant(0), fc.double({ min: 0, max: 400, noNaN: true })), fc.array(stage, { minLength: 1, maxLength: 4 }))
  .filter(([, stages]) => total(stages) > 0);

describe('staged plan', () => {
  test('plans round(integral of the rate) requests', () => {
    expect(stagedCount(planStages(0, [{ durationMs: 10_000, target: 100 }]))).toBe(500);
    expect(
      stagedCount(
        planStages(0, [
          { durationMs: 30_000, target: 100 },
          { durationMs: 120_000, target: 2000 },
          { durationMs: 30_000, target: 0 },
        ]),
      ),
    ).toBe(1500 + 126_000 + 30_000);
    expect(stagedCount(planStages(0, [{ durationMs: 10_000, target: 0 }]))).toBe(0);
    assertProperty(
      fc.property(stagesArb, ([startRate, stages]) => {
        const n = integral(startRate, stages, total(stages));
        const count = stagedCount(planStages(startRate, stages));
        expect(Math.abs(count - n)).toBeLessThanOrEqual(0.5 + 1e-6);
        if (Math.abs(n - Math.round(n)) > 1e-6 && Math.abs((n % 1) - 0.5) > 1e-6) expect(count).toBe(Math.round(n));
      }),
    );
  });

  test('send times are monotone, inside the phase, inside their stage, and where the integral reaches their index', () => {
    assertProperty(
      fc.property(stagesArb, ([startRate, stages]) => {
        const plan = planStages(startRate, stages);
        const count = stagedCount(plan);
        let previous = 0;
        for (let i = 0; i < count; i++) {
          const t = stagedOffsetMs(plan, i);
          expect(t).toBeGreaterThanOrEqual(previous);
          expect(t).toBeGreaterThanOrEqual(0);
          expect(t).toBeLessThan(total(stages));
          const k = stageOf(plan, i);
          expect(t).toBeGreaterThanOrEqual(plan.boundariesMs[k] as number);
          expect(t).toBeLessThanOrEqual(plan.boundariesMs[k + 1] as number);
          // The stage's own requests: the integral at its start is at most i, at its end more than i.
          expect(integral(startRate, stages, plan.boundariesMs[k] as number)).toBeLessThanOrEqual(i + 1e-6);
          expect(integral(startRate, stages, plan.boundariesMs[k + 1] as number)).toBeGreaterThan(i - 1e-6);
          expect(Math.abs(integral(startRate, stages, t) - i)).toBeLessThanOrEqual(1e-6 * Math.max(1, i));
          previous = t;
        }
      }),
      { numRuns: 60 },
    );
  });

  test('a constant stage is the constant-rate plan exactly', () => {
    assertProperty(
      fc.property(fc.double({ min: 0.01, max: 500, noNaN: true }), fc.integer({ min: 1, max: 10_000 }), (rate, durationMs) => {
        const plan = planStages(rate, [{ durationMs, target: rate }]);
        const count = stagedCount(plan);
        expect(count).toBe(plannedCount(rate, durationMs));
        // One comparison per case, not one expect per send: cheap on a busy machine.
        const staged = Array.from({ length: count }, (_, i) => stagedOffsetMs(plan, i));
        const constant = Array.from({ length: count }, (_, i) => intendedOffsetMs(i, rate));
        expect(staged).toEqual(constant);
      }),
      { numRuns: 40 },
    );
    const [constant] = planPhases([
      { name: 'load', durationMs: 0, rate: 0, warmup: false, stages: { startRate: 40, stages: [{ durationMs: 3_000, target: 40 }] } },
    ]);
    const [reference] = planPhases([{ name: 'load', durationMs: 3_000, rate: 40, warmup: false }]);
    expect(constant?.count).toBe(reference?.count);
    expect(constant?.durationMs).toBe(3_000);
    expect(constant?.rate).toBe(40);
    for (let i = 0; i < 120; i++) expect(phaseOffsetMs(constant!, i)).toBe(phaseOffsetMs(reference!, i));
  });

  test('regression: a constant stage one rounding error from a half planned one request more than the constant plan', () => {
    // 499.99999999999994/s × 8.817 s: the trapezoid (a + b) / 2 · d gave 4408.5, rate × d / 1000 gives 4408.4999….
    const plan = planStages(499.99999999999994, [{ durationMs: 8817, target: 499.99999999999994 }]);
    expect(stagedCount(plan)).toBe(plannedCount(499.99999999999994, 8817));
  });

  test('a linear ramp from 0 sends request i at √(2·i·D/target)', () => {
    const plan = planStages(0, [{ durationMs: 10_000, target: 100 }]);
    expect(stagedOffsetMs(plan, 0)).toBe(0);
    expect(stagedOffsetMs(plan, 100)).toBeCloseTo(Math.sqrt((2 * 100 * 10) / 100) * 1000, 6);
    expect(stagedOffsetMs(plan, 499)).toBeCloseTo(Math.sqrt((2 * 499 * 10) / 100) * 1000, 6);
  });

  test('a stage at rate 0 sends nothing: the first request waits for the rate to rise', () => {
    const plan = planStages(0, [
      { durationMs: 5_000, target: 0 },
      { durationMs: 1_000, target: 10 },
      { durationMs: 1_000, target: 10 },
      { durationMs: 4_000, target: 0 },
    ]);
    expect(stagedOffsetMs(plan, 0)).toBe(5_000);
    expect(stagedCount(plan)).toBe(5 + 10 + 20);
    expect(stagedOffsetMs(plan, 34)).toBeLessThan(11_000);
    expect(rateAt(plan, 2_000)).toBe(0);
    expect(rateAt(plan, 5_500)).toBe(5);
    expect(rateAt(plan, 6_500)).toBe(10);
  });

  test("phases with stages are laid end to end with their stages' duration", () => {
    const phases = planPhases([
      { name: 'warm-up', durationMs: 2_000, rate: 50, warmup: true },
      {
        name: 'load',
        durationMs: 0,
        rate: 0,
        warmup: false,
        stages: {
          startRate: 0,
          stages: [
            { durationMs: 4_000, target: 100 },
            { durationMs: 1_000, target: 100 },
          ],
        },
      },
      { name: 'after', durationMs: 1_000, rate: 10, warmup: false },
    ]);
    expect(phases.map((p) => [p.startMs, p.durationMs, p.count])).toEqual([
      [0, 2_000, 100],
      [2_000, 5_000, 300],
      [7_000, 1_000, 10],
    ]);
  });
});

describe('parseStage and stagesProblem', () => {
  test('reads DURATION:TARGET with a unit', () => {
    expect(parseStage('30s:100', parseDurationMs)).toEqual({ durationMs: 30_000, target: 100 });
    expect(parseStage(' 2m : 2000 ', parseDurationMs)).toEqual({ durationMs: 120_000, target: 2000 });
    expect(parseStage('500ms:0', parseDurationMs)).toEqual({ durationMs: 500, target: 0 });
    expect(parseStage('30:100', parseDurationMs)).toMatch(/has no unit/);
    expect(parseStage('30s', parseDurationMs)).toMatch(/is not a stage/);
    expect(parseStage('xs:100', parseDurationMs)).toMatch(/is not a duration/);
    expect(parseStage('30s:lots', parseDurationMs)).toMatch(/is not a rate/);
    expect(parseStage('30s:-5', parseDurationMs)).toMatch(/0 or more/);
  });

  test('refuses no stages, a negative start and stages of no time in total', () => {
    expect(stagesProblem(0, [])).toMatch(/no stages/);
    expect(stagesProblem(-1, [{ durationMs: 1000, target: 1 }])).toMatch(/start rate/);
    expect(stagesProblem(0, [{ durationMs: 0, target: 100 }])).toMatch(/no time in total/);
    expect(
      stagesProblem(0, [
        { durationMs: 0, target: 100 },
        { durationMs: 10, target: 100 },
      ]),
    ).toBeUndefined();
  });
});
