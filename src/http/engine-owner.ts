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
import { type EngineCall, executeCall } from './engine-backend.js';
import type { ObservedFaultInjector } from './observed-faults.js';
import { authorizeOperator } from './operator.js';
import type { Route, RouteContext } from './route.js';
import { ROUTES } from './routes.js';
import {
  ANSWER_FAILED,
  ANSWER_VALUE,
  CALL_CLOCK,
  CALL_FAULT,
  CALL_OPERATOR,
  CALL_RUN,
  type OwnerMessage,
  type WireAnswer,
  type WireCall,
  decodeRun,
  encodeOutcome,
  routeKey,
} from './cluster-protocol.js';

/** One worker as the owner sees it: where to send, and whether it is up. */
export interface WorkerPort {
  send(message: OwnerMessage): void;
  readonly connected: boolean;
}

export class EngineOwner {
  readonly #ctx: RouteContext & { faults: ObservedFaultInjector };
  readonly #sha256: (text: string) => string;
  /** Routes by the number calls name them with (`routeKeys`, sent to each worker at `init`). */
  readonly #routes: readonly Route[] = ROUTES;
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

  /** Every route's name, by the number a worker's calls use for it. */
  get routeKeys(): string[] {
    return this.#routes.map((route) => routeKey(route.method, route.path));
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
  async answer(worker: WorkerPort, calls: readonly WireCall[]): Promise<void> {
    const answers: WireAnswer[] = [];
    for (const call of calls) {
      try {
        answers.push(this.#one(call));
      } catch (error) {
        // A bug, as in one process: that request answers 500 (its worker logs it), the rest go on.
        answers.push([call[0], ANSWER_FAILED, error instanceof Error ? (error.stack ?? error.message) : String(error)]);
      }
    }
    await this.#syncFaultsFlag();
    if (this.#unsettled !== null) await this.#unsettled;
    if (worker.connected) worker.send({ k: 'answers', answers });
  }

  #one(call: WireCall): WireAnswer {
    const ctx = this.#ctx;
    const id = call[0];
    switch (call[1]) {
      case CALL_CLOCK:
        return [id, ANSWER_VALUE, ctx.clock.now()];
      case CALL_FAULT:
        return [id, ANSWER_VALUE, ctx.faults.decide(call[2])];
      case CALL_OPERATOR: {
        const operator = authorizeOperator(ctx, call[2] ?? undefined);
        return [id, ANSWER_VALUE, operator.ok ? null : fromEngine(operator.error)];
      }
      case CALL_RUN: {
        const run = decodeRun(call);
        const route = this.#routes[run.route];
        if (route === undefined) throw new Error(`a worker sent an unknown route number ${run.route}`);
        const engineCall: EngineCall = { route, token: run.token, input: run.input };
        if (run.rejection !== undefined) engineCall.rejection = run.rejection;
        if (run.seq !== undefined) engineCall.seq = run.seq;
        return encodeOutcome(id, executeCall(ctx, this.#sha256, engineCall));
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
