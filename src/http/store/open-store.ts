/**
 * Opens a simulator's Redis store (docs/simulator.md#replicas-on-redis): connects, adopts or writes
 * the start state (genesis.ts), and, once the caller has built this replica's copy of the state
 * from it, applies the log so far and follows it (store-backend.ts).
 */
import type { Compat } from '../../engine/index.js';
import type { EngineBackend } from '../engine-backend.js';
import type { FaultsConfig } from '../faults.js';
import type { RouteContext } from '../route.js';
import { connectRedis } from './redis-link.js';
import { parseStoreUrl } from './store-url.js';
import { ANOTHER_ROOT_KEY, storeGenesis } from './genesis.js';
import { ReplicatedLog } from './replicated-log.js';
import { StoreBackend, type StampCell } from './store-backend.js';

export const DEFAULT_STORE_PREFIX = 'keysim';

/**
 * The safety bound on a request's wait for its own entry, ms: only a Redis that accepts appends
 * but never delivers them (hung) reaches it; a lost connection answers at once (replicated-log.ts).
 */
const ANSWER_TIMEOUT_MS = 60_000;

export interface StoreRequest {
  url: string;
  /** Names the store's keys (`{PREFIX}:log` …): several simulators can share one Redis. */
  prefix?: string;
  version: string;
  seed: number;
  rootKey: string | undefined;
  clock: 'manual' | 'system';
  startMs: number;
  compat: Compat;
  faults: FaultsConfig | undefined;
  /** Entries between two checkpoints (store-backend.ts, CHECKPOINT_EVERY by default); tests take fewer. */
  checkpointEvery?: number;
}

/** What the simulator is built from: the store's start state, whoever wrote it. */
export interface StoreStart {
  seed: number;
  rootKey?: string;
  clock: 'manual' | 'system';
  startMs: number;
  compat: Compat;
  faults?: FaultsConfig;
  /** The real time the clock runs on: the stamp of the log entry being applied. */
  realTimeMs: () => number;
}

export interface OpenedStore {
  start: StoreStart;
  /** Whether this replica wrote the start state (the first one on this store and prefix). */
  created: boolean;
  /** The URL as shown (no password). */
  shown: string;
  prefix: string;
  /** Applies the log so far to `ctx` (this replica's state, built from `start`) and follows it. */
  attach(ctx: RouteContext, sha256: (text: string) => string): Promise<EngineBackend>;
  close(): Promise<void>;
}

function checkPrefix(prefix: string): void {
  if (!/^[A-Za-z0-9._:-]{1,64}$/.test(prefix)) {
    throw new Error(`cannot start the simulator: --store-prefix ${JSON.stringify(prefix)} must be 1 to 64 letters, digits or . _ : - (no braces).`);
  }
}

export async function openStore(request: StoreRequest, log: (line: string) => void): Promise<OpenedStore> {
  const url = parseStoreUrl(request.url);
  if (!url.ok) throw new Error(`cannot start the simulator: ${url.message}`);
  const prefix = request.prefix ?? DEFAULT_STORE_PREFIX;
  checkPrefix(prefix);
  const tag = `{${prefix}}`;
  let lastError = '';
  const onError = (error: Error) => {
    // node-redis reports every failed reconnection; one line per distinct reason is enough.
    if (error.message !== lastError) log(`keysim: store ${url.value.shown}: ${error.message}`);
    lastError = error.message;
  };
  const link = await connectRedis(url.value, onError).catch((error: unknown) => {
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(
      `cannot start the simulator: the store ${url.value.shown} cannot be reached (${reason}). Start Redis there, or give the right --store URL.`,
    );
  });
  const wish = {
    version: request.version,
    seed: request.seed,
    rootKey: request.rootKey ?? null,
    clock: request.clock,
    startMs: request.startMs,
    compat: request.compat,
    faults: request.faults ?? null,
  };
  const { genesis, created } = await storeGenesis(link, `${tag}:genesis`, wish).catch(async (error: unknown) => {
    await link.close();
    throw new Error(`cannot start the simulator: ${error instanceof Error ? error.message : String(error)}`);
  });
  const stamp: StampCell = { ms: genesis.stampMs };
  const keys = { stream: `${tag}:log`, stamp: `${tag}:stamp`, genesis: `${tag}:genesis`, count: `${tag}:count`, checkpoint: `${tag}:checkpoint` };
  const replicated = new ReplicatedLog(link, keys, ANSWER_TIMEOUT_MS);
  const start: StoreStart = { seed: genesis.seed, clock: genesis.clock, startMs: genesis.startMs, compat: genesis.compat, realTimeMs: () => stamp.ms };
  if (genesis.rootKey !== null) start.rootKey = genesis.rootKey;
  if (genesis.faults !== null) start.faults = genesis.faults;
  return {
    start,
    created,
    shown: url.value.shown,
    prefix,
    async attach(ctx, sha256) {
      // The store's root key generated from its seed (none was given to the first replica): the one asked for must be it.
      // (The caller closes the store when this rejects.)
      if (request.rootKey !== undefined && sha256(request.rootKey) !== ctx.operatorRootKeyHash)
        throw new Error(`cannot start the simulator: ${ANOTHER_ROOT_KEY}`);
      const backend = new StoreBackend(ctx, replicated, stamp, sha256, request.checkpointEvery);
      await replicated.start(
        (entry) => backend.apply(entry),
        (starting) => backend.resume(starting),
      );
      return backend;
    },
    close: () => replicated.close(),
  };
}
