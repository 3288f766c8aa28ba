/**
 * The simulator as a running server: an engine on a controllable clock behind real HTTP, started
 * in the documented start state (one workspace whose root key has every permission), or in a
 * restored snapshot. The start root key is the operator's: the only credential of `/_sim/*`.
 */
import { hash } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { type Compat, type ControllableClock, Engine, ManualClock, SystemClock } from '../engine/index.js';
import { type ServerOptions, createSimulatorServer } from './server.js';
import { ApiRateLimiter } from './api-rate-limit.js';
import { FaultInjector, type FaultsConfig } from './faults.js';
import { OPERATIONS } from './operations.js';
import { Journal } from './journal.js';
import { restoreKeepingOperator } from './operator.js';
import { isLoopbackAddress, loopbackHosts } from './host-check.js';
import { keysimVersion } from '../version.js';

export interface SimulatorOptions extends ServerOptions {
  /** Default 127.0.0.1: the simulator is for this machine unless told otherwise. */
  host?: string;
  /** Default 0: a free port. */
  port?: number;
  /**
   * The start workspace's root key, and the operator's credential (the only one `/_sim/*`
   * answers); default a generated one (reproducible from the seed).
   */
  rootKey?: string;
  /**
   * Start from this snapshot (as `/_sim/restore` takes it) instead of the start state; it must hold
   * `rootKey` (by hash). A snapshot the restore refuses makes createSimulator throw an error whose
   * `code` is `KEYSIM_BAD_SNAPSHOT`. A reset still goes back to the start state.
   */
  snapshot?: unknown;
  /**
   * Refuse (421) requests whose `Host` is not a loopback name with the served port, when bound to
   * loopback (against DNS rebinding); default true. Off: every Host is answered.
   */
  checkHost?: boolean;
  /** 'manual' (default here: frozen until moved) or 'system' (real time plus an offset). */
  clock?: 'manual' | 'system';
  /** Where the clock starts, Unix ms; default now. */
  startMs?: number;
  seed?: number;
  compat?: Compat;
  /**
   * Faults injected from the start (as `/_sim/faults.set` takes them); an invalid configuration
   * makes createSimulator throw. Reset removes them like any other.
   */
  faults?: FaultsConfig;
}

export interface Simulator {
  /** Base URL, e.g. http://127.0.0.1:41234 (give it to the SDK as serverURL). */
  url: string;
  /** The start workspace's root key (every permission): the operator's credential for `/_sim/*`. */
  rootKey: string;
  workspaceId: string;
  clock: ControllableClock;
  engine: Engine;
  /** The injected faults: `set`, `clear`, `view` (what `/_sim/faults.*` call). */
  faults: FaultInjector;
  /** Back to the start state: same root key, clock at its start, no API rate limit, no faults. */
  reset(): void;
  close(): Promise<void>;
}

/** The platform's SHA-256: about twice as fast as the engine's own, and gives the same hashes. */
export const nodeSha256 = (text: string): string => hash('sha256', text, 'base64url');

export async function createSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
  const startMs = options.startMs ?? Date.now();
  const clock: ControllableClock = options.clock === 'system' ? new SystemClock(Date.now, startMs) : new ManualClock(startMs);
  const seed = options.seed ?? 1;
  const engine = new Engine({ clock, seed, compat: options.compat ?? 'interface', sha256: nodeSha256 });
  const faults = new FaultInjector(engine, seed, OPERATIONS);
  if (options.faults !== undefined) {
    const set = faults.set(options.faults, 'faults');
    if (!set.ok) throw new Error(`cannot start the simulator: ${set.error.detail}`);
  }

  const start = (rootKey: string | undefined) => {
    const created = engine.admin.createWorkspace(rootKey === undefined ? { name: 'default' } : { name: 'default', rootKey });
    if (!created.ok) throw new Error(`cannot start the simulator: ${created.error.detail}`);
    return created.value;
  };
  const initial = start(options.rootKey);
  const operatorRootKeyHash = nodeSha256(initial.rootKey);
  if (options.snapshot !== undefined) {
    const restored = restoreKeepingOperator({ engine, operatorRootKeyHash, clock }, options.snapshot);
    if (!restored.ok) {
      const first = restored.error.errors?.[0];
      const where = first === undefined ? '' : ` (${first.location}: ${first.message})`;
      throw Object.assign(new Error(`the snapshot cannot be restored: ${restored.error.detail}${where}`), { code: 'KEYSIM_BAD_SNAPSHOT' });
    }
  }
  const apiRateLimit = new ApiRateLimiter();
  const journal = new Journal(nodeSha256);
  const reset = () => {
    journal.stop('the simulator was reset');
    apiRateLimit.set(null);
    faults.clear();
    engine.reset();
    clock.resetToStart();
    start(initial.rootKey);
  };

  const { server, setAllowedHosts } = createSimulatorServer(
    { engine, clock, reset, apiRateLimit, faults, journal, operatorRootKeyHash },
    { sha256: nodeSha256, ...options, version: options.version ?? keysimVersion() },
  );
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  if (options.checkHost !== false && isLoopbackAddress(address.address)) setAllowedHosts(loopbackHosts(address.address, address.port));

  return {
    url: `http://${shownHost}:${address.port}`,
    rootKey: initial.rootKey,
    workspaceId: initial.workspaceId,
    clock,
    engine,
    faults,
    reset,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error === undefined ? resolve() : reject(error)));
        server.closeAllConnections();
      }),
  };
}
