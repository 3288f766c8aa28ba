/**
 * Accumulates the outcome of every request into flat-memory figures: per operation, three HDR
 * histograms (corrected: from the intended send time; uncorrected: from the actual send; on time:
 * the corrected latency of the sends the generator started on time), HTTP
 * statuses, verification codes, rate-limit allow/deny, transport errors, requests cut off at the
 * end of a closed-model phase (counted apart: no answer, no latency, not an error); and a per-second
 * timeline, overall and per operation, whose percentiles and encoded histograms are computed when a
 * second is closed, so memory does not grow with the number of requests (the report grows by a
 * few hundred bytes per operation and second).
 *
 * Latency figures count answered requests only (any HTTP status): a refused connection fails in a
 * millisecond, and counting it made a dead target look fast. Transport errors are counted apart,
 * by kind.
 */
import { type OperationStats, TRANSPORT_ERROR_KINDS, type TimelinePoint, type TransportErrorKind } from '../../report/model.js';
import { RuleTally } from '../rules/index.js';
import { type Histogram, encodeHistogram, mergeHistograms, newHistogram, percentilesMs, recordMs } from '../../report/histogram.js';

export interface Sample {
  operation: string;
  /** Intended send, actual send and completion, ms on the run's monotonic clock. */
  intendedMs: number;
  sentMs: number;
  doneMs: number;
  /** HTTP status, or undefined after a transport error. */
  status: number | undefined;
  transportError: TransportErrorKind | undefined;
  /** Parsed JSON body of the answer (undefined if none). */
  body: unknown;
  checkFailed: boolean;
  /** Warm-up requests are sent but not counted. */
  warmup: boolean;
  /**
   * The generator started it late (more than the late threshold after its intended time): not in
   * the on-time latency. Absent: on time (the closed model has no schedule to be late on).
   */
  late?: boolean;
  /**
   * The status of an answer that was not the service's (a proxy's or firewall's page): counted as
   * an error of unknown effect, yet it shows that something answered (the dead-target watch).
   */
  answeredStatus?: number;
}

interface OperationAccumulator {
  corrected: Histogram;
  uncorrected: Histogram;
  /** Corrected latency of the sends started on time: the evidence that outlasts a generator's lag. */
  onTime: Histogram;
  statuses: Map<number, number>;
  codes: Map<string, number>;
  allowed: number;
  denied: number;
  transportErrors: Record<TransportErrorKind, number>;
  cutOff: number;
  checkFailures: number;
  requests: number;
}

interface SecondAccumulator {
  requests: number;
  errors: number;
  latency: Histogram;
  /** The same second per operation. */
  operations: Map<string, { requests: number; errors: number; latency: Histogram }>;
}

function newAccumulator(): OperationAccumulator {
  return {
    corrected: newHistogram(),
    uncorrected: newHistogram(),
    onTime: newHistogram(),
    statuses: new Map(),
    codes: new Map(),
    allowed: 0,
    denied: 0,
    transportErrors: { timeout: 0, reset: 0, refused: 0, other: 0 },
    cutOff: 0,
    checkFailures: 0,
    requests: 0,
  };
}

function increment<K>(map: Map<K, number>, key: K): void {
  map.set(key, (map.get(key) ?? 0) + 1);
}

/** The operations whose answers the report breaks down by outcome (the only bodies record() reads). */
const OUTCOME_OPERATIONS: ReadonlySet<string> = new Set(['keys.verifyKey', 'ratelimit.limit', 'ratelimit.multiLimit']);

/** Whether record() reads the body of this operation's answers (else the caller need not parse it). */
export function recordsBodyOf(operation: string): boolean {
  return OUTCOME_OPERATIONS.has(operation);
}

/** The outcome fields of an answer that the report breaks down (keep OUTCOME_OPERATIONS in step). */
function outcomeOf(operation: string, body: unknown): { code?: string; allowed?: boolean } {
  if (typeof body !== 'object' || body === null) return {};
  const data = (body as { data?: unknown }).data;
  if (typeof data !== 'object' || data === null) return {};
  const d = data as Record<string, unknown>;
  if (operation === 'keys.verifyKey' && typeof d.code === 'string') return { code: d.code };
  if (operation === 'ratelimit.limit' && typeof d.success === 'boolean') return { allowed: d.success };
  if (operation === 'ratelimit.multiLimit' && typeof d.passed === 'boolean') return { allowed: d.passed };
  return {};
}

