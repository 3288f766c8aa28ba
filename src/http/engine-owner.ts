/**
 * The engine owner of `keysim serve --workers N`: the one process holding the state — engine,
 * clock, journal, API rate limit, injected faults, reset — and the only one that calls the
 * engine. HTTP workers send it parsed, validated calls (cluster-protocol.ts); it executes them in
 * the order they arrive, one batch at a time, with the same `executeCall` a single process runs,
 * so the journal has one order and every answer is what one process would have given.
 *
 * Transport faults: every decision (latency, drop, 500) is drawn here, from the one seeded
 * sequence, in the order requests reach the owner — so a sequential run is reproducible exactly
 * as with one process. Workers only keep a "faults on" flag so that they ask only when needed;
 * a change made through `/_sim/*` is acknowledged by every worker before its answer leaves.
 */
import { fromEngine } from './envelope.js';
import { executeCall } from './engine-backend.js';
import type { ObservedFaultInjector } from './observed-faults.js';
import { authorizeOperator } from './operator.js';
import type { Route, RouteContext } from './route.js';
import { ROUTES } from './routes.js';
import { type OwnerMessage, type WorkerCall, routeKey } from './cluster-protocol.js';

/** One worker as the owner sees it: where to send, and whether it is up. */
export interface WorkerPort {
  send(message: OwnerMessage): void;
  readonly connected: boolean;
}

export class EngineOwner {
  readonly #ctx: RouteContext & { faults: ObservedFaultInjector };
  readonly #sha256: (text: string) => string;
  readonly #routes = new Map<string, Route>(ROUTES.map((route) => [routeKey(route.method, route.path), route]));
  readonly #workers = new Set<WorkerPort>();
  #faultsActive: boolean;
  #flagNumber = 0;
  readonly #waitingAcks = new Map<number, { left: Set<WorkerPort>; done: () => void }>();
  /** A faults change some worker has not acknowledged yet (null: every worker has the flag). */
  #unsettled: Promise<void> | null = null;

  constructor(ctx: RouteContext & { faults: ObservedFaultInjector }, sha256: (text: string) => string) {
    this.#ctx = ctx;
    this.#sha256 = sha256;
    this.#faultsActive = ctx.faults.active;
    // A change made in this process (sim.faults.set, sim.reset) is sent at once; answers leaving
    // after it wait for every worker's acknowledgement, so that a client that got any answer
    // since finds the change in every worker.
    ctx.faults.onChange = () => {
      void this.#syncFaultsFlag();
    };
  }

  /** Whether transport faults are on (what a newly started worker is told). */
  get faultsActive(): boolean {
    return this.#faultsActive;
  }

  attach(worker: WorkerPort): void {
    this.#workers.add(worker);
  }

  /** A worker is gone: it owes no acknowledgement any more. */
  detach(worker: WorkerPort): void {
    this.#workers.delete(worker);
    for (const [n, waiting] of this.#waitingAcks) this.acknowledge(worker, n, waiting);
  }

  acknowledge(worker: WorkerPort, n: number, waiting = this.#waitingAcks.get(n)): void {
    if (waiting === undefined) return;
    waiting.left.delete(worker);
    if (waiting.left.size === 0) {
      this.#waitingAcks.delete(n);
      waiting.done();
    }
  }

  /** Answers one batch of a worker; the answers leave once every worker knows of a faults change it made. */
  async answer(worker: WorkerPort, calls: readonly WorkerCall[]): Promise<void> {
    const answers: Array<[number, unknown] | [number, null, string]> = [];
    for (const call of calls) {
      try {
        answers.push([call.id, this.#one(call)]);
      } catch (error) {
        // A bug, as in one process: that request answers 500 (its worker logs it), the rest go on.
        answers.push([call.id, null, error instanceof Error ? (error.stack ?? error.message) : String(error)]);
      }
    }
    await this.#syncFaultsFlag();
    if (this.#unsettled !== null) await this.#unsettled;
    if (worker.connected) worker.send({ k: 'answers', answers });
  }

  #one(call: WorkerCall): unknown {
    const ctx = this.#ctx;
    switch (call.k) {
      case 'clock':
        return ctx.clock.now();
      case 'fault':
        return ctx.faults.decide(call.operation);
      case 'operator': {
        const operator = authorizeOperator(ctx, call.token);
        return operator.ok ? null : fromEngine(operator.error);
      }
      case 'run': {
        const route = this.#routes.get(call.route);
        if (route === undefined) throw new Error(`a worker sent an unknown route ${call.route}`);
        return executeCall(ctx, this.#sha256, {
          route,
          token: call.token,
          input: call.input,
          ...(call.rejection === undefined ? {} : { rejection: call.rejection }),
          ...(call.seq === undefined ? {} : { seq: call.seq }),
        });
      }
    }
  }

  /** Tells every worker when the faults flag changed, and waits for all of them to have it. */
  #syncFaultsFlag(): Promise<void> {
    const active = this.#ctx.faults.active;
    if (active === this.#faultsActive) return Promise.resolve();
    this.#faultsActive = active;
    const n = ++this.#flagNumber;
    const left = new Set([...this.#workers].filter((w) => w.connected));
    if (left.size === 0) return Promise.resolve();
    const settled = new Promise<void>((resolve) => {
      this.#waitingAcks.set(n, {
        left,
        done: () => {
          if (this.#unsettled === settled) this.#unsettled = null;
          resolve();
        },
      });
      for (const worker of left) worker.send({ k: 'faults', active, n });
    });
    this.#unsettled = settled;
    return settled;
  }
}
