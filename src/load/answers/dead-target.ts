/**
 * Tells when a target has stopped answering, so that a run does not fire at a dead address until
 * its planned end (where refused connections, failing in a millisecond, used to look fast).
 *
 * The rule: the target has stopped when, for `windowMs`, every request that ended failed at the
 * transport level (refused, reset, timed out) or got a gateway's error — a 502, 503 or 504 that is
 * not the service's answer (service-answer.ts: a proxy whose service behind is down answers, but
 * only that) — counted from the first failure after the last answer, so that a quiet spell between
 * phases (a scenario's set-up step) is no evidence. It is judged at each completion: a target that
 * hangs is judged `windowMs` after its first request timed out. A single other answer proves the
 * target alive and starts over: any answer of the service (even its own 500 or 503, in its
 * envelope), and a page that is not the service's but no gateway's error (a proxy's 200 or 429
 * page: an error of unknown effect, but something answered).
 */
import { TRANSPORT_ERROR_KINDS, type TransportErrorKind } from '../../report/model.js';
import { GATEWAY_STATUSES, isGatewayStatus } from './service-answer.js';

/** Why a run ended early, for the summary, the report and exit code 96. */
export interface TargetStoppedVerdict {
  /** Monotonic ms of the judgement. */
  atMs: number;
  /** The last answer (or the start of the watch), monotonic ms. */
  lastAnswerMs: number;
  /** The first transport failure after it, monotonic ms. */
  firstFailureMs: number;
  windowMs: number;
  /** Transport failures since the last answer, by kind. */
  failures: Record<TransportErrorKind, number>;
  /** Gateway errors since the last answer, by status ("502", "503", "504"). */
  gateway: Record<string, number>;
}

export class DeadTargetWatch {
  readonly windowMs: number;
  readonly #onStopped: (verdict: TargetStoppedVerdict) => void;
  #lastAnswerMs: number;
  #firstFailureMs: number | undefined;
  /** The last completion of any kind (monotonic ms): what a later request's send is compared with. */
  #lastCompletionMs: number;
  #failures: Record<TransportErrorKind, number> = { timeout: 0, reset: 0, refused: 0, other: 0 };
  #gateway: Record<string, number> = {};
  #verdict: TargetStoppedVerdict | undefined;

  /** `startMs`: when the watch begins (monotonic ms), standing in for a first answer. */
  constructor(windowMs: number, startMs: number, onStopped: (verdict: TargetStoppedVerdict) => void) {
    if (!(Number.isFinite(windowMs) && windowMs > 0)) throw new RangeError(`The dead-target window must be a positive number of ms, got ${windowMs}.`);
    this.windowMs = windowMs;
    this.#lastAnswerMs = startMs;
    this.#lastCompletionMs = startMs;
    this.#onStopped = onStopped;
  }

  /** The verdict, once the target has been judged stopped. */
  get verdict(): TargetStoppedVerdict | undefined {
    return this.#verdict;
  }

  /**
   * A request completed at `atMs` (monotonic): the service answered it with `status` (no
   * `failure`), or it failed with `failure` — with `status` when something that is not the service
   * answered it (the recorder's `answeredStatus`: a page that is not the service's answer). Such a
   * page with a gateway's status (502, 503, 504) counts as a failure; any other answer proves the
   * target alive. `sentMs`, when the request was sent, tells a quiet spell before it apart from
   * failures that covered the time.
   */
  observe(atMs: number, failure: TransportErrorKind | undefined, status?: number, sentMs?: number): void {
    if (this.#verdict !== undefined) return;
    const quietBefore = sentMs !== undefined && sentMs - this.#lastCompletionMs > this.windowMs / 2;
    if (atMs > this.#lastCompletionMs) this.#lastCompletionMs = atMs;
    const gateway = failure !== undefined && status !== undefined && isGatewayStatus(status);
    if (!gateway && (status !== undefined || failure === undefined)) {
      if (atMs > this.#lastAnswerMs) this.#lastAnswerMs = atMs;
      this.#restartStreak();
      return;
    }
    if (quietBefore) this.#restartStreak();
    if (gateway) this.#gateway[String(status)] = (this.#gateway[String(status)] ?? 0) + 1;
    else if (failure !== undefined) this.#failures[failure]++;
    this.#firstFailureMs ??= atMs;
    if (atMs - this.#firstFailureMs >= this.windowMs) {
      this.#verdict = {
        atMs,
        lastAnswerMs: this.#lastAnswerMs,
        firstFailureMs: this.#firstFailureMs,
        windowMs: this.windowMs,
        failures: { ...this.#failures },
        gateway: { ...this.#gateway },
      };
      this.#onStopped(this.#verdict);
    }
  }

  #restartStreak(): void {
    this.#firstFailureMs = undefined;
    this.#failures = { timeout: 0, reset: 0, refused: 0, other: 0 };
    this.#gateway = {};
  }
}

/** "502 Bad Gateway", or "40 × 502 Bad Gateway, 2 × 504 Gateway Timeout" with `counts`. */
function gatewayText(gateway: Record<string, number>, counts: boolean): string {
  return Object.keys(gateway)
    .sort()
    .map((status) => `${counts ? `${gateway[status]} × ` : ''}${status} ${GATEWAY_STATUSES.get(Number(status)) ?? ''}`.trimEnd())
    .join(counts ? ', ' : ' and ');
}

/** The verdict in words: what failed, for how long, and when the run ended. */
export function describeTargetStopped(verdict: TargetStoppedVerdict, runStartMs: number, plannedMs: number): string {
  const failures = TRANSPORT_ERROR_KINDS.filter((k) => verdict.failures[k] > 0)
    .map((k) => `${verdict.failures[k]} ${k}`)
    .join(', ');
  const gateway = verdict.gateway ?? {};
  const silentS = ((verdict.atMs - verdict.lastAnswerMs) / 1000).toFixed(1);
  const failingS = ((verdict.atMs - verdict.firstFailureMs) / 1000).toFixed(1);
  const endedS = ((verdict.atMs - runStartMs) / 1000).toFixed(1);
  const ended = `the run ended early at ${endedS} s of ${(plannedMs / 1000).toFixed(1)} s planned`;
  if (failures === '' && Object.keys(gateway).length > 0) {
    return (
      `The target answered only ${gatewayText(gateway, false)} for ${failingS} s (--dead-after ${verdict.windowMs / 1000} s): the service behind the gateway looks down; ` +
      `${ended}. Check that the service behind the proxy is up (or pass --dead-after off to fire until the end).`
    );
  }
  const what =
    Object.keys(gateway).length === 0
      ? `failed at the transport level (${failures})`
      : `failed at the transport level or got a gateway error (${failures}, ${gatewayText(gateway, true)})`;
  return (
    `The target stopped answering: no request got an answer for ${silentS} s, and for ${failingS} s (--dead-after ${verdict.windowMs / 1000} s) every request that ended ${what}; ` +
    `${ended}. Check that the service is up (or pass --dead-after off to fire until the end).`
  );
}
