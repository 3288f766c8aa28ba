/**
 * Runs fast-check properties with a seed that is always known: taken from KEYSIM_FC_SEED (and
 * KEYSIM_FC_PATH) to replay a failure, otherwise drawn fresh. On failure the error names the
 * exact command that replays it.
 */
import fc from 'fast-check';

export interface PropertyOptions {
  /** Cases per run; KEYSIM_FC_RUNS overrides it (e.g. a long soak). */
  numRuns?: number;
  /** The seed when KEYSIM_FC_SEED is not set (a test that prints its seed up front draws it itself). */
  seed?: number;
}

function envInt(name: string): number | undefined {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return undefined;
  const value = Number(raw);
  if (!Number.isInteger(value)) throw new Error(`${name} must be an integer, got "${raw}".`);
  return value;
}

// A synchronous property is checked before the call returns; an asynchronous one gives a promise the
// caller must await (the overloads let the linter see a forgotten await, and only there).
export function assertProperty<Ts>(property: fc.IProperty<Ts>, options?: PropertyOptions): void;
export function assertProperty<Ts>(property: fc.IAsyncProperty<Ts>, options?: PropertyOptions): Promise<void>;
export function assertProperty<Ts>(property: fc.IProperty<Ts> | fc.IAsyncProperty<Ts>, options: PropertyOptions = {}): void | Promise<void> {
  const seed = envInt('KEYSIM_FC_SEED') ?? options.seed ?? (Math.random() * 0x7fff_ffff) | 0;
  const path = process.env.KEYSIM_FC_PATH;
  const numRuns = envInt('KEYSIM_FC_RUNS') ?? options.numRuns ?? 100;
  const params: fc.Parameters<Ts> = path === undefined ? { seed, numRuns } : { seed, path, numRuns };
  const replay = (error: unknown): never => {
    const message = error instanceof Error ? error.message : String(error);
    const pathMatch = /path: "?([0-9:]+)"?/.exec(message);
    const replayPath = pathMatch?.[1] ?? path;
    throw new Error(
      `Property failed with seed ${seed}. Replay: KEYSIM_FC_SEED=${seed}${replayPath === undefined ? '' : ` KEYSIM_FC_PATH=${replayPath}`} npx vitest run <file>\n\n${message}`,
      { cause: error },
    );
  };
  try {
    const result = fc.assert(property as fc.IProperty<Ts>, params) as unknown;
    if (result instanceof Promise) return result.catch(replay) as Promise<void>;
  } catch (error) {
    replay(error);
  }
}
