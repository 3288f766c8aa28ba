/**
 * `--consistency exact|production` and `--promise name=value` (repeatable), on `keysim run` and
 * `keysim check`, and `consistency` / `promises` in the config file: the promise set the
 * invariants are judged against (docs/consistency.md). Flags win over the config file, figure by
 * figure.
 */
import type { Argv } from 'yargs';
import { CONSISTENCY_NAMES, PROMISE_FIGURES, type PromiseSet, PromiseError, parsePromise, promiseSet } from '../load/promises/index.js';
import { UsageError } from './exit-codes.js';

export interface PromiseArgs {
  consistency?: string;
  /** One --promise, or several (repeated: yargs gathers them). */
  promise?: string | string[];
}

/** What a config file may say about promises. */
export interface PromiseConfig {
  consistency?: string;
  promises?: Record<string, number>;
}

/** Adds the two flags to a command. */
export function promiseOptions<T>(y: Argv<T>): Argv<T> {
  return (
    y
      .option('consistency', {
        type: 'string',
        requiresArg: true,
        describe: `The promise set the invariants are judged against: ${CONSISTENCY_NAMES.join(' | ')} (default exact: one linearizable service; production: the production service's documented bounds, docs/consistency.md)`,
      })
      // Not an array option: one value per flag, so that a positional after it stays a positional.
      .option('promise', {
        type: 'string',
        requiresArg: true,
        describe: `Override one figure of the promise set, name=value (repeatable): ${PROMISE_FIGURES.join(', ')}`,
      }) as unknown as Argv<T>
  );
}

/**
 * The promise set in force, from the flags over the config; undefined when neither names one (the
 * exact default, judged as before). A bad name or figure is a UsageError naming it.
 */
export function promisesOf(args: PromiseArgs, config: PromiseConfig = {}): PromiseSet | undefined {
  const flags = args.promise === undefined ? [] : Array.isArray(args.promise) ? args.promise : [args.promise];
  if (args.consistency === undefined && config.consistency === undefined && flags.length === 0 && config.promises === undefined) return undefined;
  try {
    const overrides: Record<string, number> = { ...config.promises };
    for (const text of flags) {
      const [figure, value] = parsePromise(text);
      overrides[figure] = value;
    }
    return promiseSet(args.consistency ?? config.consistency ?? 'exact', overrides);
  } catch (error) {
    if (error instanceof PromiseError) throw new UsageError(error.message);
    throw error;
  }
}
