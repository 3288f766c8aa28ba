/**
 * A pass says what it covered: the rule map (src/load/rules.ts), the rules each scenario declares,
 * the report's "rules exercised N of M", and the two live-safe scenarios written for the rules no
 * live-safe scenario reached (key-states, ratelimit-rules) — clean against the simulator, and
 * their checks failing on a service that breaks the rule.
 */
import { describe, expect, test } from 'vitest';
import { SCENARIOS } from '../../scenarios/index.js';
import { renderSummary } from '../../src/cli/summary.js';
import { type Simulator, createSimulator } from '../../src/http/simulator.js';
import { RULES, RuleTally, judgedRuleCoverage, ruleCoverage, ruleIdProblems } from '../../src/load/rules/rules.js';
import { runScenario as runWithRunner } from '../../src/load/run/runner.js';
import type { Scenario } from '../../src/load/scenario/scenario.js';
import { requiresClock } from '../../src/load/scenario/scenario-start.js';
import { scenarioProblems } from '../../src/load/run/scenario-validate.js';
import { startEmbeddedSimulator } from '../../src/load/target/target.js';
import { renderHtml } from '../../src/report/html.js';
import { renderMarkdown } from '../../src/report/markdown.js';
import type { CheckResult, RulesSection } from '../../src/report/model.js';
import { mergeRulesSections, rulesHeadline, rulesMarkdown, rulesSummaryLines } from '../../src/report/rules-text.js';
import { rulesSectionHtml } from '../../src/report/html/rules.js';
import { loadSettings } from '../helpers/load.js';
import { type HarnessOptions, type HarnessRun, runScenario } from '../helpers/scenario-harness.js';

const scenario = (name: string) => SCENARIOS[name] as Scenario<unknown>;
const failed = (checks: readonly CheckResult[]) => checks.filter((c) => !c.passed).map((c) => `${c.name}: ${c.detail}`);

async function run(name: string, options: HarnessOptions = {}): Promise<{ sim: Simulator; result: HarnessRun<unknown> }> {
  // Namespaces made on first use, as production does: the scenarios then need no admin surface.
  const sim = await createSimulator({ compat: 'production' });
  try {
    return { sim, result: await runScenario(scenario(name), sim, { live: true, ...options }) };
  } catch (error) {
    await sim.close();
    throw error;
  }
}

describe('the rule map', () => {
  test('every rule has a unique dotted id and a one-line title', () => {
    const ids = RULES.map((r) => r.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const r of RULES) {
      expect(r.id).toMatch(/^[a-z]+\.[a-z0-9-]+$/);
      expect(r.title).toMatch(/^[^\n]{10,120}$/);
    }
  });

  test('a scenario naming a rule id that does not exist is refused with the valid ids', () => {
    expect(ruleIdProblems(['credits.cost-zero', 'credits.cost-nil'])).toEqual([expect.stringContaining('rules names "credits.cost-nil", which is no rule id')]);
    expect(ruleIdProblems('credits.cost-zero')).toHaveLength(1);
    const base = { name: 'x', setup: async () => ({}), mix: [{ weight: 1, build: () => ({}) }] };
    expect(scenarioProblems({ ...base, rules: ['verify.nope'] })).toEqual([expect.stringContaining('"verify.nope"')]);
    expect(scenarioProblems({ ...base, clockMode: 'running', requires: ['clock'] })).toEqual([expect.stringContaining("clockMode 'running' cannot go with")]);
    expect(scenarioProblems({ ...base, clockMode: 'fast' })).toEqual([expect.stringContaining("clockMode must be 'frozen' or 'running'")]);
  });

  test('every built-in scenario is valid with its declared rules', () => {
    for (const [name, s] of Object.entries(SCENARIOS)) expect(scenarioProblems(s), name).toEqual([]);
  });

  test('the live-safe scenarios reach the rules they did not reach before key-states and ratelimit-rules', () => {
    const liveSafe = Object.values(SCENARIOS).filter((s) => !requiresClock(s));
    const covered = ruleCoverage(liveSafe.flatMap((s) => s.rules ?? []));
    const ids = covered.exercised.map((r) => r.id);
    for (const id of [
      'verify.disabled',
      'verify.expired',
      'keys.delete',
      'ratelimit.multi-all-or-nothing',
      'ratelimit.override-wildcard',
      'ratelimit.override-exact',
      'ratelimit.cost-many',
      'ratelimit.cost-zero',
      'credits.cost-zero',
      'credits.cost-many',
      'ratelimit.identity-shared',
    ]) {
      expect(ids, id).toContain(id);
    }
  });
});

