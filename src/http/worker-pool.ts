/**
 * The HTTP worker processes of `--workers N` (cluster.ts), as the engine owner sees them: started,
 * handed connections in turn, restarted when they die, stopped.
 */
import { type ChildProcess, fork } from 'node:child_process';
import type { Socket } from 'node:net';
import type { OwnerMessage, WorkerMessage, WorkerServerOptions } from './cluster-protocol.js';
import type { EngineOwner, WorkerPort } from './engine-owner.js';

/** How long a worker may take to close its connections when asked before it is killed. */
const STOP_GRACE_MS = 5_000;

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

/** The workers by number; a dead one is replaced under the same number. */
export class WorkerPool {
  /** The `Host` headers workers started from now on accept (null: every one); set once the address is known. */
  allowedHosts: string[] | null = null;
  private readonly workers: Array<Worker | undefined> = [];
  private closing = false;
  private turn = 0;

  constructor(
    private readonly owner: EngineOwner,
    private readonly script: { path: string; execArgv: string[] },
    private readonly serverOptions: WorkerServerOptions,
    private readonly log: (line: string) => void,
  ) {}

  start(count: number): Promise<unknown> {
    return Promise.all(Array.from({ length: count }, (_, i) => this.spawn(i)));
  }

  /** The next worker that is up; none up (all restarting) closes the connection. */
  handOver(socket: Socket): void {
    const { workers } = this;
    for (let tried = 0; tried < workers.length; tried++) {
      const worker = workers[this.turn];
      this.turn = (this.turn + 1) % workers.length;
      if (worker?.ready === true && worker.connected) {
        worker.send({ k: 'connection' }, socket);
        return;
      }
    }
    socket.destroy();
  }

  pids(): number[] {
    return this.workers.map((w) => w?.child.pid ?? 0);
  }

  /** Resolves once the worker says it is ready; rejects if it fails or exits before. */
  private spawn(workerId: number): Promise<void> {
    const child = fork(this.script.path, [], { execArgv: this.script.execArgv, serialization: 'json', stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    const worker = new Worker(child);
    this.workers[workerId] = worker;
    this.owner.attach(worker);
    return new Promise<void>((resolve, reject) => {
      child.on('message', (message: WorkerMessage) => {
        if (message.k === 'batch') void this.owner.answer(worker, message.calls);
        else if (message.k === 'ack') this.owner.acknowledge(worker, message.n);
        else if (message.k === 'ready') {
          worker.ready = true;
          resolve();
        }
      });
      child.once('error', reject);
      child.once('disconnect', () => worker.dropHandovers());
      child.once('exit', (code, signal) => this.exited(workerId, worker, `${signal ?? `code ${code}`}`, reject));
      child.send({
        k: 'init',
        workerId,
        options: this.serverOptions,
        allowedHosts: this.allowedHosts,
        faultsActive: this.owner.faultsActive,
        routes: this.owner.routeKeys,
      } satisfies OwnerMessage);
    });
  }

  private exited(workerId: number, worker: Worker, how: string, rejectStart: (error: Error) => void): void {
    worker.dropHandovers();
    this.owner.detach(worker);
    if (!worker.ready) {
      rejectStart(new Error(`HTTP worker ${workerId} exited before it was ready (${how})`));
      return;
    }
    if (this.closing) return;
    // The state is here: a new worker serves new connections as the old one did.
    this.log(`keysim: HTTP worker ${workerId} (pid ${worker.child.pid ?? '?'}) exited (${how}); starting another.`);
    this.spawn(workerId).catch((error: unknown) =>
      this.log(`keysim: cannot restart HTTP worker ${workerId}: ${error instanceof Error ? error.message : String(error)}`),
    );
  }

  stop(): Promise<void> {
    this.closing = true;
    return Promise.all(this.workers.map((worker) => stopWorker(worker))).then(() => undefined);
  }
}

function stopWorker(worker: Worker | undefined): Promise<void> {
  return new Promise<void>((resolve) => {
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
  });
}
