/**
 * The oracle's journal after a run: the runner stops it, whether the run ended well or failed, so
 * the simulator does not go on recording every call for a reader that is gone.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { SCENARIOS } from '../../scenarios/index.js';
import { createSimulator, type Simulator } from '../../src/http/index.js';
import { runScenario } from '../../src/load/run/runner.js';
import { type LoadSettings, type Scenario, defineScenario } from '../../src/load/scenario/scenario.js';
import { httpJsonClient } from '../../src/load/target/service-api.js';
import type { Target } from '../../src/load/target/target.js';

const SETTINGS: LoadSettings = { rate: 50, connections: 4, pipelining: 1, durationMs: 300, warmupMs: 0, timeoutMs: 5_000, model: 'open' };
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

async function journalActive(sim: Simulator): Promise<boolean> {
  const client = httpJsonClient({ url: sim.url, rootKey: sim.rootKey });
  try {
    const answer = await client.post('/_sim/journal.take', { max: 1 }, 'root');
    return (answer.body as { data: { active: boolean } }).data.active;
  } finally {
    await client.close();
  }
}

describe('the oracle after a run', () => {
  test('Oracle.stop() is never called by the runner: the simulator journal keeps recording after a run that completed', async () => {
    const sim = await createSimulator({ seed: 3, startMs: Date.parse('2027-03-01T00:00:00Z') });
    closers.push(() => sim.close());
    const target: Target = { kind: 'simulator', url: sim.url, rootKey: sim.rootKey, clockControl: true, close: async () => undefined };
    const historyPath = join(mkdtempSync(join(tmpdir(), 'keysim-oracle-stop-')), 'history.jsonl.gz');
    const report = await runScenario({
      scenario: SCENARIOS['credits-drain'] as Scenario<unknown>,
      target,
      settings: SETTINGS,
      seed: 9,
      thresholds: [],
      keep: false,
      keysimVersion: 'test',
      historyPath,
    });
    expect(report.invariants?.oracle?.verdict).toBe('agrees');
    expect(await journalActive(sim)).toBe(false);
  });

  test('Oracle.stop() is never called by the runner: the simulator journal keeps recording after a run whose set-up failed', async () => {
    const sim = await createSimulator({ seed: 3, startMs: Date.parse('2027-03-01T00:00:00Z') });
    closers.push(() => sim.close());
    const target: Target = { kind: 'simulator', url: sim.url, rootKey: sim.rootKey, clockControl: true, close: async () => undefined };
    const failing = defineScenario({
      name: 'fails-in-setup',
      description: 'creates an API, then fails',
      async setup(ctx) {
        await ctx.api.data<{ apiId: string }>('apis.createApi', { name: `${ctx.tag}-failing` });
        throw new Error('setup broke after creating things');
      },
      mix: [],
    });
    const historyPath = join(mkdtempSync(join(tmpdir(), 'keysim-oracle-stop-')), 'history.jsonl.gz');
    const run = runScenario({
      scenario: failing as Scenario<unknown>,
      target,
      settings: SETTINGS,
      seed: 9,
      thresholds: [],
      keep: false,
      keysimVersion: 'test',
      historyPath,
    });
    await expect(run).rejects.toThrow(/setup broke/);
    expect(await journalActive(sim)).toBe(false);
  });
});
