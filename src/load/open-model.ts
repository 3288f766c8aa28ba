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
import { performance } from 'node:perf_hooks';
import { type PlannedPhase, phaseOffsetMs } from './plan.js';
import { type Recorder, recordsBodyOf } from './recorder.js';
import type { ServiceClockBounds } from './clock-driver.js';
import type { HistoryWriter } from './history.js';
import { SEQ_HEADER } from './history-recording.js';
import type { ApiResponse, RequestSpec } from './scenario.js';
import { classifyTransportError } from './transport-error.js';
import { Http1Connection } from './http1/connection.js';
import type { ParsedResponse } from './http1/response-parser.js';
import { RequestText, endpointOf } from './http1/request-text.js';

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
}

/** What the executor needs per request: the request and how to check its answer. */
export interface PlannedRequest {
  /** The API operation (`keys.verifyKey`): figures are kept per operation. */
  operation: string;
  /** The mix entry's name, for check-failure messages. */
  label: string;
  spec: RequestSpec;
  check: ((response: ApiResponse) => string | undefined) | undefined;
}

/** Where a phase's requests are recorded, and the service clock during the phase. */
export interface PhaseHistory {
  writer: HistoryWriter;
  /** The simulator's clock while the phase runs, when it stands still; undefined otherwise. */
  serviceMs: number | undefined;
  /**
   * A phase on simulated time (clock-driver.ts): each request is bracketed by `lowerMs` read when
   * it is sent and `upperMs` read when it completes. Takes the place of `serviceMs`.
   */
  clock?: ServiceClockBounds | undefined;
}

/** The service clock's lower bound for a request sent now (read just before it leaves). */
export function serviceInvokeBound(history: PhaseHistory | undefined): number | undefined {
  return history?.clock?.lowerMs ?? history?.serviceMs;
}

/** The service clock's upper bound for a request answered (or given up) now. */
export function serviceCompleteBound(history: PhaseHistory): number | undefined {
  return history.clock?.upperMs ?? history.serviceMs;
}

export interface PhaseOutcome {
  sent: number;
  late: number;
  dropped: number;
}

/** How long requests in flight may finish after a stop. */
const STOP_GRACE_MS = 1_000;
/** The most a connection waits to be established (less when the request timeout is shorter). */
const MAX_CONNECT_TIMEOUT_MS = 10_000;

/** One planned request, from its intended time to its end. */
interface Pending {
  intendedMs: number;
  request: PlannedRequest;
  /** Set when a connection takes it (a request dropped from the queue is never serialised). */
  sentMs: number;
  seq: number | undefined;
  serviceInvokeMs: number | undefined;
  /** The phase it belongs to (the connections outlive phases). */
  run: PhaseRun;
}

/** What a running phase does with its requests' ends. */
interface PhaseRun {
  answered(pending: Pending, response: ParsedResponse): void;
  failed(pending: Pending, error: Error): void;
}

export class OpenModelExecutor {
  readonly #options: Required<OpenModelOptions>;
  readonly #connections: Http1Connection<Pending>[];
  readonly #text: RequestText;
  #stopped = false;
  #closed = false;

