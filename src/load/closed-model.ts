/**
 * The closed model on autocannon: a fixed number of connections, each sending its next request
 * as soon as the previous answer arrives (optionally pipelined). There is no intended send time,
 * so corrected and uncorrected latency are the same figure here — the report says so.
 * autocannon gives no per-request identity in its events, so each connection's context remembers
 * what it sent. That context is reset before every request when the request list wraps around,
 * so the closed model runs without pipelining (the CLI refuses --pipelining > 1 with it): with
 * one request in flight per connection the answer always belongs to the last request sent.
 */
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';
import type { PlannedRequest } from './open-model.js';
import type { PlannedPhase } from './plan.js';
import type { Recorder } from './recorder.js';
import type { LoadSettings } from './scenario.js';
import type { Target } from './target.js';
import { classifyTransportError } from './transport-error.js';

export interface ClosedPhaseOptions {
  target: Target;
  settings: LoadSettings;
  phase: PlannedPhase;
  next: () => PlannedRequest;
  recorder: Recorder;
  signal: AbortSignal | undefined;
}

interface InFlight {
  request: PlannedRequest;
  sentMs: number;
}

export function runClosedPhase(options: ClosedPhaseOptions): Promise<void> {
  const { target, settings, phase, next, recorder, signal } = options;
  if (signal?.aborted === true) return Promise.resolve();
  return new Promise<void>((resolve, reject) => {
    const instance = autocannon(
      {
        url: target.url,
        connections: settings.connections,
        pipelining: settings.pipelining,
        duration: phase.durationMs / 1000,
        timeout: Math.max(1, Math.round(settings.timeoutMs / 1000)),
        requests: [
          {
            method: 'POST',
            setupRequest: (req, context) => {
              const request = next();
              const queue = ((context as { sent?: InFlight[] }).sent ??= []);
              queue.push({ request, sentMs: performance.now() });
              const headers: Record<string, string> = { 'content-type': 'application/json' };
              if (request.spec.auth !== 'none') headers.authorization = `Bearer ${target.rootKey}`;
              return { ...req, method: 'POST', path: `${new URL(target.url).pathname.replace(/\/$/, '')}/v2/${request.spec.op}`, headers, body: JSON.stringify(request.spec.body) };
            },
            onResponse: (status, body, context) => {
              const sent = (context as { sent?: InFlight[] }).sent?.shift();
              if (sent === undefined) return;
              const doneMs = performance.now();
              let parsed: unknown;
              try {
                parsed = body === '' ? undefined : JSON.parse(body);
              } catch {
                parsed = undefined;
              }
              const failure = sent.request.check?.({ status, body: parsed });
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
          },
        ],
      },
      (error) => {
        signal?.removeEventListener('abort', stop);
        if (error !== null && error !== undefined) reject(error instanceof Error ? error : new Error(String(error)));
        else resolve();
      },
    );
    // A failed request has no context here: it is counted under "(transport)".
    instance.on('reqError', (error: unknown) => {
      const t = performance.now();
      recorder.record({
        operation: '(transport)',
        intendedMs: t,
        sentMs: t,
        doneMs: t,
        status: undefined,
        transportError: classifyTransportError(error),
        body: undefined,
        checkFailed: false,
        warmup: phase.warmup,
      });
    });
    const stop = () => instance.stop();
    signal?.addEventListener('abort', stop, { once: true });
  });
}
