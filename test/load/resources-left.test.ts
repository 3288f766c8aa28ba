/**
 * A live target is left as it was found. Against a target that counts what it holds (the real
 * simulator behind a proxy that hides its admin surface, counted through its own snapshot), every
 * scenario, with and without a history, in both load models, leaves nothing but its empty APIs
 * (the service has no operation to delete one). The clock scenarios run against a simulator over
 * its URL (a remote simulator), which keysim cleans up too. Short phases at low rates: nothing
 * here depends on the machine keeping a pace. The matrix's runs go side by side (vitest's
 * concurrency, five at a time), each on its own simulator.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { SCENARIOS } from '../../scenarios/index.js';
import type { Simulator } from '../../src/http/simulator.js';
import { ScenarioFailedError, runScenario } from '../../src/load/run/runner.js';
import { defineScenario, type LoadSettings, type Scenario } from '../../src/load/scenario/scenario.js';
import { detectUrlTarget, liveTarget, type Target } from '../../src/load/target/target.js';
import { exitCodeOf } from '../../src/cli/commands/run.js';
import { EXIT } from '../../src/cli/exit-codes.js';
import { renderSummary } from '../../src/cli/summary.js';
import { type Holdings, type LiveProxy, holdings, startCountingSimulator, startLiveProxy } from '../helpers/counting-target.js';

const settings = (model: 'open' | 'closed'): LoadSettings => ({
  rate: 20,
  connections: 2,
  pipelining: 1,
  durationMs: 600,
  warmupMs: 0,
  timeoutMs: 10_000,
  model,
});

/** The skew a run with a history on the live target records (our own loopback simulator's clock is ours). */
const GIVEN_SKEW_MS = 1_000;

let sim: Simulator;
let proxy: LiveProxy;
let dir: string;
let seed = 100;

beforeAll(async () => {
  sim = await startCountingSimulator();
  proxy = await startLiveProxy(sim.url);
  dir = mkdtempSync(join(tmpdir(), 'keysim-resources-'));
});

afterAll(async () => {
  await proxy.close();
  await sim.close();
  rmSync(dir, { recursive: true, force: true });
});

/** What a run may leave: its empty APIs (no delete operation) and, on a live target, the namespaces made on first use. */
const withoutApis = (h: Holdings, live: boolean) => ({
  keys: h.keys,
  identities: h.identities,
  overrides: h.overrides,
  ...(live ? {} : { namespaces: h.namespaces }),
});

async function run(scenario: Scenario<unknown>, target: Target, model: 'open' | 'closed', history: boolean, extra: { keep?: boolean; logs?: string[] } = {}) {
  seed++;
  return runScenario({
    scenario,
    target,
    settings: settings(model),
    seed,
    thresholds: [],
    keep: extra.keep ?? false,
    keysimVersion: '0.0.0-test',
    resourcesDir: dir,
    log: (line) => extra.logs?.push(line),
    warn: (line) => extra.logs?.push(line),
    // The live target's clock skew as given (our own loopback simulator): measuring it takes some
    // seconds of probes before and after every run with a history, and is not what this file tests.
    ...(history ? { historyPath: join(dir, `history-${seed}.jsonl.gz`), wallSkewMs: GIVEN_SKEW_MS } : {}),
  });
}

// refill-midnight and ratelimit-live-edges wait on a live target for its time to pass (the next UTC
// midnight, window edges); behind the proxy this test's simulator has a frozen clock, which never
// gets there, while on a remote simulator they move that clock instead. stale-credit-replay and
// convergence wait a quiet period (75 s) on a live target, and move a remote simulator's clock.
const WAIT_FOR_SERVICE_TIME = new Set(['refill-midnight', 'ratelimit-live-edges', 'stale-credit-replay', 'convergence']);
const onSimulatedTime = (s: Scenario<unknown>) => s.requires?.includes('clock') === true || WAIT_FOR_SERVICE_TIME.has(s.name);
const LIVE_SCENARIOS = Object.values(SCENARIOS).filter((s) => !onSimulatedTime(s));
const CLOCK_SCENARIOS = Object.values(SCENARIOS).filter(onSimulatedTime);
const matrix = <S extends { name: string }>(scenarios: readonly S[]) =>
  scenarios.flatMap((s) => (['open', 'closed'] as const).flatMap((model) => [false, true].map((history) => [s.name, model, history] as const)));