  constructor(options: OpenModelOptions) {
    this.#options = { lateThresholdMs: 10, maxQueue: 100_000, ...options };
    const url = new URL(options.url);
    this.#text = new RequestText(url, options.rootKey);
    const endpoint = endpointOf(url);
    const handlers = {
      answered: (pending: Pending, response: ParsedResponse) => pending.run.answered(pending, response),
      failed: (pending: Pending, error: Error) => pending.run.failed(pending, error),
    };
    this.#connections = Array.from(
      { length: options.connections },
      () => new Http1Connection<Pending>({ endpoint, timeoutMs: options.timeoutMs, connectTimeoutMs: Math.min(options.timeoutMs, MAX_CONNECT_TIMEOUT_MS) }, handlers),
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

  /**
   * Runs one phase: request i is due at `phaseStartMs + phaseOffsetMs(phase, i)` on the monotonic clock;
   * `next(random)` builds it (in order, so a seed reproduces the sequence).
   */
  runPhase(phase: PlannedPhase, phaseStartMs: number, next: () => PlannedRequest, recorder: Recorder, history?: PhaseHistory): Promise<PhaseOutcome> {
    const { lateThresholdMs, maxQueue, pipelining } = this.#options;
    const connections = this.#connections;
    const text = this.#text;
    const queue: Pending[] = [];
    let head = 0;
    let index = 0;
    let inFlightTotal = 0;
    const outcome: PhaseOutcome = { sent: 0, late: 0, dropped: 0 };

    return new Promise<PhaseOutcome>((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      let finished = false;

      const finishIfDone = () => {
        if (finished) return;
        const planDone = index >= phase.count || this.#stopped;
        if (planDone && head >= queue.length && inFlightTotal === 0) {
          // Stopped: the sends not yet due are dropped too, whether the stop was noticed by a tick
          // or by the last answer in flight (which may come first, before the next tick).
          outcome.dropped += phase.count - index;
          index = phase.count;
          finished = true;
          if (timer !== undefined) clearTimeout(timer);
          resolve(outcome);
        }
      };

      const remember = (pending: Pending, response: { status: number; body: unknown } | 'unknown') => {
        if (history === undefined || pending.seq === undefined) return;
        const serviceCompleteMs = serviceCompleteBound(history);
        const { serviceInvokeMs } = pending;
        try {
          history.writer.recordCall({
            seq: pending.seq,
            op: pending.request.spec.op,
            body: pending.request.spec.body,
            invokeMs: performance.timeOrigin + pending.sentMs,
            completeMs: performance.timeOrigin + performance.now(),
            ...(serviceInvokeMs === undefined || serviceCompleteMs === undefined ? {} : { serviceInvokeMs, serviceCompleteMs }),
            response,
          });
        } catch (error) {
          // A write error (a full disk) must not count as the request's failure: the writer keeps
          // it, and the run ends with it when the history is closed.
          if (!history.writer.failed) throw error;
        }
      };

      const ended = () => {
        inFlightTotal--;
        dispatch();
        finishIfDone();
      };

      const run: PhaseRun = {
        answered: (pending, response) => {
          const doneMs = performance.now();
          const { request } = pending;
          const status = response.status;
          // JSON is parsed only when something reads it: a check, the history or the recorder's breakdown.
          let body: unknown;
          if (response.body.length > 0 && (request.check !== undefined || history !== undefined || recordsBodyOf(request.operation))) {
            try {
              body = JSON.parse(response.body.toString('utf8'));
            } catch {
              body = undefined;
            }
          }
          try {
            remember(pending, status >= 500 ? 'unknown' : { status, body });
            const failure = request.check?.({ status, body });
            if (failure !== undefined && !phase.warmup) recorder.noteCheckFailure(`${request.label}: ${failure}`);
            recorder.record({
              operation: request.operation,
              intendedMs: pending.intendedMs,
              sentMs: pending.sentMs,
              doneMs,
              status,
              transportError: undefined,
              body,
              checkFailed: failure !== undefined,
              warmup: phase.warmup,
            });
          } finally {
            ended();
          }
        },
        failed: (pending, error) => {
          try {
            remember(pending, 'unknown');
            recorder.record({
              operation: pending.request.operation,
              intendedMs: pending.intendedMs,
              sentMs: pending.sentMs,
              doneMs: performance.now(),
              status: undefined,
              transportError: classifyTransportError(error),
              body: undefined,
              checkFailed: false,
              warmup: phase.warmup,
            });
          } finally {
            ended();
          }
        },
      };

      const send = (connection: Http1Connection<Pending>, pending: Pending) => {
        inFlightTotal++;
        outcome.sent++;
        const sentMs = performance.now();
        const { spec } = pending.request;
        // Every request goes into the history, warm-up included: it spends credits all the same.
        const seq = history?.writer.begin();
        pending.sentMs = sentMs;
        pending.seq = seq;
        // Read just before the request leaves: the simulator executes it at or after this.
        pending.serviceInvokeMs = serviceInvokeBound(history);
        // The simulator journals the sequence number, so its realised order can be matched to the history.
        connection.send(pending, text.post(spec.op, spec.auth === 'none', SEQ_HEADER, seq, JSON.stringify(spec.body)), sentMs);
      };

      const dispatch = () => {
        if ((this.#stopped || this.#closed) && head < queue.length) {
          outcome.dropped += queue.length - head;
          queue.length = 0;
          head = 0;
        }
        if (head >= queue.length) return;
        for (let slot = 0; slot < connections.length && head < queue.length; slot++) {
          const connection = connections[slot] as Http1Connection<Pending>;
          while (connection.inFlight < pipelining && head < queue.length) {
            const pending = queue[head] as Pending;
            queue[head] = undefined as never;
            head++;
            send(connection, pending);
          }
        }
        // Compact the consumed front of the queue now and then.
        if (head > 4096 && head * 2 > queue.length) {
          queue.splice(0, head);
          head = 0;
        }
      };

      const tick = () => {
        timer = undefined;
        const now = performance.now();
        if (this.#stopped || this.#closed) {
          outcome.dropped += phase.count - index + (queue.length - head);
          index = phase.count;
          queue.length = 0;
          head = 0;
          finishIfDone();
          return;
        }
        while (index < phase.count) {
          const intendedMs = phaseStartMs + phaseOffsetMs(phase, index);
          if (intendedMs > now) break;
          index++;
          if (now - intendedMs > lateThresholdMs) outcome.late++;
          if (queue.length - head >= maxQueue) {
            outcome.dropped++;
            continue;
          }
          const request = next();
          queue.push({ intendedMs, request, sentMs: 0, seq: undefined, serviceInvokeMs: undefined, run });
        }
        dispatch();
        if (index < phase.count) {
          const wait = phaseStartMs + phaseOffsetMs(phase, index) - performance.now();
          timer = setTimeout(tick, Math.max(0, Math.min(wait, 50)));
        }
        finishIfDone();
      };

      tick();
    });
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const connection of this.#connections) connection.destroy();
  }
}
