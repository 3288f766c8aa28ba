/**
 * The closed model on autocannon: a fixed number of connections, each sending its next request
 * as soon as the previous answer arrives. There is no intended send time, so corrected and
 * uncorrected latency are the same figure here — the report says so.
 *
 * Request identity. autocannon's events carry none, and the `context` it hands to setupRequest
 * and onResponse is replaced before every request (lib/requestIterator.js: with one request in
 * the list, each nextRequest() wraps around and calls resetContext()), so a context cannot
 * remember a request that got no answer. What is stable is the request object: each Client
 * deep-clones its options (lib/httpClient.js, `clone(opts)`), so every connection owns its copy
 * of `requests[0]`, and the request builder shallow-copies that copy into what setupRequest gets
 * (lib/httpRequestBuilder.js, `Object.assign`). An object field of it — `slot` below — is thus one
 * object per connection for the whole phase. The closed model runs without pipelining (the CLI
 * refuses --pipelining > 1 with it), so a slot holds at most one request in flight:
 * - setupRequest: if the slot still holds a request, that one got no answer — autocannon only
 *   builds a connection's next request after an answer, or right after it saw the connection
 *   time out, fail or close (and reconnected) — so it is recorded 'unknown' now;
 * - onResponse: the answer belongs to the request in the slot (one in flight, and the sockets of
 *   earlier requests are dead: autocannon reconnects only after destroying or losing them);
 * - at the phase's end, what is still in a slot is recorded 'unknown'.
 * 'unknown' effects are taken to complete at +∞ by the checkers (history.ts, timeBracket): a
 * server may still execute a request after the client gave up on it. The completion time written
 * is the moment the loss was seen, which no answer could have come after.
 *
 * Errors. The slot is also where failures are counted, so each request is counted once: an answer
 * in onResponse, or a transport error of its own operation when setupRequest finds it lost (with
 * the time until then as its latency, as the open model does). autocannon's run-level `reqError`
 * names no request and misses a connection the server closed (its 'end' handler reconnects without
 * a word), so the kind comes from the Client's own events instead: 'connError' (emitted before the
 * reconnect builds the next request) is classified by its code; 'timeout' is emitted just after
 * the reconnect (lib/httpClient.js, handleTimeout), so the kind waits for the end of that
 * synchronous step; a loss with neither is a connection the server closed: 'reset'. Requests still
 * in flight when the phase ends were cut off by us, not failed by the server: they are neither
 * answers nor errors (the history has them as 'unknown'; at most one per connection), but the
 * server may have executed them, so they are counted apart (OperationStats.cutOff) for the
 * end-of-run checks that reconcile the service's state with the answers.
 *
 * The end. autocannon's duration only raises a flag; the run ends at the next sample tick
 * (lib/run.js, tickInterval; every `sampleInt` ms, 1000 by default), so a 500 ms phase used to run
 * about 1 s — and a service-clock sweep, planned over the phase's duration, spent the rest of it at
 * its end. Sampling every STOP_CHECK_MS ends the phase within that much of its planned duration
 * (autocannon's per-sample figures are not used here); the end goes through the same callback, so
 * what is still in flight is cut off as before.
 */
import { noSuchRoute } from './route-miss.js';
import type { EventEmitter } from 'node:events';
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';
import type { PlannedRequest } from './open-model-requests.js';
import type { PlannedPhase } from './plan.js';
import type { TransportErrorKind } from '../report/model.js';
import type { Recorder } from './recorder.js';
import type { LoadSettings } from './scenario.js';
import type { Target } from './target.js';
import { classifyTransportError } from './transport-error.js';
import { type PhaseHistory, SEQ_HEADER, recordLoadCall, serviceInvokeBound } from './history-recording.js';

/** How often autocannon looks at its stop flag, in ms: about the most a phase runs past its duration. */
const STOP_CHECK_MS = 10;

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

interface InFlight {
  request: PlannedRequest;
  sentMs: number;
  /** From the history writer; undefined without a history. */
  seq: number | undefined;
  /** The service clock's lower bound when it was sent (a sweep phase), or the frozen clock. */
  serviceInvokeMs: number | undefined;
}

/** One per connection (see the top of the file): what it has in flight. */
interface Slot {
  inFlight: InFlight | undefined;
  /** The autocannon Client, known from setupClient on (after its first request was built). */
  client: object | undefined;
  /** The socket the previous request went out on. */
  conn: unknown;
  /** Answers on this connection can no longer be matched: every request of it ends 'unknown'. */
  untrusted: boolean;
  /** The error autocannon reported for this connection since its last request was built. */
  connError: unknown;
  /** A lost request waiting for autocannon's 'timeout' that may follow (see the top of the file). */
  lost: { sent: InFlight; doneMs: number; kind: TransportErrorKind } | undefined;
}

/** A socket autocannon no longer reads from: destroyed (error, timeout) or ended by the server. */
function isDead(conn: unknown): boolean {
  if (typeof conn !== 'object' || conn === null) return false;
  const socket = conn as Partial<Socket>;
  return socket.destroyed === true || socket.readableEnded === true;
}

