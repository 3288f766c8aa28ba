/**
 * A replica's `EngineBackend` when the simulator's state lives in Redis (docs/simulator.md#replicas-on-redis):
 * every request that reads or changes state is appended to the store's log (replicated-log.ts)
 * and answered once this replica has applied it, with the same `executeCall` a single process
 * runs, at the instant the log stamped it. All replicas apply the same entries in the same order
 * from the same start, so they hold the same state and give the same answers; a request on one
 * replica sees everything any replica answered before it.
 *
 * What stays local: the transport faults' dice (each replica draws from the shared configuration)
 * and the operator check (the operator's key is fixed at the start).
 */
import { fromEngine, type Problem } from '../envelope.js';
import { BackendUnavailable, type EngineBackend, type EngineCall, type EngineOutcome, executeCall } from '../engine-backend.js';
import type { FaultDecision } from '../faults.js';
import { authorizeOperator } from '../operator.js';
import type { Route, RouteContext } from '../route.js';
import { ROUTES } from '../routes.js';
import { routeKey } from '../cluster-protocol.js';
import { type LogEntry, type LogPosition, type ReplicatedLog, StoreUnavailable } from './replicated-log.js';
import { type CheckpointState, captureState, resumeState } from './checkpoint.js';

/** What a log entry carries: a request (`run`), or a read of the service clock (`now`). */
type Payload = { k: 'now' } | { k: 'run'; r: string; t: string | null; i: unknown; x?: Problem; q?: number };

/** The real time the clock runs on while an entry is applied: the entry's stamp (log-script.ts). */
export interface StampCell {
  ms: number;
}

const RESET_ROUTE = routeKey('POST', '/_sim/reset');

/**
 * Entries between two checkpoints. A checkpoint costs the replica that writes it a snapshot of the
 * whole state (about what `/_sim/snapshot` costs); the log holds about twice this many entries.
 */
export const CHECKPOINT_EVERY = 10_000;

/** What the store keeps as a checkpoint: the state, and the stamp of the entry it stands after. */
interface KeptCheckpoint {
  stampMs: number;
  state: CheckpointState;
}

export function storeUnavailable(detail: string): Problem {
  return {
    status: 503,
    title: 'Service Unavailable',
    identifier: 'err:service:application:service_unavailable',
    detail: `The simulator's Redis store is unavailable: ${detail}`,
  };
}

export class StoreBackend implements EngineBackend {
  readonly #ctx: RouteContext;
  readonly #log: ReplicatedLog;
  readonly #stamp: StampCell;
  readonly #sha256: (text: string) => string;
  readonly #routes = new Map<string, Route>(ROUTES.map((route) => [routeKey(route.method, route.path), route]));
  readonly #checkpointEvery: number;

  constructor(ctx: RouteContext, log: ReplicatedLog, stamp: StampCell, sha256: (text: string) => string, checkpointEvery = CHECKPOINT_EVERY) {
    this.#ctx = ctx;
    this.#log = log;
    this.#stamp = stamp;
    this.#sha256 = sha256;
    this.#checkpointEvery = checkpointEvery;
  }

  get faultsActive(): boolean {
    return this.#ctx.faults.active;
  }

  decideFault(operation: string): FaultDecision | null {
    return this.#ctx.faults.decide(operation);
  }

  authorizeOperator(token: string | undefined): Problem | undefined {
    const operator = authorizeOperator(this.#ctx, token);
    return operator.ok ? undefined : fromEngine(operator.error);
  }

  /** Through the log: a replica that answers has caught up and reaches its store (a readiness probe's question). */
  async clockNow(): Promise<number> {
    try {
      return (await this.#log.submit(JSON.stringify({ k: 'now' } satisfies Payload))) as number;
    } catch (error) {
      if (error instanceof StoreUnavailable) throw new BackendUnavailable(storeUnavailable(error.message));
      throw error;
    }
  }

  async run(call: EngineCall): Promise<EngineOutcome> {
    const payload: Payload = { k: 'run', r: routeKey(call.route.method, call.route.path), t: call.token ?? null, i: call.input };
    if (call.rejection !== undefined) payload.x = call.rejection;
    if (call.seq !== undefined) payload.q = call.seq;
    try {
      return (await this.#log.submit(JSON.stringify(payload))) as EngineOutcome;
    } catch (error) {
      if (error instanceof StoreUnavailable) return { ok: false, problem: storeUnavailable(error.message) };
      throw error;
    }
  }

  /** Applies one entry of the log to this replica's state; answers what its sender is told. */
  apply(entry: LogEntry): unknown {
    this.#stamp.ms = entry.stampMs;
    const payload = JSON.parse(entry.payload) as Payload;
    if (payload.k === 'now') return this.#ctx.clock.holding((nowMs) => nowMs);
    const route = this.#routes.get(payload.r);
    // Every replica runs the same keysim version (genesis.ts), so this is a bug, not a user's error.
    if (route === undefined) throw new Error(`the store's log holds a request for ${payload.r}, which this replica does not serve.`);
    const call: EngineCall = { route, token: payload.t ?? undefined, input: payload.i };
    if (payload.x !== undefined) call.rejection = payload.x;
    if (payload.q !== undefined) call.seq = payload.q;
    const outcome = executeCall(this.#ctx, this.#sha256, call);
    if (entry.origin !== this.#log.origin) return undefined;
    // Every so many entries, and after a reset (whose log before it no one needs), the replica
    // that sent the entry keeps a checkpoint: one writer per checkpoint.
    if (entry.count % this.#checkpointEvery === 0 || (payload.r === RESET_ROUTE && outcome.ok)) this.#keepCheckpoint(entry);
    // The sender renders the answer after later entries have been applied: it gets its own copy,
    // not records the next entries may change.
    return structuredClone(outcome);
  }

  #keepCheckpoint(entry: LogEntry): void {
    const kept: KeptCheckpoint = { stampMs: entry.stampMs, state: captureState(this.#ctx) };
    // A checkpoint that cannot be kept (Redis away) is not needed for anything but trimming: the next one will do.
    this.#log.keepCheckpoint(entry, JSON.stringify(kept)).catch(() => undefined);
  }

  /**
   * Puts this replica's state where the newest checkpoint stands and answers that place in the
   * log. Without a checkpoint a starting replica (`starting`) begins before the first entry, on the
   * start state it was built with; a replica that lost entries and finds none cannot go on.
   */
  async resume(starting: boolean): Promise<LogPosition> {
    const found = await this.#log.readCheckpoint();
    if (found === undefined) {
      if (starting) return { id: '0', count: 0 };
      throw new Error("the store's log lost entries and the store holds no checkpoint to resume from; restart every replica on a new --store-prefix");
    }
    const kept = JSON.parse(found.state) as KeptCheckpoint;
    resumeState(this.#ctx, kept.state);
    this.#stamp.ms = kept.stampMs;
    return { id: found.id, count: found.count };
  }
}
