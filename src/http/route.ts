/** What one endpoint is: method, path, how it authenticates, its schemas and its handler. */
import type { ControllableClock, EngineError, EngineSurface, ProductionProfile, Result } from '../engine/index.js';
import type { IncomingMessage } from 'node:http';
import type { Schema } from './schema.js';
import type { StreamedBody } from './restore-body.js';
import type { ApiRateLimiter } from './api-rate-limit.js';
import type { FaultInjector } from './faults.js';
import type { Journal } from './journal.js';

/** `v2`: the `{ meta, data }` envelope; `v1`: direct objects and unstructured errors. */
export type RouteStyle = 'v2' | 'v1';

export interface Pagination {
  hasMore: boolean;
  cursor?: string;
}

/** What a handler answers: `data` (absent for deletes that return only `meta`) and pagination. */
export interface Reply {
  data?: unknown;
  pagination?: Pagination;
}

/** What handlers may use besides their input. */
export interface RouteContext {
  /** The exact engine, or (production profile) the region the request runs in. */
  engine: EngineSurface;
  /** The production profile (regions.ts): absent on the exact engine, the default. */
  regions?: RegionContexts;
  clock: ControllableClock;
  /** The optional rate limit on the simulator's own API (429s). */
  apiRateLimit: ApiRateLimiter;
  /** Injected faults (latency, 5xx, dropped connections, wrong behaviour); none by default. */
  faults: FaultInjector;
  /** The realised order of execution, for the oracle (off until `/_sim/journal.start`). */
  journal: Journal;
  /** Back to the start state (admin surface). */
  reset(): void;
  /** SHA-256 of the operator's root key: the only credential the admin surface answers (operator.ts). */
  operatorRootKeyHash: string;
}

/** The production profile and one context per region (1-based: `contexts[region - 1]`). */
export interface RegionContexts {
  profile: ProductionProfile;
  contexts: readonly RouteContext[];
}

export interface Route<I = unknown> {
  method: 'GET' | 'POST';
  path: string;
  style: RouteStyle;
  summary: string;
  /** `required`: a root key must be sent; `optional`: verification works without one. */
  auth: 'required' | 'optional';
  /** Where the input comes from: the JSON body, or (v1 reads) the query string. */
  input: 'body' | 'query';
  request: Schema<I>;
  /** The schema of `data`; undefined when the answer carries no data. */
  response?: Schema<unknown>;
  /** For the OpenAPI document. */
  tag: string;
  list?: boolean;
  /**
   * Errors of this route are sent as `application/problem+json` (besides 429, which always is).
   * The official SDK types identities.deleteIdentity's errors only with that content type.
   */
  problemJsonErrors?: boolean;
  /**
   * false: never journaled — reads that change nothing, and the admin calls that act on the
   * transport or the simulator itself (faults, API rate limit, journal, reset), which a replay of
   * the service must not repeat.
   */
  journal?: false;
  /** Send the answer in pieces (json-stream.ts): for answers that can be hundreds of MB (snapshots). */
  streamReply?: true;
  /** A larger body limit for this route, in bytes (never below the server's maxBodyBytes). */
  maxBodyBytes?: number;
  /**
   * Reads a JSON body as it arrives instead of whole, answering the schema's verdict itself
   * (restore-body.ts: a snapshot too large for one string). Used where the state lives in the
   * server's own process, up to the server's `restoreMaxBodyBytes`; elsewhere the body is read
   * whole, up to `maxBodyBytes`.
   */
  streamBody?: (req: IncomingMessage, maxBytes: number, sha256: (text: string) => string) => Promise<StreamedBody>;
  handle(ctx: RouteContext, rootKey: string | undefined, input: I): Result<Reply>;
  /**
   * Writes `data` as JSON exactly as `JSON.stringify` would, faster, for the one shape this
   * route's handler answers (fields in the order the engine sets them); undefined: JSON.stringify.
   * For the hottest routes only, each held to JSON.stringify by a property test.
   */
  dataText?: (data: unknown) => string;
}

/** Keeps the input type of a route's schema and handler tied together. */
export function defineRoute<I>(route: Route<I>): Route {
  return route as unknown as Route;
}

/** Wraps an engine result as `data`. */
export function asData<T>(result: Result<T>): Result<Reply> {
  return result.ok ? { ok: true, value: { data: result.value } } : result;
}

/** Answers only `meta` (identities.deleteIdentity). */
export function asMetaOnly(result: Result<unknown>): Result<Reply> {
  return result.ok ? { ok: true, value: {} } : result;
}

export function failure(error: EngineError): { ok: false; error: EngineError } {
  return { ok: false, error };
}
