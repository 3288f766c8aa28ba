/**
 * One phase of the open model (open-model.ts): its queue, its one timer and its counts. Request i
 * is due at `phaseStartMs + phaseOffsetMs(phase, i)` on the monotonic clock; the timer queues the
 * requests due and hands them to connections with a free slot, an answer frees its slot and lets a
 * request already due leave at once. A phase is built once per phase: every callback handed to a
 * timer, a microtask or the answers is bound here, so the per-request path allocates no closure.
 */
import { performance } from 'node:perf_hooks';
import { type PlannedPhase, phaseOffsetMs } from '../plan/index.js';
import type { Recorder } from '../metrics/index.js';
import { type PhaseHistory, SEQ_HEADER, serviceInvokeBound } from '../history/index.js';
import type { Http1Connection } from '../http1/index.js';
import type { Pending, PhaseRun, PlannedRequest } from './open-model-requests.js';
import { phaseRun } from './open-model-answers.js';
import type { RequestText } from '../http1/index.js';

/** The longest the timer sleeps, so a stop is noticed soon even between sparse sends. */
const MAX_WAIT_MS = 50;

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

/** What a phase takes from its executor, which outlives phases. */
export interface PhaseExecutor {
  readonly connections: readonly Http1Connection<Pending>[];
  readonly text: RequestText;
  readonly pipelining: number;
  readonly lateThresholdMs: number;
  readonly maxQueue: number;
  /** Stopped (SIGINT, a target that stopped answering): no request is started any more. */
  readonly stopped: boolean;
  /** Closed: the connections are gone. */
  readonly closed: boolean;
}

export class OpenModelPhase {
  readonly #executor: PhaseExecutor;
  // The executor's settings, read once per phase (they do not change during one).
  readonly #connections: readonly Http1Connection<Pending>[];
  readonly #text: RequestText;
  readonly #pipelining: number;
  readonly #lateThresholdMs: number;
  readonly #maxQueue: number;
  readonly #phase: PlannedPhase;
  readonly #phaseStartMs: number;
  readonly #next: () => PlannedRequest;
  readonly #history: PhaseHistory | undefined;
  readonly #run: PhaseRun;
  readonly #outcome: PhaseOutcome = { sent: 0, due: 0, late: 0, dropped: 0 };
  readonly #queue: Pending[] = [];
  #head = 0;
  /** The next planned request to be queued. */
  #index = 0;
  #inFlightTotal = 0;
  /** The phase's one timer (a fired Timeout is restarted, not replaced) and its delay, ms. */
  #timer: NodeJS.Timeout | undefined;
  #timerDelay = 0;
  /** The intended time of request `#index`. */
  #nextDueMs: number;
  #finished = false;
  #admitQueued = false;
  /** Connections holding requests not yet written: each writes its own in one go (flush). */
  readonly #unwritten: Http1Connection<Pending>[] = [];
  #writeQueued = false;
  #resolve: (outcome: PhaseOutcome) => void = () => undefined;
  // Bound once per phase: what timers and microtasks call back.
  readonly #tick = () => this.#onTick();
  readonly #admitFromAnswer = () => this.#onAnswerAdmit();
  readonly #write = () => this.#writeUnwritten();

  constructor(
    executor: PhaseExecutor,
    phase: PlannedPhase,
    phaseStartMs: number,
    next: () => PlannedRequest,
    recorder: Recorder,
    history: PhaseHistory | undefined,
  ) {
    this.#executor = executor;
    this.#connections = executor.connections;
    this.#text = executor.text;
    this.#pipelining = executor.pipelining;
    this.#lateThresholdMs = executor.lateThresholdMs;
    this.#maxQueue = executor.maxQueue;
    this.#phase = phase;
    this.#phaseStartMs = phaseStartMs;
    this.#next = next;
    this.#history = history;
    this.#nextDueMs = phase.count > 0 ? phaseStartMs + phaseOffsetMs(phase, 0) : Number.POSITIVE_INFINITY;
    this.#run = phaseRun(phase, recorder, history, (freed, nowMs) => this.#ended(freed, nowMs));
  }

  /** Runs the phase to its end: every planned request sent and answered, dropped, or stopped. */
  run(): Promise<PhaseOutcome> {
    return new Promise<PhaseOutcome>((resolve) => {
      this.#resolve = resolve;
      this.#onTick();
    });
  }

  #stopTimer(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #finishIfDone(): void {
    if (this.#finished) return;
    const planDone = this.#index >= this.#phase.count || this.#executor.stopped;
    if (planDone && this.#head >= this.#queue.length && this.#inFlightTotal === 0) {
      // Stopped: the sends not yet due are dropped too, whether the stop was noticed by a tick
      // or by the last answer in flight (which may come first, before the next tick).
      this.#outcome.dropped += this.#phase.count - this.#index;
      this.#index = this.#phase.count;
      this.#finished = true;
      this.#stopTimer();
      this.#resolve(this.#outcome);
    }
  }

  /**
   * An answer or a failure: its slot is free. A request already due leaves now, on this wake,
   * instead of waiting for the timer's (docs/benchmarks.md#load-runner): when answers come
   * later than the gap between sends, sends ride on the answers' wake-ups.
   */
  #ended(freed: Http1Connection<Pending> | undefined, nowMs: number): void {
    this.#inFlightTotal--;
    if (this.#nextDueMs <= nowMs && !this.#admitQueued) {
      // After the answers read together are handled (a microtask): one admission for all of
      // them, and a request builder that throws fails the run as it does from the timer,
      // not the connection it was read on.
      this.#admitQueued = true;
      queueMicrotask(this.#admitFromAnswer);
    }
    this.#dispatch(freed, false);
    this.#finishIfDone();
  }

