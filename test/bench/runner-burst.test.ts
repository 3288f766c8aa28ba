/**
 * The runner benchmark's burst arrivals (autocannon's shape, bench/runner-generators.ts): the plan
 * holds rate × seconds requests, each second's all due within its first millisecond and in order,
 * none in the rest of the second.
 */
import { expect, test } from 'vitest';
import { burstStages } from '../../bench/runner-generators.js';
import { phaseOffsetMs, planPhases } from '../../src/load/plan/plan.js';

for (const [rate, seconds] of [
  [1_000, 4],
  [7, 3],
] as const) {
  test(`${rate}/s for ${seconds} s: each second's ${rate} requests are due in its first millisecond`, () => {
    const [phase] = planPhases([{ name: 'burst', durationMs: seconds * 1000, rate, warmup: false, stages: burstStages(rate, seconds) }]);
    if (phase === undefined) throw new Error('no phase');
    expect(phase.count).toBe(rate * seconds);
    expect(phase.durationMs).toBe(seconds * 1000);
    const offsets = Array.from({ length: phase.count }, (_, i) => phaseOffsetMs(phase, i));
    const perSecond = Array.from({ length: seconds }, (_, s) => offsets.filter((t) => t >= s * 1000 && t < s * 1000 + 1).length);
    expect(perSecond).toEqual(Array.from({ length: seconds }, () => rate));
    // In the plan's order: never a later request due before an earlier one.
    expect(offsets.every((t, i) => i === 0 || t >= (offsets[i - 1] as number))).toBe(true);
  });
}
