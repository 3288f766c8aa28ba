/**
 * An HTTP worker's link to the engine owner (engine-owner.ts): an `EngineBackend` whose answers
 * come over IPC. Calls made during one turn of the event loop leave together in one message
 * (a busy worker sends one batch per turn, not one message per request), as tuples
 * (cluster-protocol.ts).
 */
import type { Problem } from './envelope.js';
import type { EngineBackend, EngineCall, EngineOutcome } from './engine-backend.js';
import type { FaultDecision } from './faults.js';
import type { Route } from './route.js';
import {
  CALL_CLOCK,
  CALL_FAULT,
  CALL_OPERATOR,
  type OwnerMessage,
  type WireCall,
  type WorkerMessage,
  decodeAnswer,
  encodeRun,
  routeKey,
} from './cluster-protocol.js';

type Pending = { resolve: (value: unknown) => void; reject: (error: Error) => void };

export class EngineLink implements EngineBackend {
  readonly #send: (message: WorkerMessage) => void;
  readonly #pending = new Map<number, Pending>();
  /** The owner's number for each route (its `init` list), looked up once per route object. */
  readonly #ownerRoutes: ReadonlyMap<string, number>;
  readonly #routeNumbers = new Map<Route, number>();
  #nextId = 0;
  #batch: WireCall[] = [];
  #faultsActive: boolean;

  constructor(send: (message: WorkerMessage) => void, faultsActive: boolean, ownerRoutes: readonly string[]) {
    this.#send = send;
    this.#faultsActive = faultsActive;
    this.#ownerRoutes = new Map(ownerRoutes.map((key, number) => [key, number]));
  }

  get faultsActive(): boolean {
    return this.#faultsActive;
  }

  /** Takes in what the owner sent about the state (answers, the faults flag). */
  receive(message: OwnerMessage): void {
    if (message.k === 'answers') {
      for (const answer of message.answers) {
        const pending = this.#pending.get(answer[0]);
        if (pending === undefined) continue;
        this.#pending.delete(answer[0]);
        let value: unknown;
        try {
          value = decodeAnswer(answer);
        } catch (error) {
          pending.reject(error as Error);
          continue;
        }
        pending.resolve(value);
      }
    } else if (message.k === 'faults') {
      this.#faultsActive = message.active;
      this.#send({ k: 'ack', n: message.n });
    }
  }

  /** The owner is gone: nothing pending will be answered. */
  fail(reason: string): void {
    for (const pending of this.#pending.values()) pending.reject(new Error(reason));
    this.#pending.clear();
  }

  decideFault(operation: string): Promise<FaultDecision | null> {
    return this.#ask([this.#nextId++, CALL_FAULT, operation]) as Promise<FaultDecision | null>;
  }

  async authorizeOperator(token: string | undefined): Promise<Problem | undefined> {
    const problem = (await this.#ask([this.#nextId++, CALL_OPERATOR, token ?? null])) as Problem | null;
    return problem ?? undefined;
  }

  clockNow(): Promise<number> {
    return this.#ask([this.#nextId++, CALL_CLOCK]) as Promise<number>;
  }

  run(call: EngineCall): Promise<EngineOutcome> {
    return this.#ask(encodeRun(this.#nextId++, this.#routeNumber(call.route), call)) as Promise<EngineOutcome>;
  }

  #routeNumber(route: Route): number {
    let number = this.#routeNumbers.get(route);
    if (number === undefined) {
      number = this.#ownerRoutes.get(routeKey(route.method, route.path));
      // Owner and worker run the same routes.ts; a route the owner lacks is a bug (a 500).
      if (number === undefined) throw new Error(`the engine owner has no route ${route.method} ${route.path}`);
      this.#routeNumbers.set(route, number);
    }
    return number;
  }

  /** Queues a call for this turn's batch; its answer is matched by the call's id (its first element). */
  #ask(call: WireCall): Promise<unknown> {
    if (this.#batch.length === 0) setImmediate(() => this.#flush());
    this.#batch.push(call);
    return new Promise((resolve, reject) => this.#pending.set(call[0], { resolve, reject }));
  }

  #flush(): void {
    const calls = this.#batch;
    this.#batch = [];
    this.#send({ k: 'batch', calls });
  }
}
