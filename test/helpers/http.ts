/**
 * Request helpers for the HTTP-layer tests: raw requests over real sockets (undici), JSON calls
 * with a root key, and the checks of the two error shapes (v2 envelope, v1 unstructured).
 */
import { type Dispatcher, request } from 'undici';
import { expect } from 'vitest';

/** An answer as the wire showed it; `body` is the parsed JSON, or undefined when it is not JSON. */
export interface Answer {
  status: number;
  headers: Record<string, string>;
  text: string;
  body: unknown;
}

export interface RawRequest {
  method?: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH' | 'HEAD' | 'OPTIONS';
  headers?: Record<string, string>;
  body?: string | Uint8Array;
  dispatcher?: Dispatcher;
}

/** Sends one request and reads the whole answer. */
export async function send(baseUrl: string, path: string, options: RawRequest = {}): Promise<Answer> {
  const response = await request(`${baseUrl}${path}`, {
    method: options.method ?? 'POST',
    headers: options.headers ?? {},
    ...(options.body === undefined ? {} : { body: options.body }),
    ...(options.dispatcher === undefined ? {} : { dispatcher: options.dispatcher }),
  });
  const text = await response.body.text();
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(response.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  let body: unknown;
  try {
    body = text === '' ? undefined : (JSON.parse(text) as unknown);
  } catch {
    body = undefined;
  }
  return { status: response.statusCode, headers, text, body };
}

/**
 * POSTs `body` as JSON. `rootKey`: a string is sent as `Bearer <rootKey>`; null sends no
 * Authorization header.
 */
export function postJson(baseUrl: string, path: string, body: unknown, rootKey: string | null, dispatcher?: Dispatcher): Promise<Answer> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (rootKey !== null) headers.authorization = `Bearer ${rootKey}`;
  return send(baseUrl, path, { method: 'POST', headers, body: JSON.stringify(body), ...(dispatcher === undefined ? {} : { dispatcher }) });
}

/** What a caller needs to talk to a simulator. */
export interface Target {
  url: string;
  rootKey: string;
}

/** POSTs with the target's root key and returns `data`; throws with the answer when it is not 200. */
export async function call<T = Record<string, unknown>>(target: Target, path: string, body: unknown, rootKey: string = target.rootKey): Promise<T> {
  const answer = await postJson(target.url, path, body, rootKey);
  if (answer.status !== 200) throw new Error(`${path} answered ${answer.status}: ${answer.text.slice(0, 500)}`);
  return (answer.body as { data: T }).data;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Status → title of the error catalogue (docs/errors.md#catalogue), plus the transport's own 404/405. */
export const TITLES: Readonly<Record<number, string>> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Insufficient Permissions',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflicting Resource',
  410: 'Resource Gone',
  412: 'Precondition Failed',
  413: 'Request Entity Too Large',
  429: 'Too Many Requests',
};

/** Status → the upper-case code of a version 1 error. */
export const V1_CODES: Readonly<Record<number, string>> = {
  400: 'BAD_REQUEST',
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  409: 'CONFLICT',
  410: 'GONE',
  412: 'PRECONDITION_FAILED',
  413: 'PAYLOAD_TOO_LARGE',
};

export interface V2Error {
  title: string;
  detail: string;
  status: number;
  type: string;
  errors?: Array<{ location: string; message: string; fix?: string }>;
}

/**
 * Checks the v2 error envelope (docs/errors.md#envelope) and returns its `error`. `typeSuffix` is the
 * end of the `type` URL, e.g. `authentication/malformed`. `problemJson`: the route sends its
 * errors as `application/problem+json` (429 always is).
 */
export function expectV2Error(answer: Answer, status: number, typeSuffix?: string, options: { problemJson?: boolean } = {}): V2Error {
  const context = `${answer.status} ${answer.text.slice(0, 300)}`;
  expect(answer.status, context).toBe(status);
  expect(answer.headers['content-type'], context).toBe(status === 429 || options.problemJson === true ? 'application/problem+json' : 'application/json');
  expect(isRecord(answer.body), context).toBe(true);
  const body = answer.body as Record<string, unknown>;
  expect(Object.keys(body).sort(), context).toEqual(['error', 'meta']);
  const meta = body.meta as Record<string, unknown>;
  expect(meta.requestId, context).toMatch(/^req_/);
  expect(answer.headers['x-request-id'], context).toBe(meta.requestId);
  const error = body.error as Record<string, unknown>;
  expect(error.status, context).toBe(status);
  const title = TITLES[status];
  if (title !== undefined) expect(error.title, context).toBe(title);
  expect(typeof error.detail, context).toBe('string');
  expect((error.detail as string).length, context).toBeGreaterThan(0);
  expect(error.type, context).toMatch(/^https?:\/\/.+\/service\/[a-z_]+\/[a-z_]+$/);
  if (typeSuffix !== undefined)
    expect((error.type as string).endsWith(`/${typeSuffix}`), `type ${String(error.type)} should end with /${typeSuffix}`).toBe(true);
  if (status === 400) {
    expect(Array.isArray(error.errors), `400 without errors[]: ${context}`).toBe(true);
  }
  if (error.errors !== undefined) {
    expect(Array.isArray(error.errors), context).toBe(true);
    for (const entry of error.errors as unknown[]) {
      expect(isRecord(entry), context).toBe(true);
      const e = entry as Record<string, unknown>;
      expect(typeof e.location, context).toBe('string');
      expect(typeof e.message, context).toBe('string');
    }
  }
  return error as unknown as V2Error;
}

/** Checks the version 1 error shape `{ error: { code, message, requestId } }` and returns it. */
export function expectV1Error(answer: Answer, status: number): { code: string; message: string; requestId: string } {
  const context = `${answer.status} ${answer.text.slice(0, 300)}`;
  expect(answer.status, context).toBe(status);
  expect(answer.headers['content-type'], context).toBe('application/json');
  expect(isRecord(answer.body), context).toBe(true);
  const body = answer.body as Record<string, unknown>;
  expect(Object.keys(body), context).toEqual(['error']);
  const error = body.error as Record<string, unknown>;
  expect(Object.keys(error).sort(), context).toEqual(['code', 'message', 'requestId']);
  const code = V1_CODES[status];
  if (code !== undefined) expect(error.code, context).toBe(code);
  expect(typeof error.message, context).toBe('string');
  expect(error.requestId, context).toMatch(/^req_/);
  expect(answer.headers['x-request-id'], context).toBe(error.requestId);
  return error as { code: string; message: string; requestId: string };
}

/** The `errors[].location` values of a v2 error answer. */
export function locationsOf(answer: Answer): string[] {
  const error = (answer.body as { error?: { errors?: Array<{ location?: unknown }> } } | undefined)?.error;
  return (error?.errors ?? []).map((e) => String(e.location));
}