/**
 * A counting simulator behind its live proxy for one test, closed after it: the matrix's runs go
 * side by side (each waits on its short phases, not on the CPU), so each counts its own holdings.
 */
async function withOwnTarget<T>(fn: (own: Simulator, ownProxy: LiveProxy) => Promise<T>): Promise<T> {
  const own = await startCountingSimulator();
  const ownProxy = await startLiveProxy(own.url);
  try {
    return await fn(own, ownProxy);
  } finally {
    await ownProxy.close();
    await own.close();
  }
}

describe.concurrent('every scenario leaves nothing on a live target', () => {
  test.each(matrix(LIVE_SCENARIOS))('%s, %s model, history %s', { timeout: 120_000 }, (name, model, history) =>
    withOwnTarget(async (own, ownProxy) => {
      const before = holdings(own);
      const logs: string[] = [];
      const report = await run(SCENARIOS[name] as Scenario<unknown>, liveTarget(ownProxy.url, own.rootKey), model, history, { logs });
      const after = holdings(own);
      expect(withoutApis(after, true), logs.join('\n')).toEqual(withoutApis(before, true));
      expect(logs.filter((l) => l.includes('cleanup failed'))).toEqual([]);
      const resources = report.resources;
      expect(resources?.disposal).toBe('cleaned');
      expect(resources?.unexpectedlyLeft).toBe(0);
      // The accounting agrees with the count: everything created but the APIs was deleted.
      for (const kind of resources?.kinds ?? []) {
        if (kind.kind === 'apis') expect(kind.left).toBe(after.apis - before.apis);
        else expect([kind.kind, kind.deleted, kind.left]).toEqual([kind.kind, kind.created, 0]);
      }
      // Something it deletes was made (ratelimit-rules makes overrides only).
      expect(resources?.kinds.find((k) => k.kind === 'keys' || k.kind === 'identities' || k.kind === 'overrides')?.created ?? 0).toBeGreaterThan(0);
      expect(exitCodeOf(report)).not.toBe(EXIT.resourcesLeft);
    }),
  );

  test.each(matrix(CLOCK_SCENARIOS))('%s on a remote simulator, %s model, history %s', { timeout: 120_000 }, (name, model, history) =>
    withOwnTarget(async (own) => {
      const { target } = await detectUrlTarget(own.url, own.rootKey);
      const before = holdings(own);
      const logs: string[] = [];
      const report = await run(SCENARIOS[name] as Scenario<unknown>, target, model, history, { logs });
      expect(withoutApis(holdings(own), false), logs.join('\n')).toEqual(withoutApis(before, false));
      expect(report.target).toMatchObject({ kind: 'simulator', remote: true });
      expect(report.resources).toMatchObject({ disposal: 'cleaned', unexpectedlyLeft: 0 });
    }),
  );
});

