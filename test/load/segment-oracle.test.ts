/**
 * A segment never runs the oracle. The segments of a plan load one simulator, which has one journal:
 * each segment starting it restarted it under the others, and replayed their calls beside its own.
 * Regression "two segments on one simulator, --history with the oracle on, exit 100": beside two
 * CPU-bound processes, the Kubernetes local run's segments (their pods pass no --no-oracle) got
 * "the oracle differs" from one segment and "the journal skipped from entry 0 to 61" from the other,
 * on a correct simulator.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { SCENARIOS } from '../../scenarios/index.js';
import { exitCodeOf } from '../../src/cli/commands/run.js';
import { EXIT } from '../../src/cli/exit-codes.js';
import type { Simulator } from '../../src/http/simulator.js';
import { runScenario } from '../../src/load/run/runner.js';
import type { Scenario } from '../../src/load/scenario/scenario.js';
import { detectUrlTarget } from '../../src/load/target/target.js';
import { runOptions } from '../helpers/report-fixture.js';
import { startSimulator } from '../helpers/simulator.js';

let sim: Simulator;
let dir: string;

beforeAll(async () => {
  sim = await startSimulator();
  dir = mkdtempSync(join(tmpdir(), 'keysim-segment-oracle-'));
});

afterAll(async () => {
  await sim.close();
  rmSync(dir, { recursive: true, force: true });
});

test('two segments of one plan on one simulator, each with a history and the oracle on: no oracle, a note saying why, no false exit 100', async () => {
  const { target } = await detectUrlTarget(sim.url, sim.rootKey);
  const segment = (index: number) =>
    runScenario(
      runOptions(SCENARIOS['verify-hot-keys'] as Scenario<unknown>, target, {
        settings: { rate: 20, durationMs: 1_000, warmupMs: 0 },
        seed: 5 + index,
        segment: { index, count: 2 },
        historyPath: join(dir, `history-${index}.jsonl.gz`),
        // Pace-free: a late send on a busy machine must not stand for the verdict this is about.
        generatorLimits: { lateShare: 1, loopDelayP99Ms: Number.POSITIVE_INFINITY },
      }),
    );
  const reports = await Promise.all([segment(0), segment(1)]);
  for (const report of reports) {
    expect(report.invariants?.oracle).toBeUndefined();
    expect(report.invariants?.notes.join('\n')).toContain('The oracle did not run: a segment shares the simulator, and its one journal');
    expect(exitCodeOf(report)).not.toBe(EXIT.invariantViolated);
  }
});
