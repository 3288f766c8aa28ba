/**
 * The open model (wrk2-style): requests are started at their planned times whatever the server
 * does, over a fixed set of connections. A request waits in our own queue until a connection is
 * free, so two latencies exist:
 *   corrected   = completion − intended send time (what a user arriving on schedule experiences);
 *   uncorrected = completion − the moment a connection took it (what most load tools report).
 * When the server stalls, the queue grows and the corrected figure shows it; the uncorrected one
 * hides it (coordinated omission).
 * The requests go out on keysim's own HTTP/1.1 client (http1/): ready-made request text, one write
 * per connection and turn of the event loop, answers matched in order — about the CPU per request
 * of autocannon, so the generator leaves the machine to the target (docs/benchmarks.md#load-runner).
 * A send is "late" when the generator itself enqueued it more than `lateThresholdMs` after its
 * intended time (the generator's event loop could not keep up); it is "dropped" when the queue
 * bound was reached or the run was stopped before it could be sent.
 */
import type { PlannedPhase } from '../plan/index.js';
import type { Recorder } from '../metrics/index.js';
import type { PhaseHistory } from '../history/index.js';
import { Http1Connection } from '../http1/index.js';
import type { ParsedResponse } from '../http1/index.js';
import type { Pending, PlannedRequest } from './open-model-requests.js';
import { OpenModelPhase, type PhaseExecutor, type PhaseOutcome } from './open-model-phase.js';
import { RequestText, endpointOf } from '../http1/index.js';
import { IdleCloseLearner } from '../http1/index.js';

export interface OpenModelOptions {
  url: string;
  rootKey: string;
  connections: number;
  pipelining: number;
  timeoutMs: number;
  /** Enqueued later than this after the intended time → counted late. Default 10 ms. */
  lateThresholdMs?: number;
  /** Queue bound; beyond it planned sends are dropped (and counted). Default 100 000. */
  maxQueue?: number;
  /** PEM certificates of the CA(s) to trust for an https target (--ca). */
  ca?: string | undefined;
}

export type { PhaseOutcome } from './open-model-phase.js';

/** How long requests in flight may finish after a stop. */
const STOP_GRACE_MS = 1_000;
/** The most a connection waits to be established (less when the request timeout is shorter). */
const MAX_CONNECT_TIMEOUT_MS = 10_000;

export class OpenModelExecutor implements PhaseExecutor {
  readonly #options: Required<Omit<OpenModelOptions, 'ca'>>;
  readonly #connections: Http1Connection<Pending>[];
  readonly #text: RequestText;
  #stopped = false;
  #closed = false;

  constructor(options: OpenModelOptions) {
    this.#options = { lateThresholdMs: 10, maxQueue: 100_000, ...options };
    const url = new URL(options.url);
    this.#text = new RequestText(url, options.rootKey);
    const endpoint = { ...endpointOf(url), tlsOptions: options.ca === undefined ? undefined : { ca: options.ca } };
    // What one connection learns of the server's idle close, the others use.
    const idleClose = new IdleCloseLearner();
    const handlers = {
      answered: (pending: Pending, response: ParsedResponse) => pending.run.answered(pending, response),
      failed: (pending: Pending, error: Error) => pending.run.failed(pending, error),
    };
    this.#connections = Array.from(
      { length: options.connections },
      () =>
        new Http1Connection<Pending>(
          { endpoint, timeoutMs: options.timeoutMs, connectTimeoutMs: Math.min(options.timeoutMs, MAX_CONNECT_TIMEOUT_MS), idleClose },
          handlers,
        ),
    );
  }

  /**
   * Stops starting requests (SIGINT). Requests in flight get one second to finish; then the
   * connections are destroyed, so a hung target cannot hold the stop up until the timeout.
   */
  stop(): void {
    if (this.#stopped) return;
    this.#stopped = true;
    setTimeout(() => {
      for (const connection of this.#connections) connection.destroy();
    }, STOP_GRACE_MS).unref();
  }

  get stopped(): boolean {
    return this.#stopped;
  }

  /** The connections' request text and the phase settings, for the phase (open-model-phase.ts). */
  get connections(): readonly Http1Connection<Pending>[] {
    return this.#connections;
  }

  get text(): RequestText {
    return this.#text;
  }

  get pipelining(): number {
    return this.#options.pipelining;
  }

  get lateThresholdMs(): number {
    return this.#options.lateThresholdMs;
  }

  get maxQueue(): number {
    return this.#options.maxQueue;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /**
   * Runs one phase: request i is due at `phaseStartMs + phaseOffsetMs(phase, i)` on the monotonic clock;
   * `next(random)` builds it (in order, so a seed reproduces the sequence).
   */
  runPhase(phase: PlannedPhase, phaseStartMs: number, next: () => PlannedRequest, recorder: Recorder, history?: PhaseHistory): Promise<PhaseOutcome> {
    return new OpenModelPhase(this, phase, phaseStartMs, next, recorder, history).run();
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const connection of this.#connections) connection.destroy();
  }
}