describe('cleanups run before the history closes, whatever happens before them', () => {
  test(
    'identities-crud --history on a live target: every cleanup used to fail with "The history … is closed", leaving its identities',
    { timeout: 120_000 },
    async () => {
      const before = holdings(sim);
      const logs: string[] = [];
      const report = await run(SCENARIOS['identities-crud'] as Scenario<unknown>, liveTarget(proxy.url, sim.rootKey), 'open', true, { logs });
      expect(logs.filter((l) => /closed|cleanup failed/.test(l))).toEqual([]);
      expect(holdings(sim).identities).toBe(before.identities);
      expect(report.resources?.kinds.find((k) => k.kind === 'identities')).toMatchObject({ left: 0 });
    },
  );

  test.each([false, true])('a setup that fails after creating a key still deletes it (history %s)', { timeout: 60_000 }, async (history) => {
    const failing = defineScenario({
      name: 'fails-in-setup',
      description: 'creates a key, then fails',
      async setup(ctx) {
        const { apiId } = await ctx.api.data<{ apiId: string }>('apis.createApi', { name: `${ctx.tag}-failing` });
        const { keyId } = await ctx.api.data<{ keyId: string }>('keys.createKey', { apiId, name: `${ctx.tag}-failing-key` });
        ctx.onCleanup(async () => {
          await ctx.api.call('keys.deleteKey', { keyId });
        });
        await ctx.api.data<{ identityId: string }>('identities.createIdentity', { externalId: `${ctx.tag}-not-registered` });
        throw new Error('setup broke after creating things');
      },
      mix: [],
    });
    const before = holdings(sim);
    const error = await run(failing as Scenario<unknown>, liveTarget(proxy.url, sim.rootKey), 'open', history).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ScenarioFailedError);
    // The identity had no registered cleanup: the sweep by the run's tag found it.
    expect(withoutApis(holdings(sim), true)).toEqual(withoutApis(before, true));
    expect((error as ScenarioFailedError).resources).toMatchObject({ disposal: 'cleaned', unexpectedlyLeft: 0 });
  });
});

