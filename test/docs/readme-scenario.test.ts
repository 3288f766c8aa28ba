/**
 * The README's scenario example (`checks/leap-refill.ts`, kept verbatim apart from the import path
 * in examples/leap-refill.ts; readme-examples.test.ts checks that the two agree), run for real
 * against the embedded simulator: if this test breaks, the README is wrong.
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import scenario from './examples/leap-refill.js';
import { runScenario } from '../../src/load/runner.js';
import { type Target, startEmbeddedSimulator } from '../../src/load/target.js';
import { parseThreshold } from '../../src/load/thresholds.js';

let target: Target;
beforeAll(async () => {
  target = await startEmbeddedSimulator({ seed: 3 });
});
afterAll(() => target.close());

test('the README scenario refuses on 28 February and refills on 29 February 2096, and passes its checks', async () => {
  const report = await runScenario({
    scenario,
    target,
    settings: { rate: 50, durationMs: 1_000, warmupMs: 0, connections: 4, pipelining: 1, timeoutMs: 5_000, model: 'open' },
    seed: 3,
    thresholds: (scenario.thresholds ?? []).map((t) => {
      const parsed = parseThreshold(t);
      if (!parsed.ok) throw new Error(parsed.error);
      return parsed.threshold;
    }),
    keep: false,
    keysimVersion: 'test',
  });
  expect(report.operations.map((o) => o.operation)).toEqual(['keys.verifyKey']);
  // One second per phase at 50/s: the first refused, the second refilled.
  expect(report.operations[0]?.codes).toEqual({ USAGE_EXCEEDED: 50, VALID: 50 });
  expect(report.checks.map((c) => [c.name, c.passed])).toEqual([['per-response checks', true]]);
  expect(report.thresholds.every((t) => t.passed)).toBe(true);
});