export class Recorder {
  /** What the per-response checks judged per service rule (rules.ts), for the report's rule coverage. */
  readonly rules = new RuleTally();
  readonly #operations = new Map<string, OperationAccumulator>();
  readonly #seconds = new Map<number, SecondAccumulator>();
  /**
   * Histograms of closed seconds, emptied for the next ones: a histogram is some 94 KB of counts,
   * and zeroing one costs less than allocating a new one every second (docs/benchmarks.md#load-runner).
   */
  readonly #spare: Histogram[] = [];
  readonly #timeline: TimelinePoint[] = [];
  /** Monotonic ms at which the measured part began: second 0 of the timeline. */
  #measuredFromMs = 0;
  #frozen = false;
  #errors = 0;
  #requests = 0;
  #checkFailures = 0;
  #notJudged = 0;
  #unanswered = 0;
  #cutOff = 0;
  /** The first few failed checks, for the report's notes. */
  readonly checkFailureExamples: string[] = [];
  /**
   * Told of every completion, warm-up included, until frozen (the dead-target watch): when it
   * completed (monotonic ms) and, for a failure, its kind, else its status.
   */
  onCompletion: ((doneMs: number, transportError: TransportErrorKind | undefined, status: number | undefined, sentMs: number) => void) | undefined;
  /**
   * Told of every measured completion (warm-up excluded) until frozen, as it is counted: its
   * corrected latency in ms when answered (undefined after a transport error) and whether it is an
   * error. The live metrics endpoint listens here.
   */
  onMeasured: ((operation: string, latencyMs: number | undefined, isError: boolean) => void) | undefined;

  /** Second 0 of the timeline (the start of the first measured phase). */
  startMeasuring(ms: number): void {
    this.#measuredFromMs = ms;
  }

  /** Ignores everything recorded from now on (after a stop, answers cut short are not figures). */
  freeze(): void {
    this.#frozen = true;
  }

  get requests(): number {
    return this.#requests;
  }

  get errors(): number {
    return this.#errors;
  }

  get checkFailures(): number {
    return this.#checkFailures;
  }

  /** Measured requests that got no answer (a transport error): whether they passed their check is unknown. */
  get unanswered(): number {
    return this.#unanswered;
  }

  /** Requests cut off at the end of a measured closed-model phase. */
  get cutOff(): number {
    return this.#cutOff;
  }

  /** Answers whose check was not asked because the answer was not the service's (run-phases.ts). */
  get notJudged(): number {
    return this.#notJudged;
  }

