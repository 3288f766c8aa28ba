/**
 * A request of the open model, from the plan to its end: what the executor is handed
 * (PlannedRequest) and what it keeps while the request waits, flies and is answered (Pending).
 */
import type { Http1Connection } from '../http1/index.js';
import type { ParsedResponse } from '../http1/index.js';
import type { ApiResponse, RequestSpec } from '../scenario/index.js';

/** What the executor needs per request: the request and how to check its answer. */
export interface PlannedRequest {
  /** The API operation (`keys.verifyKey`): figures are kept per operation. */
  operation: string;
  /** The mix entry's name, for check-failure messages. */
  label: string;
  spec: RequestSpec;
  check: ((response: ApiResponse) => string | undefined) | undefined;
}

/** One planned request, from its intended time to its end. */
export interface Pending {
  intendedMs: number;
  request: PlannedRequest;
  /** The generator queued it more than the late threshold after its intended time. */
  late: boolean;
  /** Set when a connection takes it (a request dropped from the queue is never serialised). */
  sentMs: number;
  seq: number | undefined;
  serviceInvokeMs: number | undefined;
  /** The phase it belongs to (the connections outlive phases). */
  run: PhaseRun;
  /** The connection it was sent on. */
  connection: Http1Connection<Pending> | undefined;
}

/** What a running phase does with its requests' ends. */
export interface PhaseRun {
  answered(pending: Pending, response: ParsedResponse): void;
  failed(pending: Pending, error: Error): void;
}
