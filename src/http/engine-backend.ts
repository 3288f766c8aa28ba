/**
 * The stateful half of the server's pipeline, behind one small interface. The server
 * (server.ts) does the transport, body reading, JSON parsing, schema validation and envelopes;
 * everything that reads or changes state — injected-fault decisions, the operator check, the
 * clock, the API rate limit, the journal and the engine itself — goes through an `EngineBackend`.
 *
 * In one process the backend is the state itself and answers synchronously (`localBackend`), so
 * the single-process server pays no promise per request. With `keysim serve --workers N` the
 * workers hold a link to the one engine owner (engine-link.ts), which answers over IPC; the owner
 * runs `executeCall` below, the same code, so both modes give the same answers.
 */
import { fromEngine, type Problem } from './envelope.js';
import type { FaultDecision } from './faults.js';
import { authorizeOperator } from './operator.js';
import type { Reply, Route, RouteContext } from './route.js';

/** A value now, or later (over IPC). */
export type Eventually<T> = T | Promise<T>;

/** One request, parsed and validated by a server, for the state to execute or refuse. */
export interface EngineCall {
  route: Route;
  /** The bearer token (undefined: none sent). */
  token: string | undefined;
  /** The validated input (unused when `rejection` is set). */
  input: unknown;
  /**
   * Why the server refuses the request (missing root key, schema violation) — answered only once
   * the API rate limit has counted it, as a single process does.
   */
  rejection?: Problem;
  /** The client's `x-keysim-seq` header, for the journal. */
  seq?: number;
  /** The region it runs in (production profile, 1-based; regions.ts); absent on the exact engine. */
  region?: number;
}

export type EngineOutcome = { ok: true; reply: Reply } | { ok: false; problem: Problem };

export interface EngineBackend {
  /** Whether a transport fault can strike: checked on every request, so it is a local flag. */
  readonly faultsActive: boolean;
  /** The injected fault for one request of `operation` (null: none). */
  decideFault(operation: string): Eventually<FaultDecision | null>;
  /** undefined when `token` is the operator's; else the problem to answer (400/401/403). */
  authorizeOperator(token: string | undefined): Eventually<Problem | undefined>;
  /** The service clock, Unix ms (for `/_sim/health`). */
  clockNow(): Eventually<number>;
  /** API rate limit, then the rejection or the journal and the route's handler. */
  run(call: EngineCall): Eventually<EngineOutcome>;
}

/**
 * Thrown (rejected) by a backend that cannot answer now because what holds its state is away (a
 * store-backed replica without its Redis): `/_sim/health` then answers 503 with the problem's
 * detail, so a readiness probe takes the replica out of service.
 */
export class BackendUnavailable extends Error {
  override readonly name = 'BackendUnavailable';
  constructor(readonly problem: Problem) {
    super(problem.detail);
  }
}

const TOO_MANY_REQUESTS: Problem = {
  status: 429,
  title: 'Too Many Requests',
  identifier: 'err:service:ratelimit:too_many_requests',
  detail: 'This root key has exceeded the API rate limit set with /_sim/apiRateLimit.set; retry in the next window.',
};

/**
 * Runs one call against the state: the single place (per process owning state) that calls the
 * engine. The call runs on one reading of the service clock (ControllableClock.holding): the API
 * rate limit, the journal and the engine all see that instant, so a replay at the journaled instant
 * decides exactly as the engine did, even on a running clock at a window edge.
 */
export function executeCall(ctx: RouteContext, sha256: (text: string) => string, call: EngineCall): EngineOutcome {
  return ctx.clock.holding((nowMs) => executeAt(ctx, sha256, call, nowMs));
}

function executeAt(ctx: RouteContext, sha256: (text: string) => string, call: EngineCall, nowMs: number): EngineOutcome {
  const { route, token } = call;
  const admin = route.path.startsWith('/_sim/');
  // The admin surface is never limited: it is how a test gets out of a 429.
  // (Hash the root key only when a limit is set: it is the hot path's most expensive step.)
  if (ctx.apiRateLimit.config !== null && !admin && !ctx.apiRateLimit.admit(token === undefined ? '' : sha256(token), nowMs)) {
    return { ok: false, problem: TOO_MANY_REQUESTS };
  }
  if (call.rejection !== undefined) return { ok: false, problem: call.rejection };
  // The journal (journal.ts) records the realised order for the oracle: just before execution.
  if (ctx.journal.active && route.journal !== false) ctx.journal.record(nowMs, route.method, route.path, token, call.input, call.seq, call.region);
  // The production profile: the handler runs on the region's engine (regions.ts).
  const here = call.region === undefined || ctx.regions === undefined ? ctx : (ctx.regions.contexts[call.region - 1] ?? ctx);
  const result = route.handle(here, token, call.input);
  return result.ok ? { ok: true, reply: result.value } : { ok: false, problem: fromEngine(result.error) };
}

/** The state of this process as a backend: every answer synchronous. */
export function localBackend(ctx: RouteContext, sha256: (text: string) => string): EngineBackend {
  return {
    get faultsActive() {
      return ctx.faults.active;
    },
    decideFault: (operation) => ctx.faults.decide(operation),
    authorizeOperator(token) {
      const operator = authorizeOperator(ctx, token);
      return operator.ok ? undefined : fromEngine(operator.error);
    },
    clockNow: () => ctx.clock.now(),
    run: (call) => executeCall(ctx, sha256, call),
  };
}
