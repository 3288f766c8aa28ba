/**
 * `--workers N`: N HTTP worker processes on one port, and this process as the one engine owner.
 *
 * This process listens and hands each accepted connection to the next worker in turn (round
 * robin, as node:cluster's primary does), passing the socket over IPC before reading a byte of
 * it. node:cluster itself is not used: its settings (the worker's script, its arguments) are
 * global to the process, and `createSimulator({ workers })` must work inside any program, a test
 * runner included, beside other simulators. `reusePort` would leave the spread to the kernel and
 * needs Linux 3.9+ and Node 22.12+; round robin spreads evenly wherever Node runs.
 *
 * Workers that die are restarted (the state lives here, so only their open connections are
 * lost); workers exit when this process goes away (their IPC channel closes).
 */
import { type AddressInfo, type Server, type Socket, createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import type { WorkerServerOptions } from './cluster-protocol.js';
import { EngineOwner } from './engine-owner.js';
import { WorkerPool } from './worker-pool.js';
import type { ObservedFaultInjector } from './observed-faults.js';
import type { RouteContext } from './route.js';

/** The most workers `--workers` accepts: more processes than this only add IPC on one owner. */
export const MAX_WORKERS = 64;

export interface ClusterOptions {
  ctx: RouteContext & { faults: ObservedFaultInjector };
  sha256: (text: string) => string;
  workers: number;
  host: string;
  port: number;
  serverOptions: WorkerServerOptions;
  /** Computes the `Host` headers to accept once the address is known (null: every one). */
  allowedHosts: (address: AddressInfo) => string[] | null;
  log: (line: string) => void;
}

export interface RunningCluster {
  address: AddressInfo;
  /** The workers' process ids, by worker number (for tests and the CLI's banner). */
  workerPids(): number[];
  close(): Promise<void>;
}

/** The worker script beside this file: TypeScript when running from the sources (through tsx). */
function workerScript(): { path: string; execArgv: string[] } {
  const here = fileURLToPath(import.meta.url);
  const fromSources = here.endsWith('.ts');
  return { path: here.replace(/cluster\.(ts|js)$/, `cluster-worker.${fromSources ? 'ts' : 'js'}`), execArgv: fromSources ? ['--import', 'tsx'] : [] };
}

/**
 * The owner's listening socket; each accepted connection is handed to a worker unread.
 *
 * `noDelay` (TCP_NODELAY) matters: node:http sets it on the connections its server accepts, but a
 * worker's server never accepts one (it is handed the socket), so without it here a worker's
 * answers go out under Nagle's algorithm. With pipelined requests the first answer leaves, the
 * rest wait for its ACK, and the client, which sends nothing until it has them all, delays that
 * ACK (40 ms on Linux): every round of a connection stalled ~40 ms, and `--workers 2` ran at
 * 0.77× one process with its cores half idle (docs/benchmarks.md#serve---workers).
 */
export function ownerListener(onConnection: (socket: Socket) => void): Server {
  return createServer({ pauseOnConnect: true, noDelay: true }, onConnection);
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

export async function startCluster(options: ClusterOptions): Promise<RunningCluster> {
  const owner = new EngineOwner(options.ctx, options.sha256);
  const pool = new WorkerPool(owner, workerScript(), options.serverOptions, options.log);
  const server: Server = ownerListener((socket) => pool.handOver(socket));
  await listen(server, options.port, options.host);
  const address = server.address() as AddressInfo;
  pool.allowedHosts = options.allowedHosts(address);
  try {
    await pool.start(options.workers);
  } catch (error) {
    server.close();
    await pool.stop();
    throw error;
  }

  return {
    address,
    workerPids: () => pool.pids(),
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      await pool.stop();
      await closed;
    },
  };
}
