/**
 * The messages between the engine owner (the primary of `--workers N`, cluster.ts) and its HTTP
 * workers (cluster-worker.ts), over node's IPC channel (JSON lines). Workers batch what they ask
 * per turn of their event loop, and the owner answers a batch with one message.
 */
import type { Problem } from './envelope.js';
import type { ServerOptions } from './server.js';

/** What a worker asks the owner; `id` is the worker's, to match the answer. */
export type WorkerCall =
  | { k: 'run'; id: number; route: string; token?: string; input?: unknown; rejection?: Problem; seq?: number }
  | { k: 'fault'; id: number; operation: string }
  | { k: 'operator'; id: number; token?: string }
  | { k: 'clock'; id: number };

/** A worker's settings: what a `ServerOptions` holds that can cross a process boundary. */
export type WorkerServerOptions = Pick<ServerOptions, 'maxBodyBytes' | 'errorsUrl' | 'validateResponses' | 'version'>;

export type WorkerMessage =
  | { k: 'batch'; calls: WorkerCall[] }
  | { k: 'ready' }
  /** The worker has taken a faults flag in (`n` from the owner's message). */
  | { k: 'ack'; n: number };

export type OwnerMessage =
  | { k: 'init'; workerId: number; options: WorkerServerOptions; allowedHosts: string[] | null; faultsActive: boolean }
  /** Answers of one batch: [id, value], or [id, null, error] when the call threw (a bug). */
  | { k: 'answers'; answers: Array<[number, unknown] | [number, null, string]> }
  /** Whether transport faults are on now; the worker acknowledges with `n`. */
  | { k: 'faults'; active: boolean; n: number }
  /** A connection to serve: the socket travels with the message. */
  | { k: 'connection' }
  /** Close the server and exit. */
  | { k: 'stop' };

/** How a route is named on the wire. */
export function routeKey(method: string, path: string): string {
  return `${method} ${path}`;
}
