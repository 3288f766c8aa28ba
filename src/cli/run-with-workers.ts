/** `keysim run --workers N`: the set-up once here, the segments in N processes, then the teardown once (docs/distributed.md#workers). */
import { runScenario } from '../load/run/index.js';
import type { LoadSettings, Scenario } from '../load/scenario/index.js';
import type { Target } from '../load/target/index.js';
import { keysimVersion } from '../version.js';
import type { ExitCode } from './exit-codes.js';
import { type SetUpOnce, runWorkers } from './workers.js';
import type { RunPlan } from './run-plan.js';
import type { RunInterrupt } from './run-interrupt.js';

export async function runWithWorkers(plan: RunPlan, workers: number, target: Target, outFolder: string, interrupt: RunInterrupt): Promise<ExitCode> {
  const { args } = plan;
  const scenario = plan.scenarios[0] as Scenario<unknown>;
  // The setup once here, the segments in `between`, then the teardown once.
  const setUp: SetUpOnce = ({ historyPath, between }) =>
    runScenario({
      scenario,
      target,
      settings: plan.settings[0] as LoadSettings,
      seed: args.seed,
      thresholds: [],
      keep: args.keep,
      signal: interrupt.signal,
      log: args.quiet ? () => undefined : (line) => process.stderr.write(`  ${line}\n`),
      warn: (line) => process.stderr.write(`keysim: ${line}\n`),
      resourcesDir: args.out,
      keysimVersion: keysimVersion(),
      oracle: false,
      generatorLimits: plan.generatorLimits,
      setupOnly: between,
      ...(historyPath === undefined ? {} : { historyPath }),
      ...(args.skew === undefined ? {} : { wallSkewMs: args.skew }),
    });
  return runWorkers({
    workers,
    scenario: scenario.name,
    seed: args.seed,
    argv: process.argv.slice(2),
    outFolder,
    target,
    quiet: args.quiet,
    history: args.history,
    setUp,
    signal: interrupt.signal,
    ...(plan.promises === undefined ? {} : { promises: plan.promises }),
  });
}
