/**
 * Records calls into a run's history: the fixture and check calls a scenario makes through
 * ServiceApi (they set the credit budgets the checkers follow), with the service clock read
 * around each call where the target is the simulator; and the load requests of both executors
 * (open and closed model), each recorded once when it ends (`recordLoadCall`).
 */
import { performance } from 'node:perf_hooks';
import type { ServiceClockBounds } from '../time/index.js';
import type { HistoryWriter } from './history.js';
import type { ApiResponse, Operation, RequestSpec, ServiceApi } from '../scenario/index.js';
import { type HttpJsonClient, serviceApiFrom } from '../target/index.js';
import { answerEffectUnknown } from '../answers/index.js';

/**
 * What the history records of an answer: the answer, or 'unknown' when its effect is unknown — a
 * 5xx, or an answer that is not the service's (a gateway's 502/504 page, a body cut short:
 * unknown-outcome.ts). A 200 whose body cannot be read must not count as a known refusal.
 */
export function recordedOutcome(response: { status: number; body: unknown } | 'unknown'): { status: number; body: unknown } | 'unknown' {
  return response === 'unknown' || answerEffectUnknown(response) ? 'unknown' : response;
}

/** Wall time as Unix ms from the monotonic clock (what the history's invoke/complete times are). */
export function wallNowMs(): number {
  return performance.timeOrigin + performance.now();
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

/** What an executor kept of a load request when it sent it (both executors' in-flight records fit). */
export interface SentLoadCall {
  /** From the writer's `begin()` at send time; undefined when the phase has no history. */
  seq: number | undefined;
  request: { spec: RequestSpec };
  /** When it left, ms on the monotonic clock. */
  sentMs: number;
  /** serviceInvokeBound() read just before it left. */
  serviceInvokeMs: number | undefined;
}

/**
 * Records a load request that ended now: answered (`response`) or given up ('unknown': a timeout,
 * a lost connection, a 5xx, an answer that cannot be trusted). Nothing without a history.
 */
export function recordLoadCall(
  history: PhaseHistory | undefined,
  sent: SentLoadCall,
  response: { status: number; body: unknown } | 'unknown',
  region?: string,
): void {
  if (history === undefined || sent.seq === undefined) return;
  const { serviceInvokeMs } = sent;
  try {
    history.writer.recordCall({
      seq: sent.seq,
      op: sent.request.spec.op,
      body: sent.request.spec.body,
      invokeMs: performance.timeOrigin + sent.sentMs,
      completeMs: wallNowMs(),
      // Both bounds or neither: a phase with a service clock has both (clock-driver.ts).
      ...(serviceInvokeMs === undefined ? {} : { serviceInvokeMs, serviceCompleteMs: serviceCompleteBound(history) ?? serviceInvokeMs }),
      response: recordedOutcome(response),
      ...(region === undefined ? {} : { region }),
    });
  } catch (error) {
    // A write error (a full disk) must not count as the request's failure: the writer keeps it,
    // and the run ends with it when the history is closed.
    if (!history.writer.failed) throw error;
  }
}

/** The header that carries a request's history sequence number (the simulator journals it for the oracle). */
export const SEQ_HEADER = 'x-keysim-seq';

/**
 * A ServiceApi that records every call. `serviceNow` (simulator only) brackets each call with the
 * service clock, read before it is sent and after it is answered.
 */
export function recordingServiceApi(client: HttpJsonClient, history: HistoryWriter, serviceNow?: () => Promise<number>): ServiceApi {
  const call = async (op: Operation, body: unknown, options?: { auth?: 'root' | 'none'; headers?: Record<string, string> }): Promise<ApiResponse> => {
    const seq = history.begin();
    const serviceInvokeMs = serviceNow === undefined ? undefined : await serviceNow();
    const invokeMs = wallNowMs();
    let response: ApiResponse | 'unknown' = 'unknown';
    try {
      // The scenario's own headers (e.g. X-Keysim-Region) go out as without a history; the seq last.
      response = await client.post(`/v2/${op}`, body, options?.auth ?? 'root', { ...options?.headers, [SEQ_HEADER]: String(seq) });
      return response;
    } finally {
      const completeMs = wallNowMs();
      const serviceCompleteMs = serviceNow === undefined ? undefined : await serviceNow();
      history.recordCall({
        seq,
        op,
        body,
        invokeMs,
        completeMs,
        ...(serviceInvokeMs === undefined ? {} : { serviceInvokeMs }),
        ...(serviceCompleteMs === undefined ? {} : { serviceCompleteMs }),
        response: recordedOutcome(response),
        ...(response !== 'unknown' && response.region !== undefined ? { region: response.region } : {}),
      });
    }
  };
  return serviceApiFrom(call);
}
