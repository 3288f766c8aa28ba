/**
 * Where injected transport faults (faults.ts) strike a request of the service: once its body has
 * been read, before anything else looks at it. With no fault set the request goes on at once,
 * synchronously; a decision to wait, drop or answer 500 continues in a promise (the decision
 * itself may come over IPC, engine-backend.ts). The admin surface is never faulted.
 */
import type { ServerResponse } from 'node:http';
import type { EngineBackend } from './engine-backend.js';
import { type Problem, fromEngine } from './envelope.js';
import { type FaultDecision, faultDelay } from './faults.js';
import { SERVICE_ROUTES, operationName } from './operations.js';
import type { Route } from './route.js';

/** What the fault path needs of a request on its way through the server. */
export interface FaultableExchange {
  route: Route;
  res: ServerResponse;
}

/** The server's steps the fault path hands a request on to. */
export interface FaultPathSteps<X extends FaultableExchange> {
  /** The request goes on (content type, JSON, schema, engine). */
  execute(x: X, bodyText: string): void;
  /** The request is answered with this problem instead. */
  reject(x: X, problem: Problem): void;
  /** An unexpected error (a bug): answer 500 and log it. */
  fail(x: X, error: unknown): void;
}

/**
 * The step after the body: `received(x, bodyText)` executes the request, or first applies the
 * injected fault the backend decides for it (wait, then drop the connection or answer 500
 * without executing).
 */
export function faultPath<X extends FaultableExchange>(backend: EngineBackend, steps: FaultPathSteps<X>): (x: X, bodyText: string) => void {
  // Only the service's own routes can be faulted; the admin surface never is.
  const faultable = new Map<Route, string>(SERVICE_ROUTES.map((route) => [route, operationName(route.path)]));

  async function faulted(x: X, bodyText: string, decided: Promise<FaultDecision | null> | FaultDecision): Promise<void> {
    const decision = decided instanceof Promise ? await decided : decided;
    if (decision === null) {
      steps.execute(x, bodyText);
      return;
    }
    if (decision.delayMs > 0) await faultDelay(decision.delayMs);
    if (decision.outcome === 'drop') {
      x.res.destroy();
      return;
    }
    if (decision.outcome === 'error') {
      steps.reject(
        x,
        fromEngine({
          code: 'err:service:application:unexpected_error',
          detail: 'An injected fault (errorRate, /_sim/faults.set): the request was not executed.',
        }),
      );
      return;
    }
    steps.execute(x, bodyText);
  }

  return function received(x: X, bodyText: string): void {
    const operation = backend.faultsActive ? faultable.get(x.route) : undefined;
    if (operation === undefined) {
      steps.execute(x, bodyText);
      return;
    }
    const decided = backend.decideFault(operation);
    if (decided === null) {
      steps.execute(x, bodyText);
      return;
    }
    void faulted(x, bodyText, decided).catch((error: unknown) => steps.fail(x, error));
  };
}
