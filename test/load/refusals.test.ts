/**
 * No silent pass, no harm before a refusal: a scenario calling an operation keysim does not know
 * is refused before any load, naming the nearest valid one; an answer saying the service has no
 * such route is a failed check, never a pass; a scenario that moves the clock is refused against
 * a simulator whose clock runs, before anything is sent: its clock and its resources unchanged.
 * Real simulators on 127.0.0.1 port 0.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { SCENARIOS } from '../../scenarios/index.js';
import { createSimulator, type Simulator } from '../../src/http/simulator.js';
import { embeddedClockOption } from '../../src/load/time/clock-needs.js';
import { nearestOperation, operationProblem } from '../../src/load/scenario/operation-names.js';
import { noSuchRoute } from '../../src/load/target/route-miss.js';
import { ScenarioRefusedError, runScenario } from '../../src/load/run/runner.js';
import type { Operation, Scenario } from '../../src/load/scenario/scenario.js';
import { createKey, createTaggedApi } from '../../src/load/scenario/scenario-fixtures.js';
import { detectUrlTarget, startEmbeddedSimulator } from '../../src/load/target/target.js';
import { loadSettings } from '../helpers/load.js';

const base = { settings: loadSettings({ rate: 20, durationMs: 500 }), seed: 11, thresholds: [], keep: false, keysimVersion: 'test' } as const;

/** A scenario verifying one key, whose mix names `op` (a string from a file: not type-checked). */
function verifying(name: string, op: (call: number) => string): Scenario<{ key: string }> {
  let calls = 0;
  return {
    name,
    description: 'verifies one key',
    setup: async (ctx) => createKey(ctx, { apiId: await createTaggedApi(ctx, name) }),
    mix: [{ weight: 1, build: (f) => ({ op: op(calls++) as Operation, body: { key: f.key } }), check: () => undefined }],
  };
}

describe('operation names', () => {
  test('a misspelt operation names the nearest valid one', () => {
    expect(nearestOperation('keys.verifyKye')).toBe('keys.verifyKey');
    expect(nearestOperation('ratelimit.multilimit')).toBe('ratelimit.multiLimit');
    expect(nearestOperation('identities.getIdentiy')).toBe('identities.getIdentity');
    expect(operationProblem('keys.verifyKye', 'the mix, entry 0,')).toContain('unknown operation "keys.verifyKye" (did you mean keys.verifyKey?)');
    expect(operationProblem('keys.verifyKey', 'x')).toBeUndefined();
  });

  test('a no-such-route answer is never a pass; a 404 of the operation is its answer', () => {
    const routeMiss = {
      meta: { requestId: 'r' },
      error: { title: 'Not Found', detail: 'No operation', status: 404, type: 'https://unkey.com/docs/errors/service/application/route_not_found' },
    };
    expect(noSuchRoute(404, routeMiss)).toMatch(/no such route/);
    expect(noSuchRoute(404, undefined)).toMatch(/without its error envelope/);
    expect(noSuchRoute(405, undefined)).toMatch(/405/);
    const keyMissing = {
      meta: { requestId: 'r' },
      error: { title: 'Not Found', detail: 'no key', status: 404, type: 'https://unkey.com/docs/errors/unkey/data/key_not_found' },
    };
    expect(noSuchRoute(404, keyMissing)).toBeUndefined();
    expect(noSuchRoute(200, undefined)).toBeUndefined();
  });
});

