/**
 * The scenarios, run against a real simulator by a small harness of our own (test/helpers/
 * scenario-harness.ts): setup, phases with a bounded number of requests, per-response checks,
 * finish checks, cleanup. Plus their metadata, and proof that the checks do fail when the
 * service misbehaves (disturbed between phases, or figures edited before finish).
 */
import { readdirSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { DEFAULT_SCENARIO, SCENARIOS } from '../../scenarios/index.js';
import { type Simulator, createSimulator } from '../../src/http/simulator.js';
import type { ApiResponse, Scenario, ScenarioContext } from '../../src/load/scenario/scenario.js';
import { parseThreshold } from '../../src/load/run/thresholds.js';
import type { CheckResult } from '../../src/report/model.js';
import { type HarnessOptions, type HarnessRun, type MutableResults, runScenario, settingsFor } from '../helpers/scenario-harness.js';

const NAMES = [
  'smoke',
  'verify-hot-keys',
  'credits-drain',
  'refill-month-end',
  'ratelimit-window-edge',
  'identities-crud',
  'plan-change',
  'mixed',
  'limited-keys',
  'ratelimit-live-edges',
  'refill-midnight',
  'key-states',
  'ratelimit-rules',
  'stale-credit-replay',
  'visibility',
  'convergence',
];
const CLOCK_SCENARIOS = ['refill-month-end', 'ratelimit-window-edge'];
/** Mid-March of a common year, before the years refill-month-end picks (2027 and 2028). */
const START_MS = Date.parse('2026-03-10T12:00:00Z');

function scenario(name: string): Scenario<unknown> {
  const s = SCENARIOS[name];
  if (s === undefined) throw new Error(`no scenario ${name}`);
  return s;
}

async function run(
  name: string,
  options: HarnessOptions & { clock?: 'manual' | 'system'; compat?: 'interface' | 'production' } = {},
): Promise<{ sim: Simulator; result: HarnessRun<unknown> }> {
  const sim = await createSimulator({ clock: options.clock ?? 'manual', startMs: START_MS, compat: options.compat ?? 'interface' });
  try {
    return { sim, result: await runScenario(scenario(name), sim, options) };
  } catch (error) {
    await sim.close();
    throw error;
  }
}

const failed = (checks: readonly CheckResult[]) => checks.filter((c) => !c.passed).map((c) => `${c.name}: ${c.detail}`);
const check = (r: HarnessRun<unknown>, name: string): CheckResult | undefined => r.finishChecks.find((c) => c.name === name);

/** Everything a clean run shows: no failed check anywhere, and nothing left behind. */
function expectClean(sim: Simulator, r: HarnessRun<unknown>): void {
  expect(r.checkFailures).toEqual([]);
  expect(r.finishChecks.length).toBeGreaterThan(0);
  expect(failed(r.finishChecks)).toEqual([]);
  expect(r.cleanupErrors).toEqual([]);
  expect(r.cleanupsRun).toBeGreaterThan(0);
  const stats = sim.engine.stats();
  expect({ keys: stats.keys, identities: stats.identities, overrides: stats.overrides }).toEqual({ keys: 0, identities: 0, overrides: 0 });
  expect(sim.engine.snapshot().namespaces.filter((ns) => ns.deletedAt === null)).toEqual([]);
  // The phases the scenario declares stay within a short default run.
  expect(r.phases.reduce((n, p) => n + p.durationMs, 0)).toBeLessThanOrEqual(30_000);
}

/** Every per-response check of the scenario's mix refuses a server error. */
function expectChecksRefuse(name: string, fixtures: unknown): void {
  const answer: ApiResponse = {
    status: 500,
    body: { meta: { requestId: 'req_x' }, error: { status: 500, title: 'Internal Server Error', detail: 'boom', type: 'x' } },
  };
  for (const entry of scenario(name).mix) {
    expect(entry.check?.(answer, fixtures), `${name} ${entry.name ?? ''}`).toBeTypeOf('string');
  }
}

/**
 * The sweep phase's per-response check of ratelimit-window-edge refuses a window that admits more
 * than its limit, and a window outside the sweep (answers made up for a window the load left alone).
 */
function expectSweepChecksRefuse(result: HarnessRun<unknown>): void {
  const f = result.fixtures as { sweep: { fromMs: number; toMs: number } };
  const sweepPhase = scenario('ratelimit-window-edge')
    .phases?.({ settings: result.settings } as ScenarioContext, result.fixtures)
    .at(-1);
  const entry = sweepPhase?.mix?.find((e) => e.name === 'sweep sweep');
  expect(sweepPhase?.serviceClock).toEqual({ fromMs: f.sweep.fromMs, toMs: f.sweep.toMs });
  const answer = (reset: number): ApiResponse => ({ status: 200, body: { data: { limit: 2, remaining: 0, reset, success: true } } });
  const lastWindowEnd = f.sweep.toMs;
  expect(entry?.check?.(answer(lastWindowEnd), result.fixtures)).toBeUndefined();
  expect(entry?.check?.(answer(lastWindowEnd), result.fixtures)).toBeUndefined();
  expect(entry?.check?.(answer(lastWindowEnd), result.fixtures)).toMatch(/^sweep: 3 admitted in the window .*, limit 2$/);
  expect(entry?.check?.(answer(f.sweep.toMs + 60_000), result.fixtures)).toMatch(/outside the sweep/);
}

describe('scenario catalogue', () => {
  test('the sixteen scenarios, each in scenarios/<name>.ts, named like its file and key', async () => {
    const files = readdirSync(new URL('../../scenarios/', import.meta.url))
      .filter((f) => f.endsWith('.ts') && f !== 'index.ts')
      .map((f) => f.slice(0, -3));
    expect(files.sort()).toEqual([...NAMES].sort());
    expect(Object.keys(SCENARIOS).sort()).toEqual([...NAMES].sort());
    for (const name of NAMES) {
      const module = (await import(/* @vite-ignore */ new URL(`../../scenarios/${name}.ts`, import.meta.url).href)) as { default: unknown };
      expect(module.default).toBe(SCENARIOS[name]);
      expect(scenario(name).name).toBe(name);
    }
    expect(DEFAULT_SCENARIO).toBe('mixed');
  });

  test.each(NAMES)('%s: a one-line description, clock requirement, short defaults, understood thresholds', (name) => {
    const s = scenario(name);
    expect(s.description).toMatch(/^[^\n]{10,140}$/);
    expect(s.description.trim()).toBe(s.description);
    expect(s.requires?.includes('clock') ?? false).toBe(CLOCK_SCENARIOS.includes(name));
    const settings = settingsFor(s);
    expect(s.defaults?.durationMs).toBeDefined();
    expect(settings.durationMs).toBeLessThanOrEqual(20_000);
    expect(settings.warmupMs + settings.durationMs).toBeLessThanOrEqual(30_000);
    expect(s.mix.length).toBeGreaterThan(0);
    for (const threshold of s.thresholds ?? []) expect(parseThreshold(threshold), threshold).toMatchObject({ ok: true });
  });

  test('mixed, the default, keeps its default run short: ≤ 20 s of load', () => {
    const settings = settingsFor(scenario('mixed'));
    expect(settings.warmupMs + settings.durationMs).toBeLessThanOrEqual(20_000);
    expect(settings.rate).toBeGreaterThanOrEqual(100);
  });
});

describe('scenarios against the simulator', () => {
  test('smoke: every operation walked with its exact answer; exact read-only load', async () => {
    const { sim, result } = await run('smoke', { maxRequestsPerPhase: 150 });
    try {
      expectClean(sim, result);
      expect(check(result, 'walk: every operation called')?.detail).toBe('all 18 operations');
      expect(result.finishChecks.filter((c) => c.name.startsWith('walk: ')).length).toBeGreaterThanOrEqual(20);
      // Every entry of the mix was answered, so each exact check ran.
      for (const entry of scenario('smoke').mix) expect(result.answered.get(entry.name ?? '') ?? 0, entry.name).toBeGreaterThan(0);
      expectChecksRefuse('smoke', result.fixtures);
      // An exact check notices a balance that moved.
      const f = result.fixtures as { keyId: string };
      const verify = scenario('smoke').mix.find((e) => e.name === 'verifyKey cost 0');
      expect(verify?.check?.({ status: 200, body: { data: { valid: true, code: 'VALID', keyId: f.keyId, credits: 99 } } }, result.fixtures)).toMatch(
        /100 credits/,
      );
    } finally {
      await sim.close();
    }
  });

  test('verify-hot-keys: all VALID, consumption adds up and follows the Zipf skew', async () => {
    const { sim, result } = await run('verify-hot-keys', { maxRequestsPerPhase: 300 });
    try {
      expectClean(sim, result);
      expect(check(result, 'hot keys took their Zipf share')?.detail).toMatch(/^top 20 keys took/);
      expectChecksRefuse('verify-hot-keys', result.fixtures);
    } finally {
      await sim.close();
    }
  });

  test('credits-drain: exactly credits/cost VALID when every planned verification is sent', async () => {
    const { sim, result } = await run('credits-drain', { settings: { rate: 20, durationMs: 2_000 }, maxRequestsPerPhase: 40 });
    try {
      expectClean(sim, result);
      const verify = result.results.operation('keys.verifyKey');
      expect(verify?.requests).toBe(40);
      // 40 planned → credits for 20 verifications of cost 2.
      expect(verify?.codes).toEqual({ VALID: 20, USAGE_EXCEEDED: 20 });
      expectChecksRefuse('credits-drain', result.fixtures);
    } finally {
      await sim.close();
    }
  });

  test('credits-drain: with dropped sends, VALID = what the keys were actually asked', async () => {
    // Default settings plan 2000 verifications; the harness sends 60 and counts the rest dropped.
    const { sim, result } = await run('credits-drain', { maxRequestsPerPhase: 60 });
    try {
      expectClean(sim, result);
      expect(result.results.totals.dropped).toBeGreaterThan(0);
      expect(result.results.operation('keys.verifyKey')?.codes).toEqual({ VALID: 60 });
    } finally {
      await sim.close();
    }
  });

  for (const clock of ['manual', 'system'] as const) {
    test(`refill-month-end (${clock} clock): refills on days 29/30/31 follow the calendar in 2027 and 2028`, async () => {
      const { sim, result } = await run('refill-month-end', { clock, maxRequestsPerPhase: 20 });
      try {
        expectClean(sim, result);
        expect(result.phases.map((p) => p.name)).toContain('2028-02-29');
        expect(result.phases.map((p) => p.name)).not.toContain('2027-02-29');
        // 19 sweeps (10 midnights in the leap year, 9 in the common one), each observed at its start and its end.
        expect(check(result, 'balances follow the month lengths')?.detail).toBe('152 of 152 observations as calculated');
        // The harness does not move the clock during the load: each sweep's load ran at its start.
        expect(check(result, 'refills crossed under load')?.detail).toMatch(/^the clock did not move during the load/);
      } finally {
        await sim.close();
      }
    });

    test(`ratelimit-window-edge (${clock} clock): a full burst before the edge leaves no room after it`, async () => {
      const { sim, result } = await run('ratelimit-window-edge', { clock, maxRequestsPerPhase: 200 });
      try {
        expectClean(sim, result);
        const phases = (result.fixtures as { phases: Array<{ admitted: Record<string, number> }> }).phases;
        expect(phases).toHaveLength(6);
        // Saturated bursts: the whole limit just before the edge...
        expect(phases[0]?.admitted).toEqual({ std: 10, vip: 25, gold: 40, blocked: 0 });
        if (clock === 'manual') {
          // ...nothing just after it, half the limit half a window later, the raised override at the end.
          expect(phases[1]?.admitted).toEqual({ std: 0, vip: 0, gold: 0, blocked: 0 });
          expect(phases[2]?.admitted).toEqual({ std: 5, vip: 13, gold: 20, blocked: 0 });
          expect(phases[5]?.admitted).toEqual({ std: 10, vip: 30, gold: 40, blocked: 0 });
          // The harness does not move the clock during the sweep: its load all fell in one window of each identifier.
          expect((result.fixtures as { sweep: { admitted: Record<string, number> } }).sweep.admitted).toEqual({ sweep: 2, 'vip-sweep': 30, blocked: 0 });
          expect(check(result, 'sweep: admissions in most windows')?.detail).toMatch(/the clock did not move during the load/);
          expectSweepChecksRefuse(result);
        }
        expectChecksRefuse('ratelimit-window-edge', result.fixtures);
      } finally {
        await sim.close();
      }
    });
  }

  test('identities-crud: pages, updates, creations and deletions add up', async () => {
    const { sim, result } = await run('identities-crud', { maxRequestsPerPhase: 150 });
    try {
      expectClean(sim, result);
      const f = result.fixtures as { cursors: string[] };
      expect(f.cursors.length).toBeGreaterThan(0);
      expect(result.results.operation('identities.deleteIdentity')?.statuses['200'] ?? 0).toBeGreaterThan(0);
      expect(result.results.operation('identities.createIdentity')?.statuses['200'] ?? 0).toBeGreaterThan(0);
      expect(result.results.operation('identities.updateIdentity')?.statuses['200'] ?? 0).toBeGreaterThan(0);
      expectChecksRefuse('identities-crud', result.fixtures);
    } finally {
      await sim.close();
    }
  });

  test('plan-change: free credits run dry, the new allocation admits everything after', async () => {
    // 40 verifications per phase over 8 keys with 2 free credits each: the free plan runs dry.
    const { sim, result } = await run('plan-change', { settings: { rate: 40, durationMs: 3_000 }, maxRequestsPerPhase: 40 });
    try {
      expectClean(sim, result);
      const keys = (result.fixtures as { keys: Array<{ leftover: number | undefined }> }).keys;
      expect(keys.map((k) => k.leftover)).toEqual(keys.map(() => 0));
      expect(result.results.operation('keys.verifyKey')?.codes.USAGE_EXCEEDED ?? 0).toBeGreaterThan(0);
      expectChecksRefuse('plan-change', result.fixtures);
    } finally {
      await sim.close();
    }
  });

  test('mixed: invariants hold and credits are accounted for', async () => {
    // (How long its setup and cleanup take is the machine's pace, not the scenario's behaviour: not asserted.)
    const { sim, result } = await run('mixed', { maxRequestsPerPhase: 300 });
    try {
      expectClean(sim, result);
      expect(result.results.operation('ratelimit.limit')?.requests ?? 0).toBeGreaterThan(0);
      expect(result.results.operation('keys.updateCredits')?.requests ?? 0).toBeGreaterThan(0);
      expectChecksRefuse('mixed', result.fixtures);
    } finally {
      await sim.close();
    }
  });
});

describe('on a live target (the simulator without its admin surface)', () => {
  test('smoke and mixed run clean where namespaces are created on first use (production behaviour)', async () => {
    for (const name of ['smoke', 'mixed']) {
      const { sim, result } = await run(name, { live: true, compat: 'production', maxRequestsPerPhase: 60 });
      try {
        expect(result.checkFailures).toEqual([]);
        expect(failed(result.finishChecks)).toEqual([]);
        expect(result.cleanupErrors).toEqual([]);
        const stats = sim.engine.stats();
        expect({ keys: stats.keys, identities: stats.identities, overrides: stats.overrides }).toEqual({ keys: 0, identities: 0, overrides: 0 });
        // What cannot be deleted through the public API is named after the run, and the log says so.
        const tag = (result.logs.join('\n').match(/namespace "([^"]+)"/) ?? [])[1] ?? '';
        expect(tag).toMatch(/^keysim-/);
        expect(sim.engine.snapshot().namespaces.map((ns) => ns.name)).toEqual([tag]);
        expect(result.logs.some((line) => /no operation to delete an API, so it stays/.test(line))).toBe(true);
      } finally {
        await sim.close();
      }
    }
  });

  test('a namespace the target does not have stops the run, saying which one must exist', async () => {
    const sim = await createSimulator({ startMs: START_MS });
    try {
      await expect(runScenario(scenario('mixed'), sim, { live: true })).rejects.toThrow(
        /namespace "keysim-[^"]+-api" does not exist on the target.*KEYSIM_NAMESPACE/,
      );
      // Checked before anything was made.
      expect(sim.engine.stats()).toMatchObject({ apis: 0, keys: 0, identities: 0 });
    } finally {
      await sim.close();
    }
  });

  test('clock scenarios refuse to run without the admin surface', async () => {
    const sim = await createSimulator({ startMs: START_MS });
    try {
      for (const name of CLOCK_SCENARIOS) await expect(runScenario(scenario(name), sim, { live: true })).rejects.toThrow(/only the simulator allows/);
    } finally {
      await sim.close();
    }
  });
});

