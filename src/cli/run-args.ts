/** The flags of `keysim run` (run-flags.ts declares them), as given and once completed from the configuration file. */
import type { LoadFlags } from './run-settings.js';
import type { BaselineFlags } from './run-baseline.js';
import type { PromiseArgs } from './promise-flags.js';

export interface RunArgs extends LoadFlags, BaselineFlags, PromiseArgs {
  scenario: string[];
  target: string;
  seed: number;
  out: string;
  threshold: string[];
  yes: boolean;
  keep: boolean;
  quiet: boolean;
  rootKey?: string | undefined;
  /** --ca: the PEM file of the CA(s) to trust for an https target. */
  ca?: string | undefined;
  history: boolean;
  /** Set when the root key's variable comes from the configuration file (named in the error when unset). */
  rootKeyEnv?: string;
  /** With --history on the simulator: compare every answer with a replay of its journal. */
  oracle: boolean;
  /** With --history on a live target: the clock-skew bound, ms, instead of measuring it. */
  skew?: number;
  fault: string[];
  /** The generator's limits: above them the report says the generator lagged, and a threshold its lag may explain is inconclusive (exit 97). */
  maxLateShare?: number;
  maxLoopDelay?: string;
  /** JUnit XML of every run's thresholds, checks and invariants. */
  junit?: string;
  /** Per-second NDJSON of every run. */
  series?: string;
  /** HOST:PORT of a Prometheus endpoint during the runs. */
  metrics?: string;
  /** `i/N`: send this segment's striped share of the plan and write a partial report. */
  segment?: string;
  /** ISO instant at which the load starts (segments of one plan share it). */
  startAt?: string;
  /** Run the plan as this many segment processes on this machine, merged at the end. */
  workers?: number;
  /** Run the setup only and write its fixtures to --fixtures. */
  setupOnly?: boolean;
  /** The fixtures file: written by --setup-only, read (setup skipped) otherwise. */
  fixtures?: string;
}

/** The flags as given: those with no value yet are filled from the configuration file, then the built-in defaults. */
export type GivenArgs = Omit<RunArgs, 'target' | 'seed' | 'out' | 'history' | 'timeout' | 'pipelining'> &
  Partial<Pick<RunArgs, 'target' | 'seed' | 'out' | 'history' | 'timeout' | 'pipelining'>> & { config?: string | boolean };
