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
import { type PlannedPhase, phaseOffsetMs } from '../plan/index.js';
import type { Recorder } from '../metrics/index.js';
import { type PhaseHistory, SEQ_HEADER, serviceInvokeBound } from '../history/index.js';
import { Http1Connection } from '../http1/index.js';
import type { ParsedResponse } from '../http1/index.js';
import type { Pending, PlannedRequest } from './open-model-requests.js';
import { phaseRun } from './open-model-answers.js';
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

export interface PhaseOutcome {
  sent: number;
  /**
   * Planned sends whose intended time came while the phase ran (sent, or dropped at the queue
   * bound or by a stop after they were due): the late share's denominator. A stopped phase's sends
   * not yet due were never the generator's to be late on.
   */
  due: number;
  late: number;
  dropped: number;
}

/** The longest the timer sleeps, so a stop is noticed soon even between sparse sends. */
const MAX_WAIT_MS = 50;
/** How long requests in flight may finish after a stop. */
const STOP_GRACE_MS = 1_000;
/** The most a connection waits to be established (less when the request timeout is shorter). */
const MAX_CONNECT_TIMEOUT_MS = 10_000;

export class OpenModelExecutor {
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
    const outcome: PhaseOutcome = { sent: 0, due: 0, late: 0, dropped: 0 };

    return new Promise<PhaseOutcome>((resolve) => {
      /** The phase's one timer (a fired Timeout is restarted, not replaced) and its delay, ms. */
      let timer: NodeJS.Timeout | undefined;
      let timerDelay = 0;
      /** The intended time of request `index`, the next to be queued. */
      let nextDueMs = phase.count > 0 ? phaseStartMs + phaseOffsetMs(phase, 0) : Number.POSITIVE_INFINITY;
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
          timer = undefined;
          resolve(outcome);
        }
      };

      /**
       * An answer or a failure: its slot is free. A request already due leaves now, on this wake,
       * instead of waiting for the timer's (docs/benchmarks.md#load-runner): when answers come
       * later than the gap between sends, sends ride on the answers' wake-ups.
       */
      const ended = (freed: Http1Connection<Pending> | undefined, nowMs: number) => {
        inFlightTotal--;
        if (nextDueMs <= nowMs && !admitQueued) {
          // After the answers read together are handled (a microtask): one admission for all of
          // them, and a request builder that throws fails the run as it does from the timer,
          // not the connection it was read on.
          admitQueued = true;
          queueMicrotask(admitFromAnswer);
        }
        dispatch(freed, false);
        finishIfDone();
      };

      let admitQueued = false;
      const admitFromAnswer = () => {
        admitQueued = false;
        if (this.#stopped || this.#closed || finished) return;
        admitDue(performance.now());
        dispatch(undefined, true);
        arm(performance.now());
      };

      const run = phaseRun(phase, recorder, history, ended);

      const send = (connection: Http1Connection<Pending>, pending: Pending) => {
        inFlightTotal++;
        outcome.sent++;
        const sentMs = performance.now();
        const { spec } = pending.request;
        // Every request goes into the history, warm-up included: it spends credits all the same.
        const seq = history?.writer.begin();
        pending.sentMs = sentMs;
        pending.seq = seq;
        pending.connection = connection;
        // Read just before the request leaves: the simulator executes it at or after this.
        pending.serviceInvokeMs = serviceInvokeBound(history);
        // The simulator journals the sequence number, so its realised order can be matched to the history.
        connection.enqueue(pending, text.post(spec.op, spec.auth === 'none', SEQ_HEADER, seq, JSON.stringify(spec.body)), sentMs);
      };

      /** Connections holding requests not yet written: each writes its own in one go (flush). */
      const unwritten: Http1Connection<Pending>[] = [];
      let writeQueued = false;
      const write = () => {
        writeQueued = false;
        for (const connection of unwritten) connection.flush();
        unwritten.length = 0;
      };

      /** Gives a connection queued requests up to its pipelining. */
      const fill = (connection: Http1Connection<Pending>) => {
        if (connection.inFlight >= pipelining) return;
        const from = head;
        while (connection.inFlight < pipelining && head < queue.length) {
          const pending = queue[head] as Pending;
          queue[head] = undefined as never;
          head++;
          send(connection, pending);
        }
        if (head > from) unwritten.push(connection);
      };

      /**
       * Hands queued requests to connections with a free slot: `freed` first (the connection an
       * answer just came on: at the ceiling it is the only one, and the others need not be looked
       * at). From the timer (`writeNow`) they are written at once; from an answer, once the
       * answers read together are all handled (a microtask), so a connection's pipelined requests
       * still leave in one write.
       */
      const dispatch = (freed: Http1Connection<Pending> | undefined, writeNow: boolean) => {
        if ((this.#stopped || this.#closed) && head < queue.length) {
          outcome.dropped += queue.length - head;
          queue.length = 0;
          head = 0;
        }
        if (head >= queue.length) return;
        if (freed !== undefined) fill(freed);
        for (let slot = 0; slot < connections.length && head < queue.length; slot++) fill(connections[slot] as Http1Connection<Pending>);
        // Compact the consumed front of the queue now and then.
        if (head > 4096 && head * 2 > queue.length) {
          queue.splice(0, head);
          head = 0;
        }
        if (unwritten.length === 0) return;
        if (writeNow) {
          write();
        } else if (!writeQueued) {
          writeQueued = true;
          queueMicrotask(write);
        }
      };

      /** Queues every planned request due by `nowMs` (the plan's order), counting the late and the dropped. */
      const admitDue = (nowMs: number) => {
        while (index < phase.count && nextDueMs <= nowMs) {
          const intendedMs = nextDueMs;
          index++;
          outcome.due++;
          nextDueMs = index < phase.count ? phaseStartMs + phaseOffsetMs(phase, index) : Number.POSITIVE_INFINITY;
          const late = nowMs - intendedMs > lateThresholdMs;
          if (late) outcome.late++;
          if (queue.length - head >= maxQueue) {
            outcome.dropped++;
            continue;
          }
          const request = next();
          queue.push({ intendedMs, request, late, sentMs: 0, seq: undefined, serviceInvokeMs: undefined, run, connection: undefined });
        }
      };

      /**
       * Arms the phase's one timer for the next planned send. Whole milliseconds: node:timers fires
       * on the event loop's millisecond clock, and a fractional delay above 1 ms makes it wake once
       * more inside to reach the fraction. The same delay as last time restarts the same Timeout
       * (refresh) instead of allocating one per send; at a steady rate that is every time.
       */
      const arm = (nowMs: number) => {
        if (index >= phase.count) {
          if (timer !== undefined) clearTimeout(timer);
          timer = undefined;
          return;
        }
        const delay = Math.min(Math.max(1, Math.ceil(nextDueMs - nowMs)), MAX_WAIT_MS);
        if (timer !== undefined && delay === timerDelay) {
          timer.refresh();
          return;
        }
        if (timer !== undefined) clearTimeout(timer);
        timerDelay = delay;
        timer = setTimeout(tick, delay);
      };

      const tick = () => {
        const now = performance.now();
        if (this.#stopped || this.#closed) {
          if (timer !== undefined) clearTimeout(timer);
          timer = undefined;
          outcome.dropped += phase.count - index + (queue.length - head);
          index = phase.count;
          queue.length = 0;
          head = 0;
          finishIfDone();
          return;
        }
        admitDue(now);
        dispatch(undefined, true);
        // Measured again: the sends took time, and the next instant may have come meanwhile.
        arm(performance.now());
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
