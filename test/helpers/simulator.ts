/**
 * Simulators for tests, each on 127.0.0.1 and a free port (0), closed by the test that started it:
 *
 * - `startSimulator(options)`: the HTTP simulator in this process (createSimulator); the caller closes it.
 * - `useSimulator(options)`: the same for every test of the calling file or `describe`: started
 *   before the first test, back in its start state before each (`resetSimulator`; `{ reset: false }`
 *   keeps the state across tests), closed after the last. Returns a getter (the simulator exists
 *   only once the tests run). With `options.store` it is one replica on that Redis store.
 * - `resetSimulator(sim)`: back to the start state; a store-backed replica through its log.
 * - `useEmbeddedSimulator(options)`: the load runner's embedded simulator (its own worker thread,
 *   src/load/target.ts) as a run `Target`, started before the first test and closed after the last.
 */
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { createSimulator, type Simulator, type SimulatorOptions } from '../../src/http/simulator.js';
import { type Target, startEmbeddedSimulator } from '../../src/load/target/target.js';

/** One simulator on 127.0.0.1, a free port, its answers checked against their own schemas; seed 7 unless given. */
export function startSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
  return createSimulator({ host: '127.0.0.1', port: 0, seed: 7, validateResponses: true, ...options });
}

/**
 * Back to the start state: `reset()` in memory; a store-backed replica (whose `reset()` throws)
 * through POST /_sim/reset, which resets every replica of its store.
 */
export async function resetSimulator(sim: Simulator): Promise<void> {
  if (sim.store === undefined) {
    sim.reset();
    return;
  }
  const res = await fetch(`${sim.url}/_sim/reset`, {
    method: 'POST',
    headers: { authorization: `Bearer ${sim.rootKey}`, 'content-type': 'application/json' },
    body: '{}',
  });
  if (res.status !== 200) throw new Error(`POST /_sim/reset on the store-backed replica ${sim.url} answered ${res.status}: ${await res.text()}`);
}

export interface UseOptions {
  /** Back to the start state before each test (default true). */
  reset?: boolean;
}

/** A getter that names the hook it waits for when called too early (at collection, outside a test). */
function started<T>(what: string, value: () => T | undefined): () => T {
  return () => {
    const current = value();
    if (current === undefined) throw new Error(`${what} is not started yet: call the getter inside a test or a hook, not while the file is collected.`);
    return current;
  };
}

/**
 * One in-process simulator (startSimulator) for the tests of the calling file or describe.
 * `options` may be a function, read when the simulator starts (e.g. a start time taken then).
 */
export function useSimulator(options: SimulatorOptions | (() => SimulatorOptions) = {}, use: UseOptions = {}): () => Simulator {
  let sim: Simulator | undefined;
  beforeAll(async () => {
    sim = await startSimulator(typeof options === 'function' ? options() : options);
  });
  if (use.reset ?? true) beforeEach(() => (sim === undefined ? undefined : resetSimulator(sim)));
  afterAll(async () => {
    await sim?.close();
  });
  return started('the simulator', () => sim);
}

/** The embedded simulator of the load runner (worker thread, manual clock unless given) for the tests of the calling file or describe. */
export function useEmbeddedSimulator(options: SimulatorOptions = {}): () => Target {
  let target: Target | undefined;
  beforeAll(async () => {
    target = await startEmbeddedSimulator(options);
  });
  afterAll(async () => {
    await target?.close();
  });
  return started('the embedded simulator', () => target);
}
