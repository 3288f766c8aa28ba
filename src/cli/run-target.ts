/**
 * What `keysim run` runs against: a fresh embedded simulator per scenario, or the URL target,
 * checked (root key, a remote target confirmed, --ca, what answers there) before any load.
 */
import { clockStartMs } from '../load/scenario/index.js';
import type { Scenario } from '../load/scenario/index.js';
import { embeddedClockOption } from '../load/time/index.js';
import { type Target, detectUrlTarget, isLoopback, liveTarget, startEmbeddedSimulator } from '../load/target/index.js';
import type { FaultsConfig } from '../http/index.js';
import { UsageError } from './exit-codes.js';
import { faultsFromFlags } from './fault-flags.js';
import { readCaFile } from './ca-file.js';
import { confirmRemote } from './confirm-remote.js';
import type { RunArgs } from './run-args.js';

export interface RunTargets {
  makeTarget: (scenario: Scenario<unknown>) => Promise<Target>;
  /** The embedded simulator, or a URL target that turned out to be a simulator whose clock keysim may move. */
  clockControl: boolean;
  /** Checked before the confirmation of a live target; undefined: not checked yet. */
  outFolder: string | undefined;
}

/** `checkOut`: the last check of the flags (the --out folder and its room), made before any prompt. */
export async function runTargets(args: RunArgs, checkOut: () => string): Promise<RunTargets> {
  if (args.fault.length > 0 && args.target !== 'sim') {
    throw new UsageError(
      '--fault injects faults into the embedded simulator: it needs --target sim (for a running keysim serve, use its --fault or /_sim/faults.set).',
    );
  }
  const faults = faultsFromFlags(args.fault);
  if (!faults.ok) throw new UsageError(faults.message);
  if (args.target === 'sim') return { makeTarget: embeddedTargets(args, faults.config), clockControl: true, outFolder: undefined };
  return urlTarget(args, checkOut);
}

/** A scenario with clock.startAt gets a simulator created at that instant (its fixtures then exist before it). */
function embeddedTargets(args: RunArgs, faults: FaultsConfig): RunTargets['makeTarget'] {
  return (scenario) => {
    const startMs = clockStartMs(scenario);
    // clockMode 'running': the simulator's clock follows real time (windows roll, refills fall due).
    return startEmbeddedSimulator({
      seed: args.seed,
      ...embeddedClockOption(scenario),
      ...(startMs === undefined ? {} : { startMs }),
      ...(args.fault.length > 0 ? { faults } : {}),
    });
  };
}

function urlTarget(args: RunArgs, checkOut: () => string): Promise<RunTargets> {
  let url: URL;
  try {
    url = new URL(args.target);
  } catch {
    throw new UsageError(`--target must be "sim" or a URL such as https://api.example.com, got "${args.target}".`);
  }
  return liveRunTarget(args, url, rootKeyOf(args), checkOut);
}

function rootKeyOf(args: RunArgs): string {
  const fromEnv = process.env.KEYSIM_ROOT_KEY;
  const rootKey = args.rootKey ?? (fromEnv === '' ? undefined : fromEnv);
  if (rootKey === undefined) {
    throw new UsageError(
      args.rootKeyEnv === undefined
        ? 'A live target needs a root key: set KEYSIM_ROOT_KEY (recommended) or pass --root-key.'
        : `A live target needs a root key: the configuration file names the variable ${args.rootKeyEnv}, which is not set (or set KEYSIM_ROOT_KEY, or pass --root-key).`,
    );
  }
  return rootKey;
}

async function liveRunTarget(args: RunArgs, url: URL, rootKey: string, checkOut: () => string): Promise<RunTargets> {
  const outFolder = checkOut();
  if (!isLoopback(url)) await confirmRemote(url.origin, args.yes);
  const ca = readCaFile(args.ca);
  try {
    liveTarget(args.target, rootKey);
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  const detected = await detectUrlTarget(args.target, rootKey, undefined, ca);
  if (detected.note !== undefined) process.stderr.write(`keysim: ${detected.note}\n`);
  return { makeTarget: async () => detected.target, clockControl: detected.target.clockControl, outFolder };
}
