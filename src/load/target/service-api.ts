/**
 * The target's public API and the simulator's admin surface over keysim's own HTTP/1.1 client
 * (http1/client.ts), for fixtures and checks (the measured load goes through open-model.ts /
 * closed-model.ts instead). Error messages name the operation and the service's detail — never
 * the root key. An answer that is not the service's (service-answer.ts: a proxy's HTML page, JSON
 * without the envelope, a body that does not decode) raises NotServiceAnswerError naming its
 * status, content type and first bytes.
 */
import { type ClientAnswer, Http1Client } from '../http1/index.js';
import { decodeBody, serviceJsonOf } from '../http1/index.js';
import { styleOfPath } from '../answers/index.js';
import type { ApiResponse, Operation, ServiceApi, SimulatorAdmin } from '../scenario/index.js';

export interface TargetCredentials {
  /** Base URL without credentials, e.g. http://127.0.0.1:8787. */
  url: string;
  rootKey: string;
  /** PEM certificates of the CA(s) that signed an https target's certificate (--ca). */
  ca?: string | undefined;
}

/**
 * Calls that change nothing, so that sending one twice cannot harm: retried once on a new
 * connection when theirs broke. Everything else may have spent credits or created something.
 */
export function isReadPath(path: string): boolean {
  return /\.(get|list)[A-Z][A-Za-z]*$/.test(path) || path === '/_sim/clock.get' || path === '/_sim/health';
}

/** A failed fixture or admin call: what was called and what the service said. */
export class ServiceCallError extends Error {
  constructor(
    readonly path: string,
    readonly status: number,
    detail: string,
  ) {
    super(`${path} answered ${status}: ${detail}`);
    this.name = 'ServiceCallError';
  }
}

export function detailOf(body: unknown): string {
  if (typeof body === 'object' && body !== null && 'error' in body) {
    const error = (body as { error: unknown }).error;
    if (typeof error === 'object' && error !== null) {
      const e = error as { detail?: unknown; message?: unknown };
      if (typeof e.detail === 'string') return e.detail;
      if (typeof e.message === 'string') return e.message;
    }
  }
  return JSON.stringify(body)?.slice(0, 300) ?? 'no body';
}

export interface HttpJsonClient {
  /** `headers`: extra request headers (e.g. the history's `x-keysim-seq`). */
  post(path: string, body: unknown, auth: 'root' | 'none', headers?: Record<string, string>): Promise<ApiResponse>;
  /** The same call, its answer as received (body decoded, not parsed): the pre-flight check judges it. */
  exchange(path: string, body: unknown, auth: 'root' | 'none'): Promise<ClientAnswer>;
  close(): Promise<void>;
}

/**
 * The body limit of the set-up client: the simulator's admin surface answers whole snapshots
 * (the oracle's journal start, cleanup's search), far larger than any answer of the service.
 */
export const ADMIN_MAX_BODY_BYTES = 512 * 1024 * 1024;

export function httpJsonClient(target: TargetCredentials, timeoutMs = 30_000): HttpJsonClient {
  const client = new Http1Client(target.url, { timeoutMs, ca: target.ca, maxBodyBytes: ADMIN_MAX_BODY_BYTES });
  const exchange = async (path: string, body: unknown, auth: 'root' | 'none', extraHeaders?: Record<string, string>): Promise<ClientAnswer> => {
    const headers: Record<string, string> = { ...extraHeaders };
    if (auth === 'root') headers.authorization = `Bearer ${target.rootKey}`;
    const res = await client.request({ method: 'POST', path, headers, body: JSON.stringify(body), retry: isReadPath(path) });
    // Decoded within the same limit as the raw body: a compressed snapshot may be as large as a plain one.
    return res.contentEncoding === undefined
      ? res
      : { ...res, body: decodeBody(res.status, res.contentType, res.contentEncoding, res.body, ADMIN_MAX_BODY_BYTES), contentEncoding: undefined };
  };
  return {
    async post(path, body, auth, extraHeaders) {
      const res = await exchange(path, body, auth, extraHeaders);
      try {
        const answer = { status: res.status, body: serviceJsonOf(res.status, res.contentType, res.body, styleOfPath(path)) };
        return res.region === undefined ? answer : { ...answer, region: res.region };
      } catch (error) {
        if (error instanceof Error) error.message = `${path}: ${error.message}`;
        throw error;
      }
    },
    exchange: (path, body, auth) => exchange(path, body, auth),
    close: () => client.close(),
  };
}

export function serviceApi(client: HttpJsonClient): ServiceApi {
  return serviceApiFrom((op, body, options) => client.post(`/v2/${op}`, body, options?.auth ?? 'root', options?.headers));
}

/**
 * A ServiceApi around one way of calling: `data` answers a 200's data or throws. The wrappers that
 * record (a history) or track (the resource ledger) each give their own `call` and share this.
 */
export function serviceApiFrom(call: ServiceApi['call']): ServiceApi {
  return {
    call,
    async data<T>(op: Operation, body: unknown): Promise<T> {
      const res = await call(op, body);
      if (res.status !== 200) throw new ServiceCallError(`/v2/${op}`, res.status, detailOf(res.body));
      return (res.body as { data: T }).data;
    },
  };
}

export function simulatorAdmin(client: HttpJsonClient): SimulatorAdmin {
  const call = async <T>(op: string, body: unknown): Promise<T> => {
    const res = await client.post(`/_sim/${op}`, body, 'root');
    if (res.status !== 200) throw new ServiceCallError(`/_sim/${op}`, res.status, detailOf(res.body));
    return (res.body as { data: T }).data;
  };
  return {
    clockNow: async () => (await call<{ nowMs: number }>('clock.get', {})).nowMs,
    clockMode: async () => ((await call<{ mode: string }>('clock.get', {})).mode === 'system' ? 'system' : 'manual'),
    clockSet: async (to) => (await call<{ nowMs: number }>('clock.set', { to })).nowMs,
    clockAdvance: async (byMs) => (await call<{ nowMs: number }>('clock.advance', { byMs })).nowMs,
    createNamespace: async (name) => (await call<{ namespaceId: string }>('namespaces.create', { name })).namespaceId,
    deleteNamespace: async (name) => {
      await call('namespaces.delete', { namespace: name });
    },
  };
}