describe('key-states', () => {
  test('clean against the simulator: disabled, expired and deleted keys refused, balances untouched', async () => {
    const { sim, result } = await run('key-states', { maxRequestsPerPhase: 60 });
    try {
      expect(result.checkFailures).toEqual([]);
      expect(failed(result.finishChecks)).toEqual([]);
      expect(result.finishChecks.length).toBeGreaterThan(0);
      for (const entry of scenario('key-states').mix) expect(result.answered.get(entry.name ?? '') ?? 0, entry.name).toBeGreaterThan(0);
      expect(sim.engine.stats().keys).toBe(0);
    } finally {
      await sim.close();
    }
  });

  test('a service that checks credits before the key state (USAGE_EXCEEDED for a disabled key) fails the check', async () => {
    const { sim, result } = await run('key-states', { maxRequestsPerPhase: 10 });
    await sim.close();
    const f = result.fixtures as { disabledEmpty: { keyId: string } };
    const entry = scenario('key-states').mix.find((e) => e.name === 'verifyKey disabled, 0 left → DISABLED');
    expect(
      entry?.check?.({ status: 200, body: { data: { valid: false, code: 'USAGE_EXCEEDED', keyId: f.disabledEmpty.keyId, credits: 0 } } }, result.fixtures),
    ).toMatch(/expected DISABLED/);
  });

  test('a refused verification that spends credits fails the end-of-run balance check', async () => {
    const { sim, result } = await run('key-states', {
      maxRequestsPerPhase: 10,
      // As if a DISABLED verification had taken one credit.
      afterPhase: async (_phase, ctx, fixtures) => {
        const f = fixtures as { disabled: { keyId: string } };
        await ctx.api.data('keys.updateCredits', { keyId: f.disabled.keyId, operation: 'decrement', value: 1 });
      },
    });
    await sim.close();
    expect(failed(result.finishChecks).join('\n')).toMatch(/refused and cost-0 verifications spent nothing: .*: 4\d, expected 50/);
  });
});

