/**
 * What an open-model phase does with each request's end (open-model.ts): an answer is read (its
 * JSON parsed only when something needs it), checked, recorded and written to the history; a
 * failure is recorded as a transport error of unknown effect. Either way its slot is freed.
 */
import { noSuchRoute } from './route-miss.js';
import { performance } from 'node:perf_hooks';
import type { PlannedPhase } from './plan.js';
import { type Recorder, recordsBodyOf } from './recorder.js';
import { type PhaseHistory, recordLoadCall } from './history-recording.js';
import { classifyTransportError } from './transport-error.js';
import type { Http1Connection } from './http1/connection.js';
import type { ParsedResponse } from './http1/response-parser.js';
import { NotServiceAnswerError, decodeBody, looksLikeJsonObject, serviceJsonOf } from './http1/answer-body.js';
import type { Pending, PhaseRun } from './open-model-requests.js';

/**
 * The answer's JSON when `read`, else undefined; throws NotServiceAnswerError when the body is not
 * the service's JSON. A 5xx without it (a gateway's 502 page) stays an answer: the dead-target
 * watch counts gateway errors, and the history records every 5xx as unknown anyway.
 */
function answerBody(response: ParsedResponse, read: boolean): unknown {
  const { status, contentType } = response;
  const bytes = response.contentEncoding === undefined ? response.body : decodeBody(status, contentType, response.contentEncoding, response.body);
  if (status >= 500) {
    if (!read || !looksLikeJsonObject(bytes)) return undefined;
    try {
      return JSON.parse(bytes.toString('utf8')) as unknown;
    } catch {
      return undefined;
    }
  }
  if (read) return serviceJsonOf(status, contentType, bytes);
  if (!looksLikeJsonObject(bytes)) serviceJsonOf(status, contentType, bytes);
  return undefined;
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
      // JSON is parsed only when something reads it: a check, the history or the recorder's breakdown.
      let body: unknown;
      try {
        // A 404's body tells an answer of the operation from a route the service does not have.
        body = answerBody(response, request.check !== undefined || history !== undefined || status === 404 || recordsBodyOf(request.operation));
      } catch (error) {
        // Not the service's answer (a proxy's page, a body that does not decode): its effect is unknown.
        run.failed(pending, error instanceof Error ? error : new Error(String(error)));
        return;
      }
      const doneMs = performance.now();
      try {
        recordLoadCall(history, pending, status >= 500 ? 'unknown' : { status, body });
        const failure = noSuchRoute(status, body) ?? request.check?.({ status, body });
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
