/**
 * The closed model: a fixed number of connections, each sending its next request as soon as the
 * previous one ended (answered or failed). There is no intended send time, so corrected and
 * uncorrected latency are the same figure here — the report says so.
 *
 * It runs on keysim's own HTTP/1.1 client (http1/connection.ts), as the open model does, and
 * records every request's end through the same code (open-model-answers.ts `phaseRun`), so the
 * two models agree on every answer: what is the service's answer and what never came
 * (service-answer.ts), a route miss, a transport error and its kind. The connections trust the
 * same CA as every other client of the run (`--ca`: the target's `ca`), and verify the
 * certificate and host name like them.
 *
 * Each connection has one request in flight at a time (`pipelining` of them with --pipelining;
 * the CLI refuses more than one with this model). A request whose connection broke under it is
 * never sent again: it may have been executed (the history records it 'unknown'); the
 * connection's next request opens a new connection. At the phase's planned end (or a stop) the
 * connections are destroyed: what is still in flight was cut off by us, not failed by the server
 * — neither an answer nor an error (the history has it as 'unknown'), but the server may have
 * executed it, so it is counted apart (OperationStats.cutOff) for the end-of-run checks that
 * reconcile the service's state with the answers.
 */
import { performance } from 'node:perf_hooks';
import { Http1Connection } from '../http1/index.js';
import { IdleCloseLearner } from '../http1/index.js';
import { RequestText, endpointOf } from '../http1/index.js';
import type { ParsedResponse } from '../http1/index.js';
import { phaseRun } from './open-model-answers.js';
import type { Pending, PhaseRun, PlannedRequest } from './open-model-requests.js';
import type { PlannedPhase } from '../plan/index.js';
import type { Recorder } from '../metrics/index.js';
import type { LoadSettings } from '../scenario/index.js';
import type { Target } from '../target/index.js';
import { type PhaseHistory, SEQ_HEADER, recordLoadCall, serviceInvokeBound } from '../history/index.js';

/** The most a connection waits to be established (less when the request timeout is shorter). */
const MAX_CONNECT_TIMEOUT_MS = 10_000;

export interface ClosedPhaseOptions {
  target: Target;
  settings: LoadSettings;
  phase: PlannedPhase;
  next: () => PlannedRequest;
  recorder: Recorder;
  signal: AbortSignal | undefined;
  /** Record every request of the phase here (the header x-keysim-seq carries its seq). */
  history?: PhaseHistory | undefined;
}

export function runClosedPhase(options: ClosedPhaseOptions): Promise<void> {
  const { target, settings, phase, next, recorder, signal, history } = options;
  if (signal?.aborted === true) return Promise.resolve();
  const url = new URL(target.url);
  const text = new RequestText(url, target.rootKey);
  const endpoint = { ...endpointOf(url), tlsOptions: target.ca === undefined ? undefined : { ca: target.ca } };
  const perConnection = Math.max(1, settings.pipelining);

  return new Promise<void>((resolve, reject) => {
    let ending = false;
    let failure: unknown;
    // The ends are recorded as the open model records them; the next request is sent here instead.
    const record = phaseRun(phase, recorder, history, () => undefined);
    const run: PhaseRun = {
      answered: (pending, response: ParsedResponse) => {
        if (ending) return cutOff(pending);
        record.answered(pending, response);
        sendNext(pending.connection);
      },
      failed: (pending, error) => {
        if (ending) return cutOff(pending);
        record.failed(pending, error);
        sendNext(pending.connection);
      },
    };
    const cutOff = (pending: Pending) => {
      recordLoadCall(history, pending, 'unknown');
      recorder.recordCutOff(pending.request.operation, phase.warmup);
    };
    const handlers = {
      answered: (pending: Pending, response: ParsedResponse) => pending.run.answered(pending, response),
      failed: (pending: Pending, error: Error) => pending.run.failed(pending, error),
    };
    const idleClose = new IdleCloseLearner();
    const connectionOptions = { endpoint, timeoutMs: settings.timeoutMs, connectTimeoutMs: Math.min(settings.timeoutMs, MAX_CONNECT_TIMEOUT_MS), idleClose };
    const connections = Array.from({ length: Math.max(1, settings.connections) }, () => new Http1Connection<Pending>(connectionOptions, handlers));

    const sendNext = (connection: Http1Connection<Pending> | undefined) => {
      if (ending || connection === undefined) return;
      let request: PlannedRequest;
      try {
        request = next();
      } catch (error) {
        // A request builder that throws fails the run, as in the open model.
        failure ??= error;
        end();
        return;
      }
      const sentMs = performance.now();
      // Every request goes into the history, warm-up included: it spends credits all the same.
      const seq = history?.writer.begin();
      const pending: Pending = { intendedMs: sentMs, request, late: false, sentMs, seq, serviceInvokeMs: serviceInvokeBound(history), run, connection };
      connection.send(pending, text.post(request.spec.op, request.spec.auth === 'none', SEQ_HEADER, seq, JSON.stringify(request.spec.body)), sentMs);
    };

    const end = () => {
      if (ending) return;
      ending = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', end);
      // What is still in flight is cut off (run.failed sees `ending`).
      for (const connection of connections) connection.destroy();
      if (failure !== undefined)
        reject(failure instanceof Error ? failure : new Error(`the closed model failed: ${typeof failure === 'string' ? failure : JSON.stringify(failure)}`));
      else resolve();
    };
    const timer = setTimeout(end, Math.max(0, phase.durationMs));
    signal?.addEventListener('abort', end, { once: true });
    for (const connection of connections) for (let i = 0; i < perConnection && !ending; i++) sendNext(connection);
  });
}
