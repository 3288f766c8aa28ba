/**
 * Helpers for the official-SDK tests: a running simulator (simulator.ts), its /_sim/* admin surface over plain
 * fetch, an SDK client that fails fast, and a typed "rejects with" check.
 */
import { HTTPClient, Unkey } from '@unkey/api';
import type { Simulator } from '../../src/http/simulator.js';

export { startSimulator, useSimulator } from './simulator.js';

/** POST /_sim/<op> with a root key as bearer; throws unless the answer is 200. Returns `data`. */
export async function admin<T = unknown>(sim: Simulator, op: string, body: unknown = {}, rootKey: string = sim.rootKey): Promise<T> {
  const res = await fetch(`${sim.url}/_sim/${op}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${rootKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`/_sim/${op} answered ${res.status}: ${text}`);
  return (JSON.parse(text) as { data: T }).data;
}

/** Creates a root key in the start workspace with exactly these permissions. */
export async function rootKeyWith(sim: Simulator, permissions: string[]): Promise<string> {
  const { rootKey } = await admin<{ rootKey: string }>(sim, 'rootKeys.create', { permissions });
  return rootKey;
}

export interface SdkClient {
  unkey: Unkey;
  /** Every request the SDK put on the wire (method and path), retries included. */
  sent: string[];
}

/**
 * The official SDK pointed at the simulator. No retries and a short timeout, so that a failing
 * call fails at once instead of backing off for up to 10 s (the SDK's default for 5XX and
 * connection errors); `sent` lets a test see that each call went out exactly once.
 */
export function sdk(sim: Simulator, rootKey: string = sim.rootKey): SdkClient {
  const sent: string[] = [];
  const httpClient = new HTTPClient();
  httpClient.addHook('beforeRequest', (req) => {
    sent.push(`${req.method} ${new URL(req.url).pathname}`);
  });
  const unkey = new Unkey({ rootKey, serverURL: sim.url, httpClient, retryConfig: { strategy: 'none' }, timeoutMs: 5_000 });
  return { unkey, sent };
}

/** Awaits `promise`, expecting it to reject with an instance of `cls`; returns that error. */
export async function rejectsWith<E extends Error>(promise: Promise<unknown>, cls: abstract new (...args: never[]) => E): Promise<E> {
  let outcome: unknown;
  try {
    outcome = await promise;
  } catch (error) {
    if (error instanceof cls) return error;
    const shown = error instanceof Error ? `${error.constructor.name}: ${error.message}` : String(error);
    throw new Error(`expected ${cls.name}, got ${shown}`, { cause: error });
  }
  throw new Error(`expected ${cls.name}, but the call succeeded with ${JSON.stringify(outcome)}`);
}

/** Reads a v2 error body (for errors the SDK hands over untyped, as APIError). */
export function errorBody(body: string): { meta: { requestId: string }; error: { title: string; detail: string; status: number; type: string } } {
  return JSON.parse(body) as { meta: { requestId: string }; error: { title: string; detail: string; status: number; type: string } };
}
