/**
 * The scenario example of the README ("Writing a scenario"), verbatim apart from the import
 * path, run for real against the embedded simulator: if this test breaks, the README is wrong.
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import { defineScenario } from '../../src/load/scenario.js';
import { runScenario } from '../../src/load/runner.js';
import { type Target, startEmbeddedSimulator } from '../../src/load/target.js';
import { parseThreshold } from '../../src/load/thresholds.js';

const scenario = defineScenario({
  name: 'my-scenario',
  description: 'One line for keysim list',
  requires: [],                        // ['clock'] if it moves the service clock (simulator only)
  defaults: { rate: 200, durationMs: 10_000, warmupMs: 2_000 },
  // Fixtures through the public API (so the scenario also runs on a live target), named with ctx.tag.
  async setup(ctx) {
    const { apiId } = await ctx.api.data<{ apiId: string }>('apis.createApi', { name: `${ctx.tag}-api` });
    const { keyId, key } = await ctx.api.data<{ keyId: string; key: string }>('keys.createKey', { apiId, credits: { remaining: 1000 } });
    ctx.onCleanup(async () => void (await ctx.api.call('keys.deleteKey', { keyId })));
    return { key };
  },
  // A weighted mix; each entry builds a request from the fixtures and the seeded random, and may check the answer.
  mix: [
    {
      weight: 1,
      build: (f) => ({ op: 'keys.verifyKey', body: { key: f.key } }),
      check: (res) => (res.status === 200 ? undefined : `HTTP ${res.status}`),
    },
  ],
  // Optional: phases (each with its rate, duration, mix, and a `before` step, e.g. ctx.admin.clockSet(…)),
  // end-of-run checks over the figures, and default thresholds.
  async finish(ctx, f, results) {
    const valid = results.operation('keys.verifyKey')?.codes.VALID ?? 0;
    return [{ name: 'no more VALID than credits', passed: valid <= 1000, detail: `${valid} VALID` }];
  },
  thresholds: ['errors == 0', 'checks == 0'],
});

let target: Target;
beforeAll(async () => {
  target = await startEmbeddedSimulator({ seed: 3 });
});
afterAll(() => target.close());

test('the README scenario runs, checks its answers and passes its thresholds', async () => {
  const report = await runScenario({
    scenario,
    target,
    settings: { rate: 100, durationMs: 1_000, warmupMs: 0, connections: 4, pipelining: 1, timeoutMs: 5_000, model: 'open' },
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
  expect(report.operations[0]?.codes).toEqual({ VALID: 100 });
  expect(report.checks.map((c) => [c.name, c.passed])).toEqual([
    ['per-response checks', true],
    ['no more VALID than credits', true],
  ]);
  expect(report.thresholds.every((t) => t.passed)).toBe(true);
});
