/**
 * The open model (wrk2-style): requests are started at their planned times whatever the server
 * does, over a fixed set of connections. A request waits in our own queue until a connection is
 * free, so two latencies exist:
 *   corrected   = completion − intended send time (what a user arriving on schedule experiences);
 *   uncorrected = completion − the moment a connection took it (what most load tools report).
 * When the server stalls, the queue grows and the corrected figure shows it; the uncorrected one
 * hides it (coordinated omission).
 * A send is "late" when the generator itself enqueued it more than `lateThresholdMs` after its
 * intended time (the generator's event loop could not keep up); it is "dropped" when the queue
 * bound was reached or the run was stopped before it could be sent.
 */
import { performance } from 'node:perf_hooks';
import { Client } from 'undici';
import { type PlannedPhase, phaseOffsetMs } from './plan.js';
import type { Recorder } from './recorder.js';
import type { ServiceClockBounds } from './clock-driver.js';
import type { HistoryWriter } from './history.js';
import { SEQ_HEADER } from './history-recording.js';
import type { ApiResponse, RequestSpec } from './scenario.js';
import { classifyTransportError } from './transport-error.js';

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

interface Pending {
  intendedMs: number;
  request: PlannedRequest;
  body: string;
}

export class OpenModelExecutor {
  readonly #options: Required<OpenModelOptions>;
  readonly #clients: Client[];
  readonly #inFlight: number[];
  readonly #basePath: string;
  #stopped = false;

  constructor(options: OpenModelOptions) {
    this.#options = { lateThresholdMs: 10, maxQueue: 100_000, ...options };
    // undici's Client takes an origin; a target's base path goes in front of every request path.
    const url = new URL(options.url);
    this.#basePath = url.pathname.replace(/\/+$/, '');
    this.#clients = Array.from(
      { length: options.connections },
      () =>
        new Client(url.origin, {
          pipelining: options.pipelining,
          headersTimeout: options.timeoutMs,
          bodyTimeout: options.timeoutMs,
          connectTimeout: Math.min(options.timeoutMs, 10_000),
          keepAliveTimeout: 30_000,
        }),
    );
    this.#inFlight = this.#clients.map(() => 0);
  }

  /**
   * Stops starting requests (SIGINT). Requests in flight get one second to finish; then the
   * connections are destroyed, so a hung target cannot hold the stop up until the timeout.
   */
  stop(): void {
    if (this.#stopped) return;
    this.#stopped = true;
    setTimeout(() => {
      for (const client of this.#clients) client.destroy().catch(() => undefined);
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
    const { lateThresholdMs, maxQueue, pipelining, rootKey } = this.#options;
    const queue: Pending[] = [];
    let head = 0;
    let index = 0;
    let inFlightTotal = 0;
    const outcome: PhaseOutcome = { sent: 0, late: 0, dropped: 0 };
    const headersWithRoot = { 'content-type': 'application/json', authorization: `Bearer ${rootKey}` };
    const headersAnonymous = { 'content-type': 'application/json' };

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

      const send = (slot: number, pending: Pending) => {
        const client = this.#clients[slot] as Client;
        this.#inFlight[slot] = (this.#inFlight[slot] ?? 0) + 1;
        inFlightTotal++;
        outcome.sent++;
        const sentMs = performance.now();
        const { request } = pending;
        // Every request goes into the history, warm-up included: it spends credits all the same.
        const seq = history?.writer.begin();
        const invokeWallMs = performance.timeOrigin + sentMs;
        // Read just before the request leaves: the simulator executes it at or after this.
        const serviceInvokeMs = serviceInvokeBound(history);
        const remember = (response: { status: number; body: unknown } | 'unknown') => {
          if (history === undefined || seq === undefined) return;
          const serviceCompleteMs = serviceCompleteBound(history);
          try {
            history.writer.recordCall({
              seq,
              op: request.spec.op,
              body: request.spec.body,
              invokeMs: invokeWallMs,
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
        const headers = request.spec.auth === 'none' ? headersAnonymous : headersWithRoot;
        client
          .request({
            path: `${this.#basePath}/v2/${request.spec.op}`,
            method: 'POST',
            // The simulator journals the sequence number, so its realised order can be matched to the history.
            headers: seq === undefined ? headers : { ...headers, [SEQ_HEADER]: String(seq) },
            body: pending.body,
          })
          .then(async (res) => {
            const text = await res.body.text();
            const doneMs = performance.now();
            let body: unknown;
            try {
              body = text === '' ? undefined : JSON.parse(text);
            } catch {
              body = undefined;
            }
            remember(res.statusCode >= 500 ? 'unknown' : { status: res.statusCode, body });
            const failure = request.check?.({ status: res.statusCode, body });
            if (failure !== undefined && !phase.warmup) recorder.noteCheckFailure(`${request.label}: ${failure}`);
            recorder.record({
              operation: request.operation,
              intendedMs: pending.intendedMs,
              sentMs,
              doneMs,
              status: res.statusCode,
              transportError: undefined,
              body,
              checkFailed: failure !== undefined,
              warmup: phase.warmup,
            });
          })
          .catch((error: unknown) => {
            remember('unknown');
            recorder.record({
              operation: request.operation,
              intendedMs: pending.intendedMs,
              sentMs,
              doneMs: performance.now(),
              status: undefined,
              transportError: classifyTransportError(error),
              body: undefined,
              checkFailed: false,
              warmup: phase.warmup,
            });
          })
          .finally(() => {
            this.#inFlight[slot] = (this.#inFlight[slot] ?? 1) - 1;
            inFlightTotal--;
            dispatch();
            finishIfDone();
          });
      };

      const dispatch = () => {
        if (this.#stopped && head < queue.length) {
          outcome.dropped += queue.length - head;
          queue.length = 0;
          head = 0;
        }
        if (head >= queue.length) return;
        for (let slot = 0; slot < this.#clients.length && head < queue.length; slot++) {
          while ((this.#inFlight[slot] ?? 0) < pipelining && head < queue.length) {
            const pending = queue[head] as Pending;
            queue[head] = undefined as never;
            head++;
            send(slot, pending);
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
        if (this.#stopped) {
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
          queue.push({ intendedMs, request, body: JSON.stringify(request.spec.body) });
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
    await Promise.all(this.#clients.map((client) => client.destroy().catch(() => undefined)));
  }
}
