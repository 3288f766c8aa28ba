/**
 * Segments (`--segment i/N`) stripe a plan's arrivals: arrival k goes to segment k mod N. The
 * property: the N segments' plans together are exactly the single-process plan — the same number
 * of sends per phase and the same intended times, each once — for constant rates and stages.
 */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { type PhaseInput, type PlannedPhase, parseSegment, phaseOffsetMs, planPhases, segmentCount, segmentPlan } from '../../src/load/plan/plan.js';
import { assertProperty } from '../helpers/property.js';

/** Every intended send time of a phase, in order. */
const offsets = (phase: PlannedPhase): number[] => Array.from({ length: phase.count }, (_, j) => phaseOffsetMs(phase, j));

const constantPhase = fc.record({
  name: fc.constant('load'),
  durationMs: fc.integer({ min: 0, max: 20_000 }),
  rate: fc.double({ min: 0.1, max: 300, noNaN: true }),
  warmup: fc.boolean(),
});
const stagedPhase = fc.record({
  name: fc.constant('ramp'),
  durationMs: fc.constant(0),
  rate: fc.constant(0),
  warmup: fc.constant(false),
  stages: fc.record({
    startRate: fc.double({ min: 0, max: 300, noNaN: true }),
    stages: fc
      .array(fc.record({ durationMs: fc.integer({ min: 0, max: 10_000 }), target: fc.double({ min: 0, max: 300, noNaN: true }) }), {
        minLength: 1,
        maxLength: 3,
      })
      .filter((stages) => stages.some((s) => s.durationMs > 0)),
  }),
});
const phasesArb = fc.array(fc.oneof(constantPhase, stagedPhase) as fc.Arbitrary<PhaseInput>, { minLength: 1, maxLength: 3 });

describe('segments of a plan', () => {
  test('the N segments together send exactly the whole plan: each arrival once, at its intended time', () => {
    assertProperty(
      fc.property(phasesArb, fc.integer({ min: 1, max: 9 }), (inputs, n) => {
        const whole = planPhases(inputs);
        const segments = Array.from({ length: n }, (_, i) => segmentPlan(whole, { index: i, count: n }));
        for (const [p, phase] of whole.entries()) {
          const parts = segments.map((plan) => plan[p] as PlannedPhase);
          // Same phase boundaries: one intended timeline.
          for (const part of parts) expect([part.startMs, part.durationMs]).toEqual([phase.startMs, phase.durationMs]);
          expect(parts.reduce((sum, part) => sum + part.count, 0)).toBe(phase.count);
          // Arrival k is sent by segment k mod N as its (k div N)-th send, at the whole plan's time, to the bit.
          const expected = offsets(phase);
          for (const [k, at] of expected.entries()) expect(phaseOffsetMs(parts[k % n] as PlannedPhase, Math.floor(k / n))).toBe(at);
          const union = parts.flatMap(offsets).sort((a, b) => a - b);
          expect(union).toEqual([...expected].sort((a, b) => a - b));
        }
      }),
      { numRuns: 60 },
    );
  });

  test('a segment keeps its share in order, so its executor sends them in time order', () => {
    const [phase] = planPhases([{ name: 'load', durationMs: 1_000, rate: 10, warmup: false }]);
    const part = segmentPlan([phase as PlannedPhase], { index: 1, count: 4 })[0] as PlannedPhase;
    expect(part.count).toBe(3);
    expect(offsets(part)).toEqual([100, 500, 900]);
  });

  test('segment counts: 10 arrivals over 4 segments are 3, 3, 2, 2; fewer arrivals than segments leave some empty', () => {
    expect([0, 1, 2, 3].map((index) => segmentCount(10, { index, count: 4 }))).toEqual([3, 3, 2, 2]);
    expect([0, 1, 2, 3].map((index) => segmentCount(2, { index, count: 4 }))).toEqual([1, 1, 0, 0]);
    expect(segmentCount(0, { index: 0, count: 1 })).toBe(0);
  });

  test('--segment text: i/N with 0 ≤ i < N, and the message says how to write it', () => {
    expect(parseSegment('2/4')).toEqual({ index: 2, count: 4 });
    expect(parseSegment(' 0 / 1 ')).toEqual({ index: 0, count: 1 });
    expect(parseSegment('4/4')).toMatch(/i must be below N/);
    expect(parseSegment('1/0')).toMatch(/N must be 1 or more/);
    expect(parseSegment('1of4')).toMatch(/write i\/N/);
    expect(parseSegment('-1/4')).toMatch(/write i\/N/);
  });
});