describe('what is left is accounted for, exits 95, and keysim cleanup --tag deletes it', () => {
  test(
    'a target that stops answering during the cleanup: the remaining cleanups are not attempted one timeout after another; what is left is counted, exit 95',
    { timeout: 60_000 },
    async () => {
      const own = await startCountingSimulator();
      const doomed = await startLiveProxy(own.url);
      let attempted = 0;
      const scenario = defineScenario({
        name: 'target-dies',
        description: 'creates ten keys; the target goes away before the cleanup',
        async setup(ctx) {
          const { apiId } = await ctx.api.data<{ apiId: string }>('apis.createApi', { name: `${ctx.tag}-dies` });
          for (let i = 0; i < 10; i++) {
            const { keyId } = await ctx.api.data<{ keyId: string }>('keys.createKey', { apiId, name: `${ctx.tag}-dies-${i}` });
            ctx.onCleanup(async () => {
              attempted++;
              await ctx.api.call('keys.deleteKey', { keyId });
            });
          }
        },
        mix: [],
        phases: () => [],
        finish: async () => {
          await doomed.close();
          return [];
        },
      });
      try {
        const report = await run(scenario as Scenario<unknown>, liveTarget(doomed.url, own.rootKey), 'open', false);
        expect(attempted).toBe(3);
        expect(report.resources?.kinds.find((k) => k.kind === 'keys')).toMatchObject({ created: 10, deleted: 0, left: 10 });
        expect(report.resources?.notes[0]).toMatch(/stopped answering during the cleanup .* 7 cleanups and the sweep .* were not attempted/);
        expect(exitCodeOf(report)).toBe(EXIT.resourcesLeft);
      } finally {
        await own.close();
      }
    },
  );

  test(
    'deletes that fail → the report and summary name what is left and the command; exit 95; keysim cleanup then leaves nothing',
    { timeout: 120_000 },
    async () => {
      const { cleanupCommand } = await import('../../src/cli/commands/cleanup.js');
      const before = holdings(sim);
      proxy.failWhen = (path) => path === '/v2/keys.deleteKey';
      const warnings: string[] = [];
      let report;
      try {
        report = await run(SCENARIOS.smoke as Scenario<unknown>, liveTarget(proxy.url, sim.rootKey), 'open', false, { logs: warnings });
      } finally {
        proxy.failWhen = () => false;
      }
      const keys = report.resources?.kinds.find((k) => k.kind === 'keys');
      expect(keys?.left).toBeGreaterThan(0);
      expect(report.resources?.unexpectedlyLeft).toBe(keys?.left);
      expect(report.resources?.cleanupCommand).toBe(`keysim cleanup --target ${proxy.url} --tag ${report.resources?.tag}`);
      expect(exitCodeOf(report)).toBe(EXIT.resourcesLeft);
      expect(renderSummary(report)).toMatch(/FAIL {2}resources on live .*keys \d+ created, 0 deleted, \d+ left/);
      expect(warnings.some((w) => w.includes(report.resources?.cleanupCommand ?? '?'))).toBe(true);
      expect(holdings(sim).keys).toBeGreaterThan(before.keys);

      const out: string[] = [];
      process.env.KEYSIM_ROOT_KEY = sim.rootKey;
      try {
        const dry = await cleanupCommand({ target: proxy.url, tag: report.resources?.tag ?? '', dryRun: true, out: dir, namespace: [] }, (t) => out.push(t));
        expect(dry).toBe(EXIT.ok);
        expect(out.join('')).toContain(`would delete from ${proxy.url}: ${keys?.left} keys`);
        expect(holdings(sim).keys).toBeGreaterThan(before.keys);
        const real = await cleanupCommand({ target: proxy.url, tag: report.resources?.tag ?? '', dryRun: false, out: dir, namespace: [] }, (t) => out.push(t));
        expect(real, out.join('')).toBe(EXIT.ok);
      } finally {
        delete process.env.KEYSIM_ROOT_KEY;
      }
      expect(withoutApis(holdings(sim), true)).toEqual(withoutApis(before, true));
    },
  );

  test(
    "on a remote simulator, keysim cleanup --tag finds every kind without the ledger (the simulator's snapshot names the keys)",
    { timeout: 120_000 },
    async () => {
      const { cleanupCommand } = await import('../../src/cli/commands/cleanup.js');
      const { target } = await detectUrlTarget(sim.url, sim.rootKey);
      const before = holdings(sim);
      const report = await run(SCENARIOS.smoke as Scenario<unknown>, target, 'open', false, { keep: true });
      const tag = report.resources?.tag ?? '';
      expect(holdings(sim).keys).toBeGreaterThan(before.keys);
      rmSync(join(dir, '.resources', `${tag}.jsonl`), { force: true });
      const out: string[] = [];
      const code = await cleanupCommand({ target: sim.url, tag, dryRun: false, out: dir, namespace: [], rootKey: sim.rootKey }, (t) => out.push(t));
      expect(code, out.join('')).toBe(EXIT.ok);
      expect(out.join('')).toMatch(/Deleted from .*: \d+ keys, \d+ identities, \d+ overrides, 1 namespaces/);
      expect(withoutApis(holdings(sim), false)).toEqual(withoutApis(before, false));
    },
  );

  test.each(['open', 'closed'] as const)(
    '--keep (%s model) leaves everything, says so in one message with the tag and the command; keysim cleanup --tag then leaves nothing',
    { timeout: 120_000 },
    async (model) => {
      const { cleanupCommand } = await import('../../src/cli/commands/cleanup.js');
      const before = holdings(sim);
      const logs: string[] = [];
      const report = await run(SCENARIOS.mixed as Scenario<unknown>, liveTarget(proxy.url, sim.rootKey), model, true, { keep: true, logs });
      const tag = report.resources?.tag ?? '';
      expect(report.resources).toMatchObject({ disposal: 'kept', unexpectedlyLeft: 0, cleanupCommand: `keysim cleanup --target ${proxy.url} --tag ${tag}` });
      expect(exitCodeOf(report)).not.toBe(EXIT.resourcesLeft);
      const keepLines = logs.filter((l) => l.includes('--keep'));
      expect(keepLines).toHaveLength(1);
      expect(keepLines[0]).toContain(`keysim cleanup --target ${proxy.url} --tag ${tag}`);
      expect(holdings(sim).keys).toBeGreaterThan(before.keys);
      expect(holdings(sim).identities).toBeGreaterThan(before.identities);

      const out: string[] = [];
      const code = await cleanupCommand({ target: proxy.url, tag, dryRun: false, out: dir, namespace: [], rootKey: sim.rootKey }, (t) => out.push(t));
      expect(code, out.join('')).toBe(EXIT.ok);
      expect(out.join('')).toMatch(/Deleted from .*: \d+ keys, \d+ identities/);
      expect(withoutApis(holdings(sim), true)).toEqual(withoutApis(before, true));
    },
  );
});
