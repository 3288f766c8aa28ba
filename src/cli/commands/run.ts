/** `keysim run <scenario…>`: fires scenarios at the embedded simulator or a live deployment. */
import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs';
import { DEFAULT_SCENARIO } from '../../../scenarios/index.js';
import { requiresClock } from '../../load/scenario/index.js';
import type { Scenario } from '../../load/scenario/index.js';
import { EXIT, type ExitCode } from '../exit-codes.js';
import { lineStyle } from '../verdict-line.js';
import { bytesNeeded, prepareOutFolder } from '../out-folder.js';
import { runFlagOptions } from '../run-flags.js';
import type { GivenArgs } from '../run-args.js';
import { type RunPlan, prepareRun } from '../run-plan.js';
import { type RunTargets, runTargets } from '../run-target.js';
import { RunInterrupt } from '../run-interrupt.js';
import { RunTally } from '../run-tally.js';
import { runWithWorkers } from '../run-with-workers.js';
import { runOneScenario } from '../run-one-scenario.js';

// Where the exit code of a report is decided; re-exported for the commands and tests that import it from here.
export { exitCodeOf } from '../exit-code-of.js';

export async function runCommand(given: GivenArgs): Promise<ExitCode> {
  const plan = await prepareRun(given);
  const { args, outputs } = plan;
  // The last check, before any prompt and before anything is sent (it creates the folder if missing).
  const checkOut = () => prepareOutFolder(args.out, bytesNeeded(plan.settings, args.history));
  const targets = await runTargets(args, checkOut);
  const outFolder = targets.outFolder ?? checkOut();
  // Listening before any load: a bad or busy address is a usage error with nothing sent.
  await outputs.startMetrics(args.metrics, (line) => process.stderr.write(`keysim: ${line}\n`));

  const interrupt = new RunInterrupt();
  if (args.workers !== undefined) {
    const target = await targets.makeTarget(plan.scenarios[0] as Scenario<unknown>);
    try {
      return await runWithWorkers(plan, args.workers, target, outFolder, interrupt);
    } finally {
      interrupt.release();
      await target.close();
      await outputs.close();
    }
  }
  const tally = new RunTally();
  let ran: number;
  try {
    ran = await runEachScenario(plan, targets, outFolder, interrupt.signal, tally);
  } finally {
    interrupt.release();
    await outputs.close();
  }
  if (outputs.writeFailed) tally.worsen(EXIT.failure, 'an output file (--junit, --series) could not be written');
  if (ran === 0 && !interrupt.signal.aborted) {
    // A QA job gating on the exit code must not go green having tested nothing.
    process.stderr.write(
      `keysim: nothing was tested: every requested scenario was skipped (${plan.names.join(', ')}). Run them against the simulator (--target sim), or choose scenarios that run on a live target (keysim list).\n`,
    );
    return EXIT.usage;
  }
  // One verdict, said once, after every scenario: what a CI log is searched for.
  process.stdout.write(`${tally.reasons.line(tally.exit, lineStyle(process.stdout))}\n`);
  return tally.exit;
}

/** The scenarios one after the other, until Ctrl-C; how many ran (a scenario the target cannot run is skipped). */
async function runEachScenario(plan: RunPlan, targets: RunTargets, outFolder: string, signal: AbortSignal, tally: RunTally): Promise<number> {
  // Several scenarios: the final line names the one that decided the exit code.
  const several = plan.scenarios.length > 1;
  let ran = 0;
  for (const [i, scenario] of plan.scenarios.entries()) {
    if (signal.aborted) break;
    if (requiresClock(scenario) && !targets.clockControl) {
      process.stderr.write(
        `keysim: skipping "${scenario.name}": it moves the service clock, which only a simulator allows (--target sim, or the URL of a keysim serve).\n`,
      );
      continue;
    }
    ran++;
    const target = await targets.makeTarget(scenario);
    await runOneScenario(plan, i, target, outFolder, signal, tally, several ? scenario.name : undefined);
  }
  return ran;
}

export const runCommandModule: CommandModule<object, GivenArgs> = {
  command: 'run [scenario..]',
  describe: `Run scenarios (default: ${DEFAULT_SCENARIO}) and write reports`,
  builder: (y: Argv) => runFlagOptions(y) as unknown as Argv<GivenArgs>,
  handler: async (args: ArgumentsCamelCase<GivenArgs>) => {
    process.exitCode = await runCommand(args);
  },
};