describe('against the embedded simulator', () => {
  test('a scenario with a misspelt operation (keys.verifyKye) is refused before any load, naming keys.verifyKey', async () => {
    const target = await startEmbeddedSimulator({ seed: 1 });
    try {
      const run = runScenario({ ...base, target, scenario: verifying('misspelt', () => 'keys.verifyKye') as Scenario<unknown> });
      await expect(run).rejects.toThrow(ScenarioRefusedError);
      await expect(run).rejects.toThrow(/was refused at planning, before any load: .*unknown operation "keys\.verifyKye" \(did you mean keys\.verifyKey\?\)/);
    } finally {
      await target.close();
    }
  }, 60_000);

  test('a setup calling a misspelt operation is refused, never sent', async () => {
    const target = await startEmbeddedSimulator({ seed: 2 });
    try {
      const scenario: Scenario<unknown> = {
        ...verifying('misspelt-setup', () => 'keys.verifyKey'),
        setup: async (ctx) => ctx.api.data('apis.createAPI' as Operation, { name: 'x' }),
      } as Scenario<unknown>;
      await expect(runScenario({ ...base, target, scenario })).rejects.toThrow(/unknown operation "apis\.createAPI" \(did you mean apis\.createApi\?\)/);
    } finally {
      await target.close();
    }
  }, 60_000);

  test('a 404 for a route the service does not have is counted as a failed check, not a pass (exit 98, not 0)', async () => {
    // The probe before the load sees keys.verifyKey; the load's requests then go to a route that does not exist.
    const target = await startEmbeddedSimulator({ seed: 3 });
    try {
      const report = await runScenario({
        ...base,
        target,
        scenario: verifying('route-miss', (call) => (call === 0 ? 'keys.verifyKey' : 'keys.verifyKye')) as Scenario<unknown>,
      });
      const failed = report.checks.find((c) => !c.passed);
      expect(failed?.detail).toMatch(/no such route/);
      expect(report.operations.find((o) => o.operation === 'keys.verifyKye')?.checkFailures).toBeGreaterThan(0);
    } finally {
      await target.close();
    }
  }, 60_000);
});

describe('a scenario that moves the clock, against a simulator whose clock runs', () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await createSimulator({ clock: 'system' });
  });
  afterAll(() => sim.close());

  const snapshotOf = async (): Promise<unknown> => {
    const res = await fetch(`${sim.url}/_sim/snapshot`, {
      method: 'POST',
      headers: { authorization: `Bearer ${sim.rootKey}`, 'content-type': 'application/json' },
      body: '{}',
    });
    const data = ((await res.json()) as { data: Record<string, unknown> }).data;
    // The snapshot's own instant moves with the clock; everything else is the target's state.
    return { ...data, takenAtMs: undefined, clock: undefined };
  };

  for (const name of ['refill-month-end', 'ratelimit-window-edge']) {
    test(`${name} on a running-clock keysim serve is refused before setup: the clock and the resources unchanged`, async () => {
      const scenario = SCENARIOS[name] as Scenario<unknown>;
      const { target } = await detectUrlTarget(sim.url, sim.rootKey);
      const before = await snapshotOf();
      const offsetBefore = sim.clock.now() - Date.now();
      const run = runScenario({ ...base, target, scenario });
      await expect(run).rejects.toThrow(ScenarioRefusedError);
      await expect(run).rejects.toThrow(/needs a frozen \(manual\) clock.*runs on the system clock: nothing was sent.*--clock manual/);
      // Two years ahead would be tens of millions of seconds: the offset stayed within the readings' spread.
      expect(Math.abs(sim.clock.now() - Date.now() - offsetBefore)).toBeLessThan(60_000);
      expect(await snapshotOf()).toEqual(before);
      expect(sim.engine.stats().keys).toBe(0);
    }, 60_000);
  }
});

describe('the production-like mixed scenario', () => {
  test('mixed gets a running clock on the embedded simulator (a frozen one never rolled a window): the service clock moves during its run', async () => {
    const mixed = SCENARIOS.mixed as Scenario<unknown>;
    expect(embeddedClockOption(mixed)).toEqual({ clock: 'system' });
    expect(embeddedClockOption(SCENARIOS.smoke as Scenario<unknown>)).toEqual({});
    const target = await startEmbeddedSimulator({ seed: 4, ...embeddedClockOption(mixed) });
    try {
      const { simulatorAdmin, httpJsonClient } = await import('../../src/load/target/service-api.js');
      const client = httpJsonClient(target, 5_000);
      const admin = simulatorAdmin(client);
      expect(await admin.clockMode()).toBe('system');
      const before = await admin.clockNow();
      const report = await runScenario({ ...base, settings: loadSettings({ rate: 20, durationMs: 1_000, warmupMs: 0 }), target, scenario: mixed });
      expect(report.checks.filter((c) => !c.passed)).toEqual([]);
      expect(await admin.clockNow()).toBeGreaterThan(before + 900);
      await client.close();
    } finally {
      await target.close();
    }
  }, 90_000);
});
