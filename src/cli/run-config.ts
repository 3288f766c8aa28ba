/**
 * The flags of `keysim run` completed from the configuration file: a flag given on the command
 * line wins, then the file, then keysim's default; thresholds add up (the file's first) and the
 * file's scenarios run when none is named. The load shape (rate, duration, warm-up, stages) is
 * layered apart, in run-settings.ts, because stages and a rate exclude each other.
 */
import type { RunConfig } from './config.js';

/** The flags the configuration file can fill in (undefined: not given on the command line). */
export interface ConfigurableArgs {
  scenario: string[];
  threshold: string[];
  target?: string | undefined;
  seed?: number | undefined;
  out?: string | undefined;
  history?: boolean | undefined;
  timeout?: string | undefined;
  pipelining?: number | undefined;
  connections?: number | undefined;
  model?: 'open' | 'closed' | undefined;
  rootKey?: string | undefined;
  ca?: string | undefined;
}

export interface CompletedArgs {
  target: string;
  seed: number;
  out: string;
  history: boolean;
  timeout: string;
  pipelining: number;
  /** The variable the file names for the root key, when it names one. */
  rootKeyEnv?: string;
  /** --root-key, or the key the file leads to (KEYSIM_ROOT_KEY, read later, stays above the file). */
  rootKey?: string | undefined;
}

/** keysim's own defaults of the flags the file can set. */
export const FLAG_DEFAULTS = { target: 'sim', seed: 1, out: 'reports', history: false, timeout: '10s', pipelining: 1 } as const;

export function withConfig<A extends ConfigurableArgs>(
  args: A,
  config: RunConfig | undefined,
  env: NodeJS.ProcessEnv = process.env,
  warn: (line: string) => void = (line) => process.stderr.write(`keysim: ${line}\n`),
): Omit<A, keyof CompletedArgs> & CompletedArgs {
  const c = config;
  const completed = {
    ...args,
    target: args.target ?? c?.target ?? FLAG_DEFAULTS.target,
    seed: args.seed ?? c?.seed ?? FLAG_DEFAULTS.seed,
    out: args.out ?? c?.out ?? FLAG_DEFAULTS.out,
    history: args.history ?? c?.history ?? FLAG_DEFAULTS.history,
    timeout: args.timeout ?? c?.timeout ?? FLAG_DEFAULTS.timeout,
    pipelining: args.pipelining ?? c?.pipelining ?? FLAG_DEFAULTS.pipelining,
    scenario: args.scenario.length > 0 ? args.scenario : (c?.scenarios ?? []),
    threshold: [...(c?.thresholds ?? []), ...args.threshold],
  };
  if (c === undefined) return completed;
  if (completed.connections === undefined && c.connections !== undefined) completed.connections = c.connections;
  if (completed.model === undefined && c.model !== undefined) completed.model = c.model;
  if (completed.ca === undefined && c.ca !== undefined) completed.ca = c.ca;
  if (c.rootKey !== undefined) {
    warn(`${c.file} holds a root key in clear: a file ends up in a repository. Name its environment variable instead ("rootKeyEnv": "MY_ROOT_KEY").`);
  }
  // KEYSIM_ROOT_KEY and --root-key stay above the file (run.ts reads them): the file only fills a gap.
  if (completed.rootKey === undefined && (env.KEYSIM_ROOT_KEY ?? '') === '') {
    const fromVariable = c.rootKeyEnv === undefined ? undefined : env[c.rootKeyEnv];
    const key = fromVariable !== undefined && fromVariable !== '' ? fromVariable : c.rootKey;
    if (key !== undefined) completed.rootKey = key;
  }
  return c.rootKeyEnv === undefined ? completed : { ...completed, rootKeyEnv: c.rootKeyEnv };
}
