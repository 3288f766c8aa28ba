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
import { type ChildProcess, fork } from 'node:child_process';
import { type AddressInfo, type Server, type Socket, createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import type { OwnerMessage, WorkerMessage, WorkerServerOptions } from './cluster-protocol.js';
import { EngineOwner, type WorkerPort } from './engine-owner.js';
import type { ObservedFaultInjector } from './observed-faults.js';
import type { RouteContext } from './route.js';

/** The most workers `--workers` accepts: more processes than this only add IPC on one owner. */
export const MAX_WORKERS = 64;
/** How long a worker may take to close its connections when asked before it is killed. */
const STOP_GRACE_MS = 5_000;

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

class Worker implements WorkerPort {
  readonly child: ChildProcess;
  ready = false;
  /**
   * Connections being handed over. node sends one socket at a time (the next waits for the worker's
   * acknowledgement), so a worker that dies strands the queued ones with their clients waiting
   * for ever; and without `keepOpen` node itself holds this process's copy of the last one until an
   * acknowledgement that never comes. So this process keeps its copies, closes each once written
   * to the worker (the worker then has its own), and closes the rest when the worker dies.
   */
  readonly #handingOver = new Set<Socket>();
  constructor(child: ChildProcess) {
    this.child = child;
  }
  get connected(): boolean {
    return this.child.connected;
  }
  send(message: OwnerMessage, socket?: Socket): void {
    if (!this.child.connected) {
      socket?.destroy();
      return;
    }
    if (socket === undefined) {
      this.child.send(message);
      return;
    }
    this.#handingOver.add(socket);
    this.child.send(message, socket, { keepOpen: true }, () => {
      this.#handingOver.delete(socket);
      socket.destroy();
    });
  }
  /** The worker is gone: close what it never took. */
  dropHandovers(): void {
    for (const socket of this.#handingOver) socket.destroy();
    this.#handingOver.clear();
  }
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

export async function startCluster(options: ClusterOptions): Promise<RunningCluster> {
  const owner = new EngineOwner(options.ctx, options.sha256);
  const script = workerScript();
  const workers: Array<Worker | undefined> = [];
  let closing = false;
  let turn = 0;
  let allowedHosts: string[] | null = null;

  const server: Server = ownerListener((socket) => {
    // The next worker that is up; none up (all restarting) closes the connection.
    for (let tried = 0; tried < workers.length; tried++) {
      const worker = workers[turn];
      turn = (turn + 1) % workers.length;
      if (worker?.ready === true && worker.connected) {
        worker.send({ k: 'connection' }, socket);
        return;
      }
    }
    socket.destroy();
  });

  function spawnWorker(workerId: number): Promise<void> {
    const child = fork(script.path, [], { execArgv: script.execArgv, serialization: 'json', stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    const worker = new Worker(child);
    workers[workerId] = worker;
    owner.attach(worker);
    return new Promise<void>((resolve, reject) => {
      child.on('message', (message: WorkerMessage) => {
        if (message.k === 'batch') void owner.answer(worker, message.calls);
        else if (message.k === 'ack') owner.acknowledge(worker, message.n);
        else if (message.k === 'ready') {
          worker.ready = true;
          resolve();
        }
      });
      child.once('error', reject);
      child.once('disconnect', () => worker.dropHandovers());
      child.once('exit', (code, signal) => {
        worker.dropHandovers();
        owner.detach(worker);
        if (!worker.ready) {
          reject(new Error(`HTTP worker ${workerId} exited before it was ready (${signal ?? `code ${code}`})`));
          return;
        }
        if (closing) return;
        // The state is here: a new worker serves new connections as the old one did.
        options.log(`keysim: HTTP worker ${workerId} (pid ${child.pid ?? '?'}) exited (${signal ?? `code ${code}`}); starting another.`);
        spawnWorker(workerId).catch((error: unknown) =>
          options.log(`keysim: cannot restart HTTP worker ${workerId}: ${error instanceof Error ? error.message : String(error)}`),
        );
      });
      child.send({
        k: 'init',
        workerId,
        options: options.serverOptions,
        allowedHosts,
        faultsActive: owner.faultsActive,
        routes: owner.routeKeys,
      } satisfies OwnerMessage);
    });
  }

  function stopWorkers(): Promise<void> {
    closing = true;
    return Promise.all(
      workers.map(
        (worker) =>
          new Promise<void>((resolve) => {
            if (worker === undefined || worker.child.exitCode !== null || worker.child.signalCode !== null) {
              resolve();
              return;
            }
            // A worker that does not stop when asked (hung) is killed: none is ever left behind.
            const timer = setTimeout(() => worker.child.kill('SIGKILL'), STOP_GRACE_MS);
            worker.child.once('exit', () => {
              clearTimeout(timer);
              resolve();
            });
            if (worker.connected) worker.send({ k: 'stop' });
            else worker.child.kill('SIGKILL');
          }),
      ),
    ).then(() => undefined);
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  allowedHosts = options.allowedHosts(address);
  try {
    await Promise.all(Array.from({ length: options.workers }, (_, i) => spawnWorker(i)));
  } catch (error) {
    server.close();
    await stopWorkers();
    throw error;
  }

  return {
    address,
    workerPids: () => workers.map((w) => w?.child.pid ?? 0),
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      await stopWorkers();
      await closed;
    },
  };
}
