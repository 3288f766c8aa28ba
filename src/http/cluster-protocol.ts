/**
 * The messages between the engine owner (the primary of `--workers N`, cluster.ts) and its HTTP
 * workers (cluster-worker.ts), over node's IPC channel (JSON lines). Workers batch what they ask
 * per turn of their event loop, and the owner answers a batch with one message.
 *
 * Calls and answers travel as tuples, a route as its number in the list the owner sends at
 * `init`: a batch holds hundreds of them and each is stringified and parsed on both sides, so
 * object keys and route names repeated per call cost CPU on the owner, the one process that
 * does not scale (docs/benchmarks.md#serve---workers).
 */
import type { EngineOutcome } from './engine-backend.js';
import type { Problem } from './envelope.js';
import type { Reply } from './route.js';
import type { ServerOptions } from './server-options.js';

export const CALL_RUN = 0;
export const CALL_FAULT = 1;
export const CALL_OPERATOR = 2;
export const CALL_CLOCK = 3;

/**
 * What a worker asks the owner; `id` is the worker's, to match the answer. An absent token or seq
 * is null; the input comes last and is left out when undefined (a refused call's).
 */
export type WireCall =
  | [id: number, kind: typeof CALL_RUN, route: number, token: string | null, seq: number | null, rejection: Problem | null, input?: unknown]
  | [id: number, kind: typeof CALL_FAULT, operation: string]
  | [id: number, kind: typeof CALL_OPERATOR, token: string | null]
  | [id: number, kind: typeof CALL_CLOCK];

export const ANSWER_REPLY = 0;
export const ANSWER_PROBLEM = 1;
export const ANSWER_VALUE = 2;
export const ANSWER_FAILED = 3;

/** A run's outcome (its reply, or the problem to answer), another call's value, or the error of a call that threw (a bug). */
export type WireAnswer =
  | [id: number, kind: typeof ANSWER_REPLY, reply: Reply]
  | [id: number, kind: typeof ANSWER_PROBLEM, problem: Problem]
  | [id: number, kind: typeof ANSWER_VALUE, value: unknown]
  | [id: number, kind: typeof ANSWER_FAILED, error: string];

/** A run call as the owner executes it: an `EngineCall` with its route still a number. */
export interface RunCall {
  route: number;
  token: string | undefined;
  input: unknown;
  rejection?: Problem;
  seq?: number;
}

export function encodeRun(id: number, route: number, call: Omit<RunCall, 'route'>): WireCall {
  const wire: WireCall = [id, CALL_RUN, route, call.token ?? null, call.seq ?? null, call.rejection ?? null];
  if (call.input !== undefined) wire.push(call.input);
  return wire;
}

export function decodeRun(wire: Extract<WireCall, [number, typeof CALL_RUN, ...unknown[]]>): RunCall {
  const [, , route, token, seq, rejection, input] = wire;
  const call: RunCall = { route, token: token ?? undefined, input };
  if (rejection !== null) call.rejection = rejection;
  if (seq !== null) call.seq = seq;
  return call;
}

export function encodeOutcome(id: number, outcome: EngineOutcome): WireAnswer {
  return outcome.ok ? [id, ANSWER_REPLY, outcome.reply] : [id, ANSWER_PROBLEM, outcome.problem];
}

/** What an answer resolves to: a run's `EngineOutcome`, another call's value; a failure throws. */
export function decodeAnswer(wire: WireAnswer): unknown {
  switch (wire[1]) {
    case ANSWER_REPLY:
      return { ok: true, reply: wire[2] } satisfies EngineOutcome;
    case ANSWER_PROBLEM:
      return { ok: false, problem: wire[2] } satisfies EngineOutcome;
    case ANSWER_VALUE:
      return wire[2];
    case ANSWER_FAILED:
      throw new Error(`the engine owner failed: ${wire[2]}`);
  }
}

/** A worker's settings: what a `ServerOptions` holds that can cross a process boundary. */
export type WorkerServerOptions = Pick<ServerOptions, 'maxBodyBytes' | 'errorsUrl' | 'validateResponses' | 'version' | 'coalesceWrites' | 'keepAliveTimeoutMs'>;

export type WorkerMessage =
  | { k: 'batch'; calls: WireCall[] }
  | { k: 'ready' }
  /** The worker has taken a faults flag in (`n` from the owner's message). */
  | { k: 'ack'; n: number };

export type OwnerMessage =
  /** `routes`: every route's `routeKey`, by the number calls name it with. */
  | { k: 'init'; workerId: number; options: WorkerServerOptions; allowedHosts: string[] | null; faultsActive: boolean; routes: string[] }
  /** The answers to one batch. */
  | { k: 'answers'; answers: WireAnswer[] }
  /** Whether transport faults are on now; the worker acknowledges with `n`. */
  | { k: 'faults'; active: boolean; n: number }
  /** A connection to serve: the socket travels with the message. */
  | { k: 'connection' }
  /** Close the server and exit. */
  | { k: 'stop' };

/** How a route is named in `init`. */
export function routeKey(method: string, path: string): string {
  return `${method} ${path}`;
}
