/**
 * A run with stages on the embedded simulator, over real sockets: the run's stages drive its
 * measured phase, a scenario phase can ramp through its own, and every planned send is made —
 * counted, not timed (the machine may be busy: late sends are still sends).
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { runScenario } from '../../src/load/run/runner.js';
import { type MixEntry, type Scenario, defineScenario } from '../../src/load/scenario/scenario.js';
import { type Target, startEmbeddedSimulator } from '../../src/load/target/target.js';
import { stagedCount, planStages } from '../../src/load/plan/stages.js';
import { loadSettings } from '../helpers/load.js';

interface KeyFixtures {
  keyId: string;
  key: string;
}

const CREDITS = 1_000;

const verify: MixEntry<KeyFixtures> = { weight: 1, build: (f) => ({ op: 'keys.verifyKey', body: { key: f.key } }) };

async function setup(ctx: Parameters<Scenario<unknown>['setup']>[0]): Promise<KeyFixtures> {
  const { apiId } = await ctx.api.data<{ apiId: string }>('apis.createApi', { name: `${ctx.tag}-stages` });
  return ctx.api.data<KeyFixtures>('keys.createKey', { apiId, credits: { remaining: CREDITS } });
}

async function remaining(target: Target, f: KeyFixtures): Promise<number> {
  const res = await fetch(`${target.url}/v2/keys.getKey`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${target.rootKey}` },
    body: JSON.stringify({ keyId: f.keyId }),
  });
  const body = (await res.json()) as { data: { credits: { remaining: number } } };
  return body.data.credits.remaining;
}

describe('a staged run on the embedded simulator', () => {
  let sim: Target;
  beforeAll(async () => {
    sim = await startEmbeddedSimulator({ seed: 5 });
  });
  afterAll(async () => {
    await sim?.close();
  });

  test("the run's stages drive the measured phase: every planned send is made and spends a credit", async () => {
    let fixtures: KeyFixtures | undefined;
    const scenario = defineScenario<KeyFixtures>({
      name: 'staged',
      description: 'verifications through a ramp',
      setup: async (ctx) => (fixtures = await setup(ctx)),
      mix: [verify],
    });
    const stages = [
      { durationMs: 500, target: 40 },
      { durationMs: 500, target: 40 },
      { durationMs: 500, target: 0 },
    ];
    const planned = stagedCount(planStages(0, stages));
    expect(planned).toBe(10 + 20 + 10);
    const report = await runScenario({
      scenario: scenario as unknown as Scenario<unknown>,
      target: sim,
      settings: loadSettings({ durationMs: 1_500, warmupMs: 0, startRate: 0, stages }),
      seed: 7,
      thresholds: [],
      keep: false,
      keysimVersion: '0.0.0-test',
    });
    expect(report.status).toBe('completed');
    expect(report.totals.dropped).toBe(0);
    expect(report.totals.requests).toBe(planned);
    expect(report.settings.stages).toEqual(stages);
    expect(report.phases.map((p) => [p.name, p.stages?.length])).toEqual([['load', 3]]);
    expect(CREDITS - (await remaining(sim, fixtures as KeyFixtures))).toBe(planned);
  });

  test('a scenario phase ramps through its own stages after a constant warm-up', async () => {
    let fixtures: KeyFixtures | undefined;
    const scenario = defineScenario<KeyFixtures>({
      name: 'own-stages',
      description: 'a warm-up, then a spike',
      setup: async (ctx) => (fixtures = await setup(ctx)),
      mix: [verify],
      phases: () => [
        { name: 'warm-up', durationMs: 500, rate: 20, warmup: true },
        {
          name: 'spike',
          startRate: 10,
          stages: [
            { durationMs: 200, target: 100 },
            { durationMs: 600, target: 10 },
          ],
        },
      ],
    });
    // 0.2 s from 10 to 100 (11) and 0.6 s back to 10 (33): 44; the warm-up's 10 are not measured.
    const report = await runScenario({
      scenario: scenario as unknown as Scenario<unknown>,
      target: sim,
      settings: loadSettings({ warmupMs: 0 }),
      seed: 7,
      thresholds: [],
      keep: false,
      keysimVersion: '0.0.0-test',
    });
    expect(report.status).toBe('completed');
    expect(report.totals.requests).toBe(44);
    expect(report.phases.map((p) => [p.name, p.warmup, p.startRate])).toEqual([
      ['warm-up', true, undefined],
      ['spike', false, 10],
    ]);
    expect(CREDITS - (await remaining(sim, fixtures as KeyFixtures))).toBe(10 + 44);
  });
});