  #onAnswerAdmit(): void {
    this.#admitQueued = false;
    if (this.#executor.stopped || this.#executor.closed || this.#finished) return;
    this.#admitDue(performance.now());
    this.#dispatch(undefined, true);
    this.#arm(performance.now());
  }

  #send(connection: Http1Connection<Pending>, pending: Pending): void {
    this.#inFlightTotal++;
    this.#outcome.sent++;
    const sentMs = performance.now();
    const { spec } = pending.request;
    const history = this.#history;
    // Every request goes into the history, warm-up included: it spends credits all the same.
    const seq = history?.writer.begin();
    pending.sentMs = sentMs;
    pending.seq = seq;
    pending.connection = connection;
    // Read just before the request leaves: the simulator executes it at or after this.
    pending.serviceInvokeMs = serviceInvokeBound(history);
    // The simulator journals the sequence number, so its realised order can be matched to the history.
    connection.enqueue(pending, this.#text.post(spec.op, spec.auth === 'none', SEQ_HEADER, seq, JSON.stringify(spec.body)), sentMs);
  }

  #writeUnwritten(): void {
    this.#writeQueued = false;
    for (const connection of this.#unwritten) connection.flush();
    this.#unwritten.length = 0;
  }

  /** Gives a connection queued requests up to its pipelining. */
  #fill(connection: Http1Connection<Pending>): void {
    const pipelining = this.#pipelining;
    if (connection.inFlight >= pipelining) return;
    const queue = this.#queue;
    const from = this.#head;
    while (connection.inFlight < pipelining && this.#head < queue.length) {
      const pending = queue[this.#head] as Pending;
      queue[this.#head] = undefined as never;
      this.#head++;
      this.#send(connection, pending);
    }
    if (this.#head > from) this.#unwritten.push(connection);
  }

  /**
   * Hands queued requests to connections with a free slot: `freed` first (the connection an
   * answer just came on: at the ceiling it is the only one, and the others need not be looked
   * at). From the timer (`writeNow`) they are written at once; from an answer, once the
   * answers read together are all handled (a microtask), so a connection's pipelined requests
   * still leave in one write.
   */
  #dispatch(freed: Http1Connection<Pending> | undefined, writeNow: boolean): void {
    const queue = this.#queue;
    if ((this.#executor.stopped || this.#executor.closed) && this.#head < queue.length) {
      this.#outcome.dropped += queue.length - this.#head;
      queue.length = 0;
      this.#head = 0;
    }
    if (this.#head >= queue.length) return;
    if (freed !== undefined) this.#fill(freed);
    const connections = this.#connections;
    for (let slot = 0; slot < connections.length && this.#head < queue.length; slot++) this.#fill(connections[slot] as Http1Connection<Pending>);
    // Compact the consumed front of the queue now and then.
    if (this.#head > 4096 && this.#head * 2 > queue.length) {
      queue.splice(0, this.#head);
      this.#head = 0;
    }
    if (this.#unwritten.length === 0) return;
    if (writeNow) {
      this.#writeUnwritten();
    } else if (!this.#writeQueued) {
      this.#writeQueued = true;
      queueMicrotask(this.#write);
    }
  }

  /** Queues every planned request due by `nowMs` (the plan's order), counting the late and the dropped. */
  #admitDue(nowMs: number): void {
    const phase = this.#phase;
    const outcome = this.#outcome;
    const lateThresholdMs = this.#lateThresholdMs;
    const maxQueue = this.#maxQueue;
    while (this.#index < phase.count && this.#nextDueMs <= nowMs) {
      const intendedMs = this.#nextDueMs;
      this.#index++;
      outcome.due++;
      this.#nextDueMs = this.#index < phase.count ? this.#phaseStartMs + phaseOffsetMs(phase, this.#index) : Number.POSITIVE_INFINITY;
      const late = nowMs - intendedMs > lateThresholdMs;
      if (late) outcome.late++;
      if (this.#queue.length - this.#head >= maxQueue) {
        outcome.dropped++;
        continue;
      }
      const request = this.#next();
      this.#queue.push({ intendedMs, request, late, sentMs: 0, seq: undefined, serviceInvokeMs: undefined, run: this.#run, connection: undefined });
    }
  }

  /**
   * Arms the phase's one timer for the next planned send. Whole milliseconds: node:timers fires
   * on the event loop's millisecond clock, and a fractional delay above 1 ms makes it wake once
   * more inside to reach the fraction. The same delay as last time restarts the same Timeout
   * (refresh) instead of allocating one per send; at a steady rate that is every time.
   */
  #arm(nowMs: number): void {
    if (this.#index >= this.#phase.count) {
      this.#stopTimer();
      return;
    }
    const delay = Math.min(Math.max(1, Math.ceil(this.#nextDueMs - nowMs)), MAX_WAIT_MS);
    if (this.#timer !== undefined && delay === this.#timerDelay) {
      this.#timer.refresh();
      return;
    }
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timerDelay = delay;
    this.#timer = setTimeout(this.#tick, delay);
  }

  #onTick(): void {
    const now = performance.now();
    if (this.#executor.stopped || this.#executor.closed) {
      this.#stopTimer();
      this.#outcome.dropped += this.#phase.count - this.#index + (this.#queue.length - this.#head);
      this.#index = this.#phase.count;
      this.#queue.length = 0;
      this.#head = 0;
      this.#finishIfDone();
      return;
    }
    this.#admitDue(now);
    this.#dispatch(undefined, true);
    // Measured again: the sends took time, and the next instant may have come meanwhile.
    this.#arm(performance.now());
    this.#finishIfDone();
  }
}
