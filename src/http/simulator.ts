/**
 * The simulator as a running server: an engine on a controllable clock behind real HTTP, started
 * in the documented start state (one workspace whose root key has every permission), or in a
 * restored snapshot. The start root key is the operator's: the only credential of `/_sim/*`.
 */
import { hash } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { type Compat, type ControllableClock, Engine, ManualClock, ProductionProfile, type ProductionFigures, SystemClock } from '../engine/index.js';
import { regionContexts } from './regions.js';
import { MAX_KEEP_ALIVE_TIMEOUT_MS, type ServerOptions } from './server-options.js';
import { ApiRateLimiter } from './api-rate-limit.js';
import type { FaultInjector, FaultsConfig } from './faults.js';
import { ObservedFaultInjector } from './observed-faults.js';
import { MAX_WORKERS } from './cluster.js';
import { listenInProcess, listenWithWorkers } from './simulator-listen.js';
import type { RouteContext } from './route.js';
import { OPERATIONS } from './operations.js';
import { Journal } from './journal.js';
import { restoreKeepingOperator } from './operator.js';
import { allowedHostEntry, isLoopbackAddress, loopbackHosts } from './host-check.js';
import { keysimVersion } from '../version.js';
import { type OpenedStore, openStore, type StoreStart } from './store/open-store.js';

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
   * `code` is `KEYSIM_BAD_SNAPSHOT`. A reset still goes back to the start state. A snapshot read
   * from its text one record at a time (engine SnapshotReader) is passed as its CheckedSnapshot.
   */
  snapshot?: unknown;
  /**
   * Refuse (421) requests whose `Host` is not a loopback name with the served port, when bound to
   * loopback (against DNS rebinding); default true. Off: every Host is answered.
   */
  checkHost?: boolean;
  /**
   * Further `Host` names answered on loopback, for a reverse proxy in front that passes the
   * client's Host on: `NAME` (any port) or `NAME:PORT` (host-check.ts). An invalid one makes
   * createSimulator throw. The loopback names stay allowed; every other Host still gets 421.
   */
  allowedHosts?: readonly string[];
  /** 'manual' (default here: frozen until moved) or 'system' (real time plus an offset). */
  clock?: 'manual' | 'system';
  /** Where the clock starts, Unix ms; default now. */
  startMs?: number;
  /**
   * The real time a 'system' clock runs on, Unix ms (default `Date.now`). A test can give one that
   * moves on every read, to show that each request reads the service clock once.
   */
  realTimeMs?: () => number;
  seed?: number;
  compat?: Compat;
  /**
   * Faults injected from the start (as `/_sim/faults.set` takes them); an invalid configuration
   * makes createSimulator throw. Reset removes them like any other.
   */
  faults?: FaultsConfig;
  /**
   * HTTP worker processes (default 1: everything in this process). From 2, this process stays the
   * one owner of the state — `clock`, `engine`, `faults` and `reset()` below act on it directly —
   * and N child processes serve the HTTP on the same port (cluster.ts). Every answer then carries
   * an `x-keysim-worker` header naming the worker that served it.
   */
  workers?: number;
  /**
   * 'exact' (default): one linearizable engine. 'production': the production service as it
   * behaves (docs/simulator.md#the-production-profile): `regions` regions, each with its own credit
   * counters and key caches, in front of the exact engine as database; a request's region is its
   * `X-Keysim-Region` header (1..regions), else its connection's, and every answer names it in
   * `x-keysim-region`. Its compat defaults to 'production'. One process only (no `workers`).
   */
  profile?: SimulatorProfile;
  /** The production profile's regions, 1 to 16; default 2. */
  regions?: number;
  /** The production profile's delay before a debit reaches the database, ms; default 1..5000. */
  replayDelayMs?: { min: number; max: number };
  /**
   * The production profile's other figures (counter life, key cache, rate-limit sync …), for a
   * deployment slower or faster than the documented one; `regions` and `replayDelayMs` above win.
   */
  productionFigures?: Partial<ProductionFigures>;
  /**
   * Keep the state in Redis (docs/simulator.md#replicas-on-redis): `redis://HOST:PORT[/DB]`,
   * `rediss://…` or `redis-cluster://HOST:PORT,…`. Every simulator started on the same store and
   * `storePrefix` is a replica of one simulator: the first one's start options (seed, root key,
   * clock, compat, faults) are the store's, and the others adopt them. Exact profile, one process
   * (no `workers`), no `snapshot` (restore through `/_sim/restore` once up). The returned `engine`,
   * `clock` and `faults` are then this replica's copy: change state through the HTTP surface.
   */
  store?: string;
  /** Names the store's keys (default "keysim"): simulators with different prefixes share a Redis. */
  storePrefix?: string;
  /** Log entries between two checkpoints of the store's state (default 10,000): the log holds about twice this many. */
  storeCheckpointEvery?: number;
}

export type SimulatorProfile = 'exact' | 'production';