export function runClosedPhase(options: ClosedPhaseOptions): Promise<void> {
  const { target, settings, phase, next, recorder, signal, history } = options;
  if (signal?.aborted === true) return Promise.resolve();
  const basePath = new URL(target.url).pathname.replace(/\/$/, '');
  const slots = new Set<Slot>();
  let lastBuilt: Slot | undefined;
  let finished = false;
  const recordLoss = (sent: InFlight, doneMs: number, kind: TransportErrorKind) => {
    recorder.record({
      operation: sent.request.operation,
      intendedMs: sent.sentMs,
      sentMs: sent.sentMs,
      doneMs,
      status: undefined,
      transportError: kind,
      body: undefined,
      checkFailed: false,
      warmup: phase.warmup,
    });
  };

  const settleLoss = (slot: Slot, kind?: TransportErrorKind) => {
    const lost = slot.lost;
    if (lost === undefined) return;
    slot.lost = undefined;
    recordLoss(lost.sent, lost.doneMs, kind ?? lost.kind);
  };

  return new Promise<void>((resolve, reject) => {
    const instance = autocannon(
      {
        url: target.url,
        connections: settings.connections,
        pipelining: settings.pipelining,
        duration: phase.durationMs / 1000,
        sampleInt: STOP_CHECK_MS,
        // autocannon takes seconds and multiplies them by 1000: fractions keep the timeout what the open model uses.
        timeout: settings.timeoutMs / 1000,
        // Called in the Client's constructor right after it built its first request (synchronously).
        setupClient: (client) => {
          if (lastBuilt === undefined || lastBuilt.client !== undefined) {
            throw new Error('autocannon shares one request object between connections: the closed model cannot tell their requests apart.');
          }
          lastBuilt.client = client;
          const slot = lastBuilt;
          // Events of lib/httpClient.js that @types/autocannon does not declare.
          const events: EventEmitter = client;
          events.on('connError', (error: unknown) => {
            slot.connError = error;
          });
          events.on('timeout', () => settleLoss(slot, 'timeout'));
        },
        requests: [
          {
            method: 'POST',
            slot: { inFlight: undefined, client: undefined, conn: undefined, untrusted: false, connError: undefined, lost: undefined } satisfies Slot,
            setupRequest: (req, context) => {
              const slot = (req as { slot: Slot }).slot;
              (context as { slot?: Slot }).slot = slot;
              slots.add(slot);
              lastBuilt = slot;
              const lost = slot.inFlight;
              if (lost !== undefined) recordLoadCall(history, lost, 'unknown');
              const connError = slot.connError;
              slot.connError = undefined;
              if (lost !== undefined) {
                settleLoss(slot);
                if (connError !== undefined) {
                  recordLoss(lost, performance.now(), classifyTransportError(connError));
                } else {
                  slot.lost = { sent: lost, doneMs: performance.now(), kind: 'reset' };
                  queueMicrotask(() => settleLoss(slot));
                }
              }
              // A new socket while the previous one still reads would leave two requests in flight.
              const conn = (slot.client as { conn?: unknown } | undefined)?.conn;
              if (slot.client !== undefined && (conn === undefined || (slot.conn !== undefined && slot.conn !== conn && !isDead(slot.conn)))) slot.untrusted = true;
              slot.conn = conn;
              const request = next();
              const seq = history?.writer.begin();
              slot.inFlight = { request, sentMs: performance.now(), seq, serviceInvokeMs: serviceInvokeBound(history) };
              const headers: Record<string, string> = { 'content-type': 'application/json', 'accept-encoding': 'identity' };
              if (request.spec.auth !== 'none') headers.authorization = `Bearer ${target.rootKey}`;
              if (seq !== undefined) headers[SEQ_HEADER] = String(seq);
              return { ...req, method: 'POST', path: `${basePath}/v2/${request.spec.op}`, headers, body: JSON.stringify(request.spec.body) };
            },
            onResponse: (status, body, context) => {
              const slot = (context as { slot?: Slot }).slot;
              const sent = slot?.inFlight;
              if (slot === undefined || sent === undefined || finished) return;
              slot.inFlight = undefined;
              const doneMs = performance.now();
              let parsed: unknown;
              let parses = true;
              try {
                parsed = body === '' ? undefined : JSON.parse(body);
              } catch {
                parsed = undefined;
                parses = false;
              }
              // autocannon's parser is not reset on reconnect: a body that is not JSON may be two answers spliced.
              recordLoadCall(history, sent, status >= 500 || !parses || slot.untrusted ? 'unknown' : { status, body: parsed });
              const failure = noSuchRoute(status, parsed) ?? sent.request.check?.({ status, body: parsed });
              if (failure !== undefined && !phase.warmup) recorder.noteCheckFailure(`${sent.request.label}: ${failure}`);
              recorder.record({
                operation: sent.request.operation,
                intendedMs: sent.sentMs,
                sentMs: sent.sentMs,
                doneMs,
                status,
                transportError: undefined,
                body: parsed,
                checkFailed: failure !== undefined,
                warmup: phase.warmup,
              });
            },
          } as autocannon.Request,
        ],
      },
      (error) => {
        // autocannon destroyed every connection before calling back: no answer can come any more.
        finished = true;
        for (const slot of slots) {
          settleLoss(slot);
          if (slot.inFlight !== undefined) {
            recordLoadCall(history, slot.inFlight, 'unknown');
            recorder.recordCutOff(slot.inFlight.request.operation, phase.warmup);
          }
          slot.inFlight = undefined;
        }
        signal?.removeEventListener('abort', stop);
        if (error !== null && error !== undefined) reject(error instanceof Error ? error : new Error(String(error)));
        else resolve();
      },
    );
    const stop = () => instance.stop();
    signal?.addEventListener('abort', stop, { once: true });
  });
}
