/**
 * An HTTP worker's link to the engine owner (engine-owner.ts): an `EngineBackend` whose answers
 * come over IPC. Calls made during one turn of the event loop leave together in one message
 * (a busy worker sends one batch per turn, not one message per request).
 */
import type { Problem } from './envelope.js';
import type { EngineBackend, EngineCall, EngineOutcome } from './engine-backend.js';
import type { FaultDecision } from './faults.js';
import { type OwnerMessage, type WorkerCall, type WorkerMessage, routeKey } from './cluster-protocol.js';

type Pending = { resolve: (value: unknown) => void; reject: (error: Error) => void };
type Unsent<C> = C extends WorkerCall ? Omit<C, 'id'> : never;

export class EngineLink implements EngineBackend {
  readonly #send: (message: WorkerMessage) => void;
  readonly #pending = new Map<number, Pending>();
  #nextId = 0;
  #batch: WorkerCall[] = [];
  #faultsActive: boolean;

  constructor(send: (message: WorkerMessage) => void, faultsActive: boolean) {
    this.#send = send;
    this.#faultsActive = faultsActive;
  }

  get faultsActive(): boolean {
    return this.#faultsActive;
  }

  /** Takes in what the owner sent about the state (answers, the faults flag). */
  receive(message: OwnerMessage): void {
    if (message.k === 'answers') {
      for (const [id, value, error] of message.answers) {
        const pending = this.#pending.get(id);
        if (pending === undefined) continue;
        this.#pending.delete(id);
        if (error === undefined) pending.resolve(value);
        else pending.reject(new Error(`the engine owner failed: ${error}`));
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
    return this.#ask({ k: 'fault', operation }) as Promise<FaultDecision | null>;
  }

  async authorizeOperator(token: string | undefined): Promise<Problem | undefined> {
    const problem = (await this.#ask(token === undefined ? { k: 'operator' } : { k: 'operator', token })) as Problem | null;
    return problem ?? undefined;
  }

  clockNow(): Promise<number> {
    return this.#ask({ k: 'clock' }) as Promise<number>;
  }

  run(call: EngineCall): Promise<EngineOutcome> {
    const wire: Unsent<WorkerCall> = { k: 'run', route: routeKey(call.route.method, call.route.path), input: call.input };
    if (call.token !== undefined) wire.token = call.token;
    if (call.rejection !== undefined) wire.rejection = call.rejection;
    if (call.seq !== undefined) wire.seq = call.seq;
    return this.#ask(wire) as Promise<EngineOutcome>;
  }

  #ask(call: Unsent<WorkerCall>): Promise<unknown> {
    const id = this.#nextId++;
    if (this.#batch.length === 0) setImmediate(() => this.#flush());
    this.#batch.push({ ...call, id } as WorkerCall);
    return new Promise((resolve, reject) => this.#pending.set(id, { resolve, reject }));
  }

  #flush(): void {
    const calls = this.#batch;
    this.#batch = [];
    this.#send({ k: 'batch', calls });
  }
}
