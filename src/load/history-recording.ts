/**
 * Records calls into a run's history: the fixture and check calls a scenario makes through
 * ServiceApi (they set the credit budgets the checkers follow), with the service clock read
 * around each call where the target is the simulator. The load requests are recorded by the
 * open-model executor itself.
 */
import { performance } from 'node:perf_hooks';
import type { HistoryWriter } from './history.js';
import type { ApiResponse, Operation, ServiceApi } from './scenario.js';
import { type HttpJsonClient, serviceApiFrom } from './service-api.js';

/** Wall time as Unix ms from the monotonic clock (what the history's invoke/complete times are). */
export function wallNowMs(): number {
  return performance.timeOrigin + performance.now();
}

/** The header that carries a request's history sequence number (the simulator journals it for the oracle). */
export const SEQ_HEADER = 'x-keysim-seq';

/**
 * A ServiceApi that records every call. `serviceNow` (simulator only) brackets each call with the
 * service clock, read before it is sent and after it is answered.
 */
export function recordingServiceApi(client: HttpJsonClient, history: HistoryWriter, serviceNow?: () => Promise<number>): ServiceApi {
  const call = async (op: Operation, body: unknown, options?: { auth?: 'root' | 'none' }): Promise<ApiResponse> => {
    const seq = history.begin();
    const serviceInvokeMs = serviceNow === undefined ? undefined : await serviceNow();
    const invokeMs = wallNowMs();
    let response: ApiResponse | 'unknown' = 'unknown';
    try {
      response = await client.post(`/v2/${op}`, body, options?.auth ?? 'root', { [SEQ_HEADER]: String(seq) });
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
        response,
      });
    }
  };
  return serviceApiFrom(call);
}
