/**
 * What a phase of either load model (open-model.ts, closed-model.ts) does with each request's
 * end: the answer is judged by the one rule of what the service's answer is (service-answer.ts),
 * checked, recorded and written to the history; a failure — and an answer that is not the
 * service's (a gateway's 502 page, a proxy's HTML 200) — is recorded as an error of unknown
 * effect, never a pass and never a violation; a 404 or 405 that is not the service's (a bare
 * "404 page not found") is a failed "no such route" check (route-miss.ts). Either way its slot
 * is freed. Both models record through here, so they agree on every kind of answer.
 */
import { noSuchRoute } from '../target/index.js';
import { performance } from 'node:perf_hooks';
import type { PlannedPhase } from '../plan/index.js';
import type { Recorder } from '../metrics/index.js';
import { type PhaseHistory, recordLoadCall } from '../history/index.js';
import { classifyTransportError } from '../answers/index.js';
import type { Http1Connection } from '../http1/index.js';
import type { ParsedResponse } from '../http1/index.js';
import { NotServiceAnswerError, decodeBody } from '../http1/index.js';
import { readServiceAnswer } from '../answers/index.js';
import type { Pending, PhaseRun } from './open-model-requests.js';

/** The answer's body if it is the service's; a route miss; or the error that makes it "never came". */
type Judged = { service: true; body: unknown } | { service: false; routeMiss: string } | { service: false; error: Error };

function judge(response: ParsedResponse): Judged {
  const { status, contentType } = response;
  let bytes: Buffer;
  try {
    bytes = response.contentEncoding === undefined ? response.body : decodeBody(status, contentType, response.contentEncoding, response.body);
  } catch (error) {
    return { service: false, error: error instanceof Error ? error : new Error(String(error)) };
  }
  const read = readServiceAnswer(status, bytes);
  if (read.service) return read;
  // The path leads nowhere (a proxy's or a router's bare 404): a failed check, not an unknown outcome.
  const routeMiss = noSuchRoute(status, undefined);
  if (routeMiss !== undefined) return { service: false, routeMiss };
  return { service: false, error: new NotServiceAnswerError(status, contentType, read.why, bytes) };
}

/**
 * The ends of one phase's requests: each is recorded (and checked), then `ended` frees its slot,
 * with the connection to refill when an answer came on one.
 */
export function phaseRun(
  phase: PlannedPhase,
  recorder: Recorder,
  history: PhaseHistory | undefined,
  ended: (freed: Http1Connection<Pending> | undefined, nowMs: number) => void,
): PhaseRun {
  const run: PhaseRun = {
    answered: (pending, response) => {
      const { request } = pending;
      const status = response.status;
      const judged = judge(response);
      // Not the service's answer (a proxy's page, a body that does not decode): its effect is unknown.
      if ('error' in judged) {
        run.failed(pending, judged.error);
        return;
      }
      const body = judged.service ? judged.body : undefined;
      const doneMs = performance.now();
      try {
        // The history has every answer that is not the service's, and every 5xx, as unknown (unknown-outcome.ts).
        recordLoadCall(history, pending, { status, body }, response.region);
        const failure = judged.service
          ? (noSuchRoute(status, body) ?? request.check?.(response.region === undefined ? { status, body } : { status, body, region: response.region }))
          : judged.routeMiss;
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
          late: pending.late,
        });
      } finally {
        ended(pending.connection, doneMs);
      }
    },
    failed: (pending, error) => {
      const doneMs = performance.now();
      try {
        recordLoadCall(history, pending, 'unknown');
        recorder.record({
          operation: pending.request.operation,
          intendedMs: pending.intendedMs,
          sentMs: pending.sentMs,
          doneMs,
          status: undefined,
          transportError: classifyTransportError(error),
          body: undefined,
          checkFailed: false,
          warmup: phase.warmup,
          late: pending.late,
          // A proxy's page shows something answered (the dead-target watch), though not the service.
          ...(error instanceof NotServiceAnswerError ? { answeredStatus: error.status } : {}),
        });
      } finally {
        ended(undefined, doneMs);
      }
    },
  };
  return run;
}