/**
 * Requests cut off at the end of a closed-model phase may or may not have taken effect: the
 * reconciling checks count them like requests without answer. The harness cannot cut a request
 * off, so the figures are edited: one answer (`status` 200, `code` if given) becomes a request
 * cut off, as if the phase had ended before it arrived.
 */
describe('requests cut off at the end of a closed-model phase', () => {
  const answerCutOff =
    (op: string, code?: string, count = 1) =>
    (results: MutableResults) => {
      const stats = results.operations.find((s) => s.operation === op);
      if (stats === undefined) throw new Error(`no ${op} in the results`);
      const answered = code === undefined ? (stats.statuses['200'] ?? 0) : (stats.codes[code] ?? 0);
      if (answered < count) throw new Error(`fewer than ${count} ${code ?? '200'} answers of ${op} to cut off`);
      for (const s of [stats, results.overall]) {
        s.requests -= count;
        s.statuses['200'] = (s.statuses['200'] ?? 0) - count;
        if (code !== undefined) s.codes[code] = (s.codes[code] ?? 0) - count;
      }
      stats.cutOff = (stats.cutOff ?? 0) + count;
      results.overall.cutOff = (results.overall.cutOff ?? 0) + count;
      results.totals.requests -= count;
      results.totals.cutOff = (results.totals.cutOff ?? 0) + count;
    };

  const cases: Array<{ name: string; op: string; code?: string; settings?: HarnessOptions['settings'] }> = [
    { name: 'mixed', op: 'keys.verifyKey', code: 'VALID' },
    { name: 'verify-hot-keys', op: 'keys.verifyKey', code: 'VALID' },
    { name: 'credits-drain', op: 'keys.verifyKey', code: 'VALID', settings: { rate: 20, durationMs: 2_000 } },
    { name: 'plan-change', op: 'keys.verifyKey', code: 'VALID', settings: { rate: 40, durationMs: 3_000 } },
    { name: 'identities-crud', op: 'identities.createIdentity' },
  ];
  test.each(cases)('$name: a $op answer cut off (it took effect, its answer never came) still passes every check', async ({ name, op, code, settings }) => {
    // Only the closed model cuts requests off (credits-drain then does not expect the planned count).
    const { sim, result } = await run(name, { settings: { ...settings, model: 'closed' }, maxRequestsPerPhase: 80, editResults: answerCutOff(op, code) });
    await sim.close();
    expect(failed(result.finishChecks)).toEqual([]);
    // The detail of the reconciling check says so.
    expect(result.finishChecks.map((c) => c.detail).join('\n')).toMatch(/cut off|without answer/);
  });

  test('identities-crud: a creation whose answer is missing is not a cut-off: the creations do not add up (nor with two missing and one cut off)', async () => {
    const missing = (results: MutableResults) => {
      const stats = results.operations.find((s) => s.operation === 'identities.createIdentity');
      if (stats === undefined) throw new Error('no creations');
      stats.statuses['200'] = (stats.statuses['200'] ?? 0) - 1;
    };
    const one = await run('identities-crud', { maxRequestsPerPhase: 80, editResults: missing });
    await one.sim.close();
    expect(check(one.result, 'creations add up')?.passed).toBe(false);
    const two = await run('identities-crud', {
      maxRequestsPerPhase: 80,
      editResults: (results) => {
        missing(results);
        answerCutOff('identities.createIdentity')(results);
      },
    });
    await two.sim.close();
    expect(check(two.result, 'creations add up')?.passed).toBe(false);
  });
});