export interface Simulator {
  /** Base URL, e.g. http://127.0.0.1:41234 (give it to the SDK as serverURL). */
  url: string;
  /** The start workspace's root key (every permission): the operator's credential for `/_sim/*`. */
  rootKey: string;
  workspaceId: string;
  clock: ControllableClock;
  /** The exact engine; with the production profile, its database. */
  engine: Engine;
  /** The production profile (its regions over `engine`); undefined on the exact engine. */
  profile: ProductionProfile | undefined;
  /** The injected faults: `set`, `clear`, `view` (what `/_sim/faults.*` call). */
  faults: FaultInjector;
  /** The Redis store this replica shares (the URL without its password); undefined in memory. */
  store: { url: string; prefix: string; created: boolean } | undefined;
  /**
   * Back to the start state: same root key, clock at its start, no API rate limit, no faults. A
   * store-backed replica throws: reset it with POST /_sim/reset, which resets every replica.
   */
  reset(): void;
  close(): Promise<void>;
}

/** The platform's SHA-256: about twice as fast as the engine's own, and gives the same hashes. */
export const nodeSha256 = (text: string): string => hash('sha256', text, 'base64url');
/** The same as a string of its 32 bytes (`binary`, Node's name for latin1): the form the engine keeps a key's hash in (src/engine/key-digest.ts). */
export const nodeSha256Digest = (text: string): string => hash('sha256', text, 'binary');

/** The engine, its clock and faults in the start state (or the snapshot), and how to reset them. */
interface SimulatorState {
  ctx: RouteContext & { faults: ObservedFaultInjector; engine: Engine };
  profile: ProductionProfile | undefined;
  initial: { rootKey: string; workspaceId: string };
}

function checkWorkers(workers: number): void {
  if (!Number.isInteger(workers) || workers < 1 || workers > MAX_WORKERS) {
    throw new Error(`cannot start the simulator: workers must be an integer from 1 to ${MAX_WORKERS}, got ${String(workers)}.`);
  }
}

function checkKeepAlive(keepAliveMs: number | undefined): void {
  if (keepAliveMs !== undefined && (!Number.isFinite(keepAliveMs) || keepAliveMs < 1_000 || keepAliveMs > MAX_KEEP_ALIVE_TIMEOUT_MS)) {
    throw new Error(
      `cannot start the simulator: keepAliveTimeoutMs must be from 1000 (1 s) to ${MAX_KEEP_ALIVE_TIMEOUT_MS} (an hour), got ${String(keepAliveMs)}.`,
    );
  }
}

/** The further Host names of `allowedHosts`, each checked (host-check.ts). */
function extraHostsOf(allowedHosts: readonly string[] | undefined): string[] {
  return (allowedHosts ?? []).map((h) => {
    const entry = allowedHostEntry(h);
    if (!entry.ok) throw new Error(`cannot start the simulator: allowedHosts: ${entry.message}`);
    return entry.entry;
  });
}

/** A snapshot the restore refuses is an error with `code` KEYSIM_BAD_SNAPSHOT (SimulatorOptions.snapshot). */
function restoreSnapshot(engine: Engine, operatorRootKeyHash: string, clock: ControllableClock, snapshot: unknown): void {
  const restored = restoreKeepingOperator({ engine, operatorRootKeyHash, clock }, snapshot);
  if (!restored.ok) {
    const first = restored.error.errors?.[0];
    const where = first === undefined ? '' : ` (${first.location}: ${first.message})`;
    throw Object.assign(new Error(`the snapshot cannot be restored: ${restored.error.detail}${where}`), { code: 'KEYSIM_BAD_SNAPSHOT' });
  }
}

/** Whether the production profile is asked for; its refusals are errors naming the option. */
function checkProfile(options: SimulatorOptions, workers: number): boolean {
  const profile = options.profile ?? 'exact';
  if (profile !== 'exact' && profile !== 'production') {
    throw new Error(`cannot start the simulator: profile must be "exact" or "production", got ${JSON.stringify(profile)}.`);
  }
  if (profile === 'exact') {
    if (options.regions !== undefined) throw new Error('cannot start the simulator: regions applies to the production profile only; add profile "production".');
    return false;
  }
  if (workers > 1) {
    throw new Error('cannot start the simulator: the production profile runs in one process; leave workers at 1 (no --workers) or use the exact profile.');
  }
  return true;
}