describe('ratelimit-rules', () => {
  test('clean against the simulator: overrides exact over wildcard, costs, multiLimit all or nothing', async () => {
    const { sim, result } = await run('ratelimit-rules', { maxRequestsPerPhase: 60 });
    try {
      expect(result.checkFailures).toEqual([]);
      expect(failed(result.finishChecks)).toEqual([]);
      expect(result.finishChecks.map((c) => c.name)).toEqual(['rate limit: cost > 1 counts its cost, a refusal counts nothing', 'multiLimit: all or nothing']);
      expect(sim.engine.stats().overrides).toBe(0);
    } finally {
      await sim.close();
    }
  });

  test('a wildcard override winning over the exact one fails the check', async () => {
    const { sim, result } = await run('ratelimit-rules', { maxRequestsPerPhase: 10 });
    await sim.close();
    const f = result.fixtures as { wildcardId: string };
    const entry = scenario('ratelimit-rules').mix.find((e) => e.name === 'limit cost 0, exact beats wildcard');
    expect(
      entry?.check?.({ status: 200, body: { data: { success: true, limit: 3, remaining: 3, reset: 1, overrideId: f.wildcardId } } }, result.fixtures),
    ).toMatch(/expected success, limit 5/);
  });

  test('a refused multiLimit that still counts on the limit that passed fails the all-or-nothing check', async () => {
    const { sim, result } = await run('ratelimit-rules', {
      maxRequestsPerPhase: 10,
      // As if the refused call had counted one on A.
      afterPhase: async (_phase, ctx, fixtures) => {
        const f = fixtures as { namespace: string };
        await ctx.api.data('ratelimit.limit', { namespace: f.namespace, identifier: `${ctx.tag}-rr-multi-a`, limit: 5, duration: 86_400_000 });
      },
    });
    await sim.close();
    expect(failed(result.finishChecks).join('\n')).toMatch(/multiLimit: all or nothing: .*A then has [0-3] left \(expected/);
  });
});

test('a passing run says which rules it exercised and which it never touched, in every rendering', async () => {
  const target = await startEmbeddedSimulator({ seed: 5 });
  try {
    const report = await runWithRunner({
      scenario: scenario('key-states'),
      target,
      settings: loadSettings({ rate: 20, durationMs: 500 }),
      seed: 5,
      thresholds: [],
      keep: false,
      keysimVersion: 'test',
    });
    expect(report.checks.filter((c) => !c.passed)).toEqual([]);
    expect(report.rules?.exercised.map((r) => r.id)).toEqual(['verify.not-found', 'verify.disabled', 'verify.expired', 'credits.cost-zero', 'keys.delete']);
    expect(report.rules?.total).toBe(RULES.length);
    expect(report.rules?.untouched.map((r) => r.id)).toContain('ratelimit.sliding-window');
    expect(renderSummary(report)).toContain(`rules exercised 5 of ${RULES.length}: verify.not-found, verify.disabled`);
    expect(renderSummary(report)).toMatch(/untouched: .*ratelimit\.sliding-window/);
    expect(renderMarkdown(report)).toContain(`## Rules covered\n\nrules exercised 5 of ${RULES.length}`);
    expect(renderHtml(report)).toContain(`rules exercised 5 of ${RULES.length}`);
  } finally {
    await target.close();
  }
}, 60_000);

describe('rules exercised and judged, not only declared', () => {
  const notJudgedCheck = (rules: string[]): CheckResult => ({
    name: 'x',
    passed: true,
    detail: 'not judged: 2 answers never came (504 from a gateway ×2)',
    rules,
  });
  const judgedCheck = (rules: string[]): CheckResult => ({ name: 'y', passed: true, detail: 'as expected', rules });

  test('rule coverage counted a rule as exercised because its scenario declared it, although every check of it was not judged', () => {
    const coverage = judgedRuleCoverage({
      declared: ['ratelimit.cost-many', 'ratelimit.multi-all-or-nothing', 'ratelimit.override-exact'],
      checks: [notJudgedCheck(['ratelimit.cost-many']), notJudgedCheck(['ratelimit.multi-all-or-nothing']), judgedCheck(['ratelimit.override-exact'])],
      tally: undefined,
      invariantsChecked: new Map(),
    });
    expect(coverage.exercised.map((r) => r.id)).toEqual(['ratelimit.override-exact']);
    expect(coverage.notJudged.map((r) => r.id)).toEqual(['ratelimit.cost-many', 'ratelimit.multi-all-or-nothing']);
    expect(coverage.untouched).toHaveLength(RULES.length - 3);
  });

  test('a rule is judged by the answers of the entries naming it, or by an invariant checker that judges it', () => {
    const tally = new RuleTally();
    tally.built(['verify.disabled']);
    tally.built(['verify.expired']);
    tally.judged(['verify.disabled']);
    const declared = ['verify.disabled', 'verify.expired', 'credits.valid-decrements'];
    const none = judgedRuleCoverage({ declared, checks: [notJudgedCheck(['credits.valid-decrements'])], tally, invariantsChecked: new Map() });
    expect(none.exercised.map((r) => r.id)).toEqual(['verify.disabled']);
    expect(none.notJudged.map((r) => r.id)).toEqual(['verify.expired', 'credits.valid-decrements']);
    // With --history, the credits checkers judged it: exercised; one that checked nothing does not count.
    const withHistory = judgedRuleCoverage({
      declared,
      checks: [notJudgedCheck(['credits.valid-decrements'])],
      tally,
      invariantsChecked: new Map([
        ['credits.no-over-spend', 12],
        ['credits.refill', 0],
      ]),
    });
    expect(withHistory.exercised.map((r) => r.id)).toEqual(['verify.disabled', 'credits.valid-decrements']);
  });

  test('a rule no entry and no check names is judged by the scenario checks as a whole', () => {
    const judged = judgedRuleCoverage({ declared: ['identities.lifecycle'], checks: [judgedCheck([])], tally: undefined, invariantsChecked: new Map() });
    expect(judged.exercised.map((r) => r.id)).toEqual(['identities.lifecycle']);
    const nothing = judgedRuleCoverage({
      declared: ['identities.lifecycle'],
      checks: [notJudgedCheck([])],
      tally: new RuleTally(),
      invariantsChecked: new Map(),
    });
    expect(nothing.notJudged.map((r) => r.id)).toEqual(['identities.lifecycle']);
  });

  test('the not-judged rules are listed in every rendering, and a merge of segments counts a rule any segment judged', () => {
    const ref = (id: string) => ({ id, title: RULES.find((r) => r.id === id)?.title ?? id });
    const section: RulesSection = {
      total: RULES.length,
      exercised: [ref('ratelimit.cost-zero')],
      notJudged: [ref('ratelimit.multi-all-or-nothing')],
      untouched: RULES.filter((r) => !['ratelimit.cost-zero', 'ratelimit.multi-all-or-nothing'].includes(r.id)).map((r) => ref(r.id)),
    };
    expect(rulesHeadline(section)).toBe(`rules exercised 1 of ${RULES.length} (1 not judged)`);
    expect(rulesSummaryLines(section).join('\n')).toMatch(/not judged \(.*\): ratelimit\.multi-all-or-nothing/);
    expect(rulesMarkdown(section).join('\n')).toContain('**Not judged**');
    expect(rulesSectionHtml(section)).toContain('<h3>Not judged</h3>');
    const other: RulesSection = { ...section, exercised: [ref('ratelimit.multi-all-or-nothing')], notJudged: [ref('ratelimit.cost-zero')] };
    const merged = mergeRulesSections([section, other]);
    expect(merged?.exercised.map((r) => r.id)).toEqual(['ratelimit.cost-zero', 'ratelimit.multi-all-or-nothing']);
    expect(merged?.notJudged).toEqual([]);
    expect(merged?.untouched).toHaveLength(RULES.length - 2);
  });
});

test('ratelimit-live-edges declared no rules: a clean run exercises and judges the five it checks', async () => {
  expect(scenario('ratelimit-live-edges').rules).toEqual([
    'ratelimit.sliding-window',
    'ratelimit.limit-exact',
    'ratelimit.key-limit-per-key',
    'verify.rate-limited-spends-nothing',
    'ratelimit.cost-zero',
  ]);
  const target = await startEmbeddedSimulator({ seed: 5 });
  try {
    const report = await runWithRunner({
      scenario: scenario('ratelimit-live-edges'),
      target,
      settings: loadSettings({ rate: 10, durationMs: 1_000 }),
      seed: 5,
      thresholds: [],
      keep: false,
      keysimVersion: 'test',
    });
    expect(failed(report.checks)).toEqual([]);
    const judged = report.rules?.exercised.map((r) => r.id) ?? [];
    // The sliding-window check may be inconclusive on a slow machine (not judged): the others always judge.
    for (const id of ['ratelimit.limit-exact', 'ratelimit.key-limit-per-key', 'verify.rate-limited-spends-nothing', 'ratelimit.cost-zero'])
      expect(judged, id).toContain(id);
    expect([...judged, ...(report.rules?.notJudged ?? []).map((r) => r.id)].sort()).toEqual([...(scenario('ratelimit-live-edges').rules ?? [])].sort());
  } finally {
    await target.close();
  }
}, 90_000);