describe('the checks fail when the service misbehaves', () => {
  const editCode = (op: string, code: string, delta: number) => (results: MutableResults) => {
    const stats = results.operations.find((s) => s.operation === op);
    if (stats === undefined) throw new Error(`no ${op} in the results`);
    stats.codes[code] = (stats.codes[code] ?? 0) + delta;
  };

  test('credits-drain: one VALID too many', async () => {
    const { sim, result } = await run('credits-drain', { settings: { rate: 20, durationMs: 2_000 }, editResults: editCode('keys.verifyKey', 'VALID', 1) });
    await sim.close();
    expect(check(result, 'exact VALID count')?.passed).toBe(false);
    expect(check(result, 'credits consumed = VALID answers')?.passed).toBe(false);
  });

  test('verify-hot-keys: one VALID too many', async () => {
    const { sim, result } = await run('verify-hot-keys', { editResults: editCode('keys.verifyKey', 'VALID', 1) });
    await sim.close();
    expect(check(result, 'credits consumed = VALID answers')?.passed).toBe(false);
  });

  test('mixed: one VALID missing', async () => {
    const { sim, result } = await run('mixed', { editResults: editCode('keys.verifyKey', 'VALID', -1) });
    await sim.close();
    expect(check(result, 'credits accounted for')?.passed).toBe(false);
  });

  test('refill-month-end: a refill on 1 March for refillDay 31', async () => {
    const { sim, result } = await run('refill-month-end', {
      maxRequestsPerPhase: 10,
      async afterPhase(phase, ctx, fixtures) {
        if (phase !== '2027-03-01') return;
        // Within the sweep across 1 March: the key of refillDay 31 gets its refill amount.
        const key = (fixtures as { keys: Array<{ day: number; keyId: string }> }).keys.find((k) => k.day === 31);
        await ctx.admin?.clockSet(Date.UTC(2027, 2, 1, 0, 30));
        await ctx.api.data('keys.updateCredits', { keyId: key?.keyId, operation: 'set', value: 1031 });
      },
    });
    await sim.close();
    expect(check(result, 'refill dates match the calendar')?.detail).toMatch(/refillDay 31: refills seen at 01-31, 02-28, 03-01, 03-31/);
    expect(check(result, 'balances follow the month lengths')?.passed).toBe(false);
  });

  test('ratelimit-window-edge: admissions the model did not see', async () => {
    const { sim, result } = await run('ratelimit-window-edge', {
      maxRequestsPerPhase: 20,
      async afterPhase(phase, ctx, fixtures) {
        if (phase !== 'burst just before the edge') return;
        const f = fixtures as { namespace: string; identifiers: { std: string }; durationMs: number };
        for (let i = 0; i < 3; i++)
          await ctx.api.data('ratelimit.limit', { namespace: f.namespace, identifier: f.identifiers.std, limit: 10, duration: f.durationMs });
      },
    });
    await sim.close();
    expect(check(result, 'windows match the sliding-window model')?.passed).toBe(false);
  });

  test('identities-crud: a stable identity disappears', async () => {
    const { sim, result } = await run('identities-crud', {
      async afterPhase(phase, ctx, fixtures) {
        if (phase !== 'crud') return;
        const f = fixtures as { stable: Array<{ id: string }> };
        await ctx.api.data('identities.deleteIdentity', { identity: f.stable[0]?.id });
      },
    });
    await sim.close();
    expect(check(result, 'stable identities intact')?.passed).toBe(false);
  });

  test('plan-change: credits appear from nowhere', async () => {
    const { sim, result } = await run('plan-change', {
      settings: { rate: 40, durationMs: 3_000 },
      async afterPhase(phase, ctx, fixtures) {
        if (phase !== 'plan change') return;
        const f = fixtures as { keys: Array<{ keyId: string }> };
        await ctx.api.data('keys.updateCredits', { keyId: f.keys[0]?.keyId, operation: 'increment', value: 3 });
      },
    });
    await sim.close();
    expect(check(result, 'VALID answers = free credits used + new allocation used')?.passed).toBe(false);
  });
});