  noteNotJudged(): void {
    if (!this.#frozen) this.#notJudged++;
  }

  noteCheckFailure(message: string): void {
    if (this.checkFailureExamples.length < 10) this.checkFailureExamples.push(message);
  }

  /**
   * A request sent whose answer was abandoned when its closed-model phase ended: the service may
   * have executed it. Not a completed request (no latency, not in the timeline) and not an error.
   */
  recordCutOff(operation: string, warmup: boolean): void {
    if (warmup || this.#frozen) return;
    this.#accumulator(operation).cutOff++;
    this.#cutOff++;
  }

  #accumulator(operation: string): OperationAccumulator {
    let acc = this.#operations.get(operation);
    if (acc === undefined) {
      acc = newAccumulator();
      this.#operations.set(operation, acc);
    }
    return acc;
  }

  record(sample: Sample): void {
    if (this.#frozen) return;
    this.onCompletion?.(sample.doneMs, sample.transportError, sample.status ?? sample.answeredStatus, sample.sentMs);
    if (sample.warmup) return;
    const acc = this.#accumulator(sample.operation);
    acc.requests++;
    this.#requests++;
    const correctedMs = sample.doneMs - sample.intendedMs;
    const answered = sample.transportError === undefined;
    if (answered) {
      recordMs(acc.corrected, correctedMs);
      recordMs(acc.uncorrected, sample.doneMs - sample.sentMs);
      if (sample.late !== true) recordMs(acc.onTime, correctedMs);
    }
    const isError = sample.transportError !== undefined || (sample.status !== undefined && sample.status >= 500);
    if (sample.transportError !== undefined) {
      acc.transportErrors[sample.transportError]++;
      this.#unanswered++;
    }
    if (sample.status !== undefined) {
      increment(acc.statuses, sample.status);
      const outcome = outcomeOf(sample.operation, sample.body);
      if (outcome.code !== undefined) increment(acc.codes, outcome.code);
      if (outcome.allowed === true) acc.allowed++;
      if (outcome.allowed === false) acc.denied++;
    }
    if (sample.checkFailed) {
      acc.checkFailures++;
      this.#checkFailures++;
    }
    if (isError) this.#errors++;
    this.onMeasured?.(sample.operation, answered ? correctedMs : undefined, isError);

    const second = Math.max(0, Math.floor((sample.doneMs - this.#measuredFromMs) / 1000));
    let bucket = this.#seconds.get(second);
    if (bucket === undefined) {
      bucket = { requests: 0, errors: 0, latency: this.#histogram(), operations: new Map() };
      this.#seconds.set(second, bucket);
      // Seconds two behind the newest can no longer change much: close them to keep memory flat.
      for (const [s] of this.#seconds) if (s < second - 2) this.#closeSecond(s);
    }
    let opBucket = bucket.operations.get(sample.operation);
    if (opBucket === undefined) {
      opBucket = { requests: 0, errors: 0, latency: this.#histogram() };
      bucket.operations.set(sample.operation, opBucket);
    }
    bucket.requests++;
    opBucket.requests++;
    if (isError) {
      bucket.errors++;
      opBucket.errors++;
    }
    if (answered) {
      recordMs(bucket.latency, correctedMs);
      recordMs(opBucket.latency, correctedMs);
    }
  }

  #closeSecond(second: number): void {
    const bucket = this.#seconds.get(second);
    if (bucket === undefined) return;
    const operations = [...bucket.operations]
      .sort((a, b) => a[0].localeCompare(b[0]))
      .map(([operation, o]) => ({
        operation,
        requests: o.requests,
        errors: o.errors,
        latency: percentilesMs(o.latency),
        histogram: encodeHistogram(o.latency),
      }));
    // One operation in the second: its histogram holds the same samples as the second's, so the
    // percentiles (a walk over the counts) need not be read twice.
    const only = operations.length === 1 ? operations[0] : undefined;
    const p = only !== undefined ? only.latency : percentilesMs(bucket.latency);
    this.#timeline.push({ second, requests: bucket.requests, errors: bucket.errors, p50Ms: p.p50, p99Ms: p.p99, operations });
    this.#seconds.delete(second);
    // Nothing refers to the second's histograms any more: what the timeline keeps was computed from them.
    for (const histogram of [bucket.latency, ...[...bucket.operations.values()].map((o) => o.latency)]) {
      histogram.reset();
      this.#spare.push(histogram);
    }
  }

  /** An empty histogram for a new second, reused from a closed one when there is one. */
  #histogram(): Histogram {
    return this.#spare.pop() ?? newHistogram();
  }

  /** The latency so far over all operations (for progress lines). */
  p99SoFarMs(): number {
    // Read once a second by the progress line: one operation's histogram is read as it is, not
    // copied into a merged one first (some 94 KB of counts and a walk over them each time).
    const only = this.#operations.size === 1 ? this.#operations.values().next().value : undefined;
    const histogram = only !== undefined ? only.corrected : mergeHistograms([...this.#operations.values()].map((a) => a.corrected));
    return percentilesMs(histogram).p99;
  }

  /** The figures of the measured part; `measuredMs` is its wall duration. */
  finish(measuredMs: number): { operations: OperationStats[]; overall: OperationStats; timeline: TimelinePoint[] } {
    for (const second of [...this.#seconds.keys()]) this.#closeSecond(second);
    this.#timeline.sort((a, b) => a.second - b.second);
    const seconds = Math.max(measuredMs / 1000, 1e-9);
    const stats = (operation: string, acc: OperationAccumulator): OperationStats => ({
      operation,
      requests: acc.requests,
      ratePerSec: Math.round((acc.requests / seconds) * 100) / 100,
      latency: { corrected: percentilesMs(acc.corrected), uncorrected: percentilesMs(acc.uncorrected) },
      histograms: { corrected: encodeHistogram(acc.corrected), uncorrected: encodeHistogram(acc.uncorrected) },
      onTime: { latency: percentilesMs(acc.onTime), histogram: encodeHistogram(acc.onTime) },
      statuses: Object.fromEntries([...acc.statuses].sort((a, b) => a[0] - b[0]).map(([k, v]) => [String(k), v])),
      codes: Object.fromEntries([...acc.codes].sort((a, b) => b[1] - a[1])),
      ratelimit: { allowed: acc.allowed, denied: acc.denied },
      transportErrors: { ...acc.transportErrors },
      cutOff: acc.cutOff,
      checkFailures: acc.checkFailures,
    });
    const operations = [...this.#operations].sort((a, b) => a[0].localeCompare(b[0])).map(([op, acc]) => stats(op, acc));
    const all = [...this.#operations.values()];
    const merged = newAccumulator();
    merged.corrected = mergeHistograms(all.map((a) => a.corrected));
    merged.uncorrected = mergeHistograms(all.map((a) => a.uncorrected));
    merged.onTime = mergeHistograms(all.map((a) => a.onTime));
    for (const acc of all) {
      for (const [k, v] of acc.statuses) merged.statuses.set(k, (merged.statuses.get(k) ?? 0) + v);
      for (const [k, v] of acc.codes) merged.codes.set(k, (merged.codes.get(k) ?? 0) + v);
      merged.allowed += acc.allowed;
      merged.denied += acc.denied;
      for (const kind of TRANSPORT_ERROR_KINDS) merged.transportErrors[kind] += acc.transportErrors[kind];
      merged.cutOff += acc.cutOff;
      merged.checkFailures += acc.checkFailures;
      merged.requests += acc.requests;
    }
    return { operations, overall: stats('all', merged), timeline: [...this.#timeline] };
  }
}