function productionProfile(engine: Engine, options: SimulatorOptions): ProductionProfile {
  try {
    return new ProductionProfile({
      engine,
      ...options.productionFigures,
      ...(options.regions === undefined ? {} : { regions: options.regions }),
      ...(options.replayDelayMs === undefined ? {} : { replayDelayMs: options.replayDelayMs }),
    });
  } catch (error) {
    throw new Error(`cannot start the simulator: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
}

/** The state the routes act on; the options are checked in the order their errors are documented. */
function simulatorState(options: SimulatorOptions, workers: number): SimulatorState {
  const startMs = options.startMs ?? Date.now();
  const clock: ControllableClock = options.clock === 'system' ? new SystemClock(options.realTimeMs ?? Date.now, startMs) : new ManualClock(startMs);
  const seed = options.seed ?? 1;
  const production = checkProfile(options, workers);
  // The production service's own rules (refill, authentication) come with its profile.
  const compat = options.compat ?? (production ? 'production' : 'interface');
  const engine = new Engine({ clock, seed, compat, sha256: nodeSha256, sha256Digest: nodeSha256Digest });
  checkWorkers(workers);
  const profile = production ? productionProfile(engine, options) : undefined;
  const faults = new ObservedFaultInjector(engine, seed, OPERATIONS);
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
  if (options.snapshot !== undefined) restoreSnapshot(engine, operatorRootKeyHash, clock, options.snapshot);
  const apiRateLimit = new ApiRateLimiter();
  const journal = new Journal(nodeSha256);
  const reset = () => {
    journal.stop('the simulator was reset');
    apiRateLimit.set(null);
    faults.clear();
    if (profile === undefined) engine.reset();
    else profile.reset();
    clock.resetToStart();
    start(initial.rootKey);
  };
  const ctx: SimulatorState['ctx'] = { engine, clock, reset, apiRateLimit, faults, journal, operatorRootKeyHash };
  if (profile !== undefined) ctx.regions = regionContexts(ctx, profile);
  return { ctx, profile, initial };
}

/** A store-backed replica's state changes only through the log: its own copy must not move alone. */
function storeReset(): never {
  throw new Error('a store-backed simulator resets through its log: POST /_sim/reset (with the operator root key) on any replica.');
}

/** The Redis store of `options.store`, opened (store-backed mode), after refusing what it cannot do. */
async function openStoreOf(options: SimulatorOptions, workers: number, version: string): Promise<OpenedStore | undefined> {
  if (options.store === undefined) return undefined;
  const refuse = (why: string) => new Error(`cannot start the simulator: ${why}`);
  if (workers > 1) throw refuse('a store-backed simulator serves from one process per replica; leave out workers and start more replicas on the same store.');
  if ((options.profile ?? 'exact') !== 'exact') throw refuse('a store-backed simulator runs the exact profile; leave out the production profile.');
  if (options.snapshot !== undefined) throw refuse('a store-backed simulator starts from its store; restore a snapshot with POST /_sim/restore once it is up.');
  const request = {
    url: options.store,
    version,
    seed: options.seed ?? 1,
    rootKey: options.rootKey,
    clock: options.clock ?? 'manual',
    startMs: options.startMs ?? Date.now(),
    compat: options.compat ?? 'interface',
    faults: options.faults,
    ...(options.storePrefix === undefined ? {} : { prefix: options.storePrefix }),
    ...(options.storeCheckpointEvery === undefined ? {} : { checkpointEvery: options.storeCheckpointEvery }),
  };
  return openStore(request, options.log ?? ((line) => process.stderr.write(`${line}\n`)));
}

/** A replica's options with its store's start state: its root key too, the one generated from its seed when it names none. */
function withStoreStart(options: SimulatorOptions, start: StoreStart): SimulatorOptions {
  const adopted: SimulatorOptions = { ...options, ...start };
  if (start.rootKey === undefined) delete adopted.rootKey;
  return adopted;
}

export async function createSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
  const workers = options.workers ?? 1;
  const version = options.version ?? keysimVersion();
  const store = await openStoreOf(options, workers, version);
  try {
    return await listenSimulator(options, workers, version, store);
  } catch (error) {
    // A simulator that does not start lets go of its store (or the connection keeps the process alive).
    await store?.close();
    throw error;
  }
}

/** The state (from the store's start, when there is one), then the server on it. */
async function listenSimulator(options: SimulatorOptions, workers: number, version: string, store: OpenedStore | undefined): Promise<Simulator> {
  const { ctx, profile, initial } = simulatorState(store === undefined ? options : withStoreStart(options, store.start), workers);
  const backend = store === undefined ? undefined : await store.attach(ctx, nodeSha256);
  const serverOptions = { sha256: nodeSha256, ...options, version };
  const host = options.host ?? '127.0.0.1';
  const extraHosts = extraHostsOf(options.allowedHosts);
  checkKeepAlive(options.keepAliveTimeoutMs);
  const hostsFor = (address: AddressInfo) =>
    options.checkHost !== false && isLoopbackAddress(address.address) ? [...loopbackHosts(address.address, address.port), ...extraHosts] : null;
  const port = options.port ?? 0;
  const listening =
    workers > 1
      ? await listenWithWorkers(ctx, { options, version: serverOptions.version, sha256: nodeSha256, workers, host, port, hostsFor })
      : await listenInProcess(backend ?? ctx, serverOptions, host, port, hostsFor);
  const { address } = listening;
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;

  return {
    url: `http://${shownHost}:${address.port}`,
    rootKey: initial.rootKey,
    workspaceId: initial.workspaceId,
    clock: ctx.clock,
    engine: ctx.engine,
    profile,
    faults: ctx.faults,
    store: store === undefined ? undefined : { url: store.shown, prefix: store.prefix, created: store.created },
    reset: store === undefined ? ctx.reset : storeReset,
    close:
      store === undefined
        ? listening.close
        : async () => {
            await listening.close();
            await store.close();
          },
  };
}
