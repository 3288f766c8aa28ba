/**
 * The transport: routing (404/405), content types, request ids, the OpenAPI document,
 * authentication, the two error shapes, and the programmatic API `createSimulator`.
 */
import net from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { type Simulator, createSimulator } from '../../src/http/index.js';
import { ROUTES } from '../../src/http/routes.js';
import { type Answer, call, expectV1Error, expectV2Error, isRecord, locationsOf, postJson, send } from '../helpers/http.js';

const START_MS = Date.parse('2028-02-28T23:59:59.999Z');

let sim: Simulator;
const logged: string[] = [];

beforeAll(async () => {
  sim = await createSimulator({ startMs: START_MS, seed: 5, validateResponses: true, log: (line) => logged.push(line) });
});
afterAll(() => sim.close());
beforeEach(() => {
  sim.reset();
  logged.length = 0;
});
// No test may make the shared simulator log an unexpected error (a bug that became a 500).
afterEach(() => {
  expect(logged).toEqual([]);
});

async function newKey(body: Record<string, unknown> = {}): Promise<{ apiId: string; keyId: string; key: string }> {
  const { apiId } = await call<{ apiId: string }>(sim, '/v2/apis.createApi', { name: 'server-test' });
  const created = await call<{ keyId: string; key: string }>(sim, '/v2/keys.createKey', { apiId, ...body });
  return { apiId, ...created };
}

function connectionRefused(port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
  });
}

describe('routing', () => {
  test('an unknown path → 404 with the error envelope (v2 shape outside /v1/, v1 shape under it)', async () => {
    for (const path of ['/v2/keys.nope', '/nope', '/', '/v2/keys.verifyKey/', '/V2/keys.verifyKey', '/_sim/nope']) {
      const answer = await postJson(sim.url, path, {}, sim.rootKey);
      const error = expectV2Error(answer, 404);
      expect(error.type).toMatch(/\/service\/application\/[a-z_]+$/);
    }
    expectV1Error(await send(sim.url, '/v1/identities.nope', { method: 'GET' }), 404);
  });

  test('GET (or PUT, DELETE) on a v2 path → 405 with Allow: POST and the envelope', async () => {
    for (const method of ['GET', 'PUT', 'DELETE', 'PATCH'] as const) {
      const answer = await send(sim.url, '/v2/keys.verifyKey', { method, headers: { authorization: `Bearer ${sim.rootKey}` } });
      expectV2Error(answer, 405);
      expect(answer.headers.allow).toBe('POST');
    }
    const getAdmin = await send(sim.url, '/_sim/clock.get', { method: 'GET' });
    expectV2Error(getAdmin, 405);
    expect(getAdmin.headers.allow).toBe('POST');
  });

  test('POST on a version 1 read → 405 with Allow: GET, in the v1 shape', async () => {
    const answer = await postJson(sim.url, '/v1/identities.getIdentity', {}, sim.rootKey);
    expectV1Error(answer, 405);
    expect(answer.headers.allow).toBe('GET');
  });

  test('a query string on a POST route is ignored by routing', async () => {
    const answer = await postJson(sim.url, '/v2/keys.verifyKey?trace=1', { key: 'sk_nothing' }, null);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ data: { valid: false, code: 'NOT_FOUND' } });
  });
});

describe('content types and bodies', () => {
  test('a non-JSON content type → 400 invalid_input naming header.content-type, even with a JSON body', async () => {
    for (const contentType of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml', 'text/json']) {
      const answer = await send(sim.url, '/v2/apis.createApi', {
        method: 'POST',
        headers: { 'content-type': contentType, authorization: `Bearer ${sim.rootKey}` },
        body: JSON.stringify({ name: 'x' }),
      });
      expectV2Error(answer, 400, 'application/invalid_input');
      expect(locationsOf(answer)).toContain('header.content-type');
    }
    const missing = await send(sim.url, '/v2/apis.createApi', { method: 'POST', headers: { authorization: `Bearer ${sim.rootKey}` }, body: '{"name":"x"}' });
    expectV2Error(missing, 400, 'application/invalid_input');
    expect(JSON.stringify(sim.engine.snapshot().apis)).toBe('[]');
  });

  test('application/json with parameters is JSON', async () => {
    const answer = await send(sim.url, '/v2/apis.createApi', {
      method: 'POST',
      headers: { 'content-type': 'application/json; charset=utf-8', authorization: `Bearer ${sim.rootKey}` },
      body: JSON.stringify({ name: 'x' }),
    });
    expect(answer.status).toBe(200);
  });

  test('invalid JSON → 400 with errors[] naming the body; an empty body on a v2 route too', async () => {
    for (const body of ['{', '{"name":', 'nope', '']) {
      const answer = await send(sim.url, '/v2/apis.createApi', {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${sim.rootKey}` },
        body,
      });
      const error = expectV2Error(answer, 400, 'application/invalid_input');
      expect(error.errors?.map((e) => e.location)).toEqual(['body']);
    }
  });

  test('every schema violation is listed with its location', async () => {
    const answer = await postJson(sim.url, '/v2/ratelimit.limit', { namespace: '', identifier: 3, limit: 0, extra: true }, sim.rootKey);
    expectV2Error(answer, 400, 'application/invalid_input');
    expect(locationsOf(answer).sort()).toEqual(['body.duration', 'body.extra', 'body.identifier', 'body.limit', 'body.namespace']);
  });
});

describe('request ids', () => {
  test('every answer carries x-request-id; v2 bodies repeat it in meta.requestId, v1 errors in error.requestId', async () => {
    const { key } = await newKey();
    const answers: Array<{ answer: Answer; in: 'meta' | 'v1' | 'none' }> = [
      { answer: await postJson(sim.url, '/v2/keys.verifyKey', { key }, null), in: 'meta' },
      { answer: await postJson(sim.url, '/v2/keys.getKey', { keyId: 'key_nope' }, sim.rootKey), in: 'meta' },
      { answer: await postJson(sim.url, '/v2/identities.deleteIdentity', { identity: 'nobody' }, sim.rootKey), in: 'meta' },
      { answer: await postJson(sim.url, '/nowhere', {}, null), in: 'meta' },
      { answer: await send(sim.url, '/v2/keys.getKey', { method: 'GET' }), in: 'meta' },
      { answer: await postJson(sim.url, '/v2/apis.createApi', { name: 'x' }, 'Basic abc'), in: 'meta' },
      {
        answer: await send(sim.url, '/v1/identities.getIdentity?externalId=nobody', { method: 'GET', headers: { authorization: `Bearer ${sim.rootKey}` } }),
        in: 'v1',
      },
      { answer: await send(sim.url, '/_sim/health', { method: 'GET' }), in: 'none' },
      { answer: await send(sim.url, '/openapi.json', { method: 'GET' }), in: 'none' },
    ];
    const ids = new Set<string>();
    for (const { answer, in: where } of answers) {
      const id = answer.headers['x-request-id'];
      expect(id, answer.text.slice(0, 200)).toMatch(/^req_[A-Za-z0-9]+$/);
      ids.add(id ?? '');
      if (where === 'meta') expect((answer.body as { meta?: { requestId?: unknown } }).meta?.requestId).toBe(id);
      if (where === 'v1') expect((answer.body as { error?: { requestId?: unknown } }).error?.requestId).toBe(id);
    }
    expect(ids.size).toBe(answers.length);
  });

  test('a request whose headers exceed the parser limit still gets an error answer with a request id, and the server goes on', async () => {
    const cases = [
      { path: `/v1/identities.getIdentity?externalId=${'a'.repeat(20_000)}`, method: 'GET' as const, headers: { authorization: `Bearer ${sim.rootKey}` } },
      { path: '/v2/apis.createApi', method: 'POST' as const, headers: { authorization: `Bearer ${'k'.repeat(20_000)}`, 'content-type': 'application/json' } },
    ];
    for (const c of cases) {
      const answer = await send(sim.url, c.path, { method: c.method, headers: c.headers, ...(c.method === 'POST' ? { body: '{"name":"x"}' } : {}) });
      expect([400, 414, 431]).toContain(answer.status);
      expect(answer.headers['x-request-id'], `no request id on a ${answer.status}`).toMatch(/^req_/);
      expect(isRecord(answer.body), `no error envelope on a ${answer.status}: ${JSON.stringify(answer.text)}`).toBe(true);
    }
    expect((await send(sim.url, '/_sim/health', { method: 'GET' })).status).toBe(200);
  });
});

describe('the OpenAPI document', () => {
  test('GET /openapi.json is OpenAPI 3.1.0 JSON listing every route with its method, and nothing else', async () => {
    const answer = await send(sim.url, '/openapi.json', { method: 'GET' });
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toMatch(/^application\/json/);
    const doc = JSON.parse(answer.text) as { openapi: string; info: { title: string; version: string }; paths: Record<string, Record<string, unknown>> };
    expect(doc.openapi).toBe('3.1.0');
    expect(typeof doc.info.version).toBe('string');
    const listed = Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((method) => `${method.toUpperCase()} ${path}`));
    expect(listed.sort()).toEqual(ROUTES.map((r) => `${r.method} ${r.path}`).sort());
    for (const route of ROUTES) {
      const op = doc.paths[route.path]?.[route.method.toLowerCase()] as
        { responses?: Record<string, unknown>; requestBody?: unknown; parameters?: unknown } | undefined;
      expect(op?.responses?.['200'], route.path).toBeDefined();
      if (route.input === 'body') expect(op?.requestBody, route.path).toBeDefined();
      else expect(op?.parameters, route.path).toBeDefined();
    }
  });
});

describe('authentication (docs/service-model.md#authentication-and-permissions)', () => {
  test('keys.verifyKey works without Authorization', async () => {
    const { key } = await newKey({ credits: { remaining: 2 } });
    const answer = await postJson(sim.url, '/v2/keys.verifyKey', { key }, null);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ data: { valid: true, code: 'VALID', credits: 1 } });
    expect((await postJson(sim.url, '/v2/keys.verifyKey', { key: 'sk_unknown' }, null)).body).toMatchObject({ data: { valid: false, code: 'NOT_FOUND' } });
  });

  test('a malformed Authorization header → 400 …/authentication/malformed, on management operations and on verifyKey', async () => {
    const { apiId, key } = await newKey();
    const before = JSON.stringify(sim.engine.snapshot());
    for (const header of ['Basic dXNlcjpwYXNz', 'Bearer', 'Token abc', 'Bearer a b', sim.rootKey]) {
      const manage = await send(sim.url, '/v2/keys.createKey', {
        method: 'POST',
        headers: { authorization: header, 'content-type': 'application/json' },
        body: JSON.stringify({ apiId }),
      });
      expectV2Error(manage, 400, 'authentication/malformed');
      const verify = await send(sim.url, '/v2/keys.verifyKey', {
        method: 'POST',
        headers: { authorization: header, 'content-type': 'application/json' },
        body: JSON.stringify({ key }),
      });
      expectV2Error(verify, 400, 'authentication/malformed');
    }
    expect(JSON.stringify(sim.engine.snapshot())).toBe(before);
  });

  test('a missing Authorization header on a management operation → 400 …/authentication/missing', async () => {
    const { apiId, keyId } = await newKey();
    expectV2Error(await postJson(sim.url, '/v2/keys.createKey', { apiId }, null), 400, 'authentication/missing');
    expectV2Error(await postJson(sim.url, '/v2/keys.getKey', { keyId }, null), 400, 'authentication/missing');
    expectV2Error(await postJson(sim.url, '/v2/apis.createApi', { name: 'x' }, null), 400, 'authentication/missing');
    expectV2Error(await postJson(sim.url, '/_sim/clock.get', {}, null), 400, 'authentication/missing');
  });

  test('an unknown root key → 401 …/authentication/key_not_found', async () => {
    const { apiId, key } = await newKey();
    expectV2Error(await postJson(sim.url, '/v2/keys.createKey', { apiId }, 'root_not_a_real_key_000'), 401, 'authentication/key_not_found');
    expectV2Error(await postJson(sim.url, '/v2/apis.createApi', { name: 'x' }, 'root_not_a_real_key_000'), 401, 'authentication/key_not_found');
    // verifyKey: a root key, if sent, must be valid.
    expectV2Error(await postJson(sim.url, '/v2/keys.verifyKey', { key }, 'root_not_a_real_key_000'), 401, 'authentication/key_not_found');
  });

  test('a root key without the permission → 403 on management, NOT_FOUND on verifyKey; another workspace sees nothing', async () => {
    const { apiId, keyId, key } = await newKey();
    const { rootKey: reader } = await call<{ rootKey: string }>(sim, '/_sim/rootKeys.create', { permissions: ['api.*.read_key'] });
    expect(await call(sim, '/v2/keys.getKey', { keyId }, reader)).toMatchObject({ keyId });
    expectV2Error(await postJson(sim.url, '/v2/keys.createKey', { apiId }, reader), 403, 'authorization/insufficient_permissions');
    expect((await postJson(sim.url, '/v2/keys.verifyKey', { key }, reader)).body).toMatchObject({ data: { valid: false, code: 'NOT_FOUND' } });

    const { rootKey: foreign } = await call<{ rootKey: string }>(sim, '/_sim/workspaces.create', { name: 'other' });
    expectV2Error(await postJson(sim.url, '/v2/keys.getKey', { keyId }, foreign), 404, 'data/key_not_found');
    expect((await postJson(sim.url, '/v2/keys.verifyKey', { key }, foreign)).body).toEqual(
      expect.objectContaining({ data: { valid: false, code: 'NOT_FOUND' } }),
    );
  });
});

describe('version 1 errors are unstructured', () => {
  test('{ error: { code, message, requestId } } with no meta, no title, no type', async () => {
    const notFound = await send(sim.url, '/v1/identities.getIdentity?identityId=id_nope', {
      method: 'GET',
      headers: { authorization: `Bearer ${sim.rootKey}` },
    });
    expect(expectV1Error(notFound, 404).code).toBe('NOT_FOUND');
    expect(expectV1Error(await send(sim.url, '/v1/identities.getIdentity?externalId=x', { method: 'GET' }), 400).code).toBe('BAD_REQUEST');
    expect(expectV1Error(await postJson(sim.url, '/v1/identities.createIdentity', { externalId: 'a' }, 'root_not_a_real_key_000'), 401).code).toBe(
      'UNAUTHORIZED',
    );
    expect(expectV1Error(await postJson(sim.url, '/v1/identities.createIdentity', { externalId: 'a b' }, sim.rootKey), 400).code).toBe('BAD_REQUEST');
    await call(sim, '/v1/identities.createIdentity', { externalId: 'dup' });
    expect(expectV1Error(await postJson(sim.url, '/v1/identities.createIdentity', { externalId: 'dup' }, sim.rootKey), 409).code).toBe('CONFLICT');
  });

  test('v1 success answers have no envelope, and share the state with v2', async () => {
    const created = await postJson(sim.url, '/v1/identities.createIdentity', { externalId: 'shared_1', meta: { a: 1 } }, sim.rootKey);
    expect(created.status).toBe(200);
    const { identityId } = created.body as { identityId: string };
    expect(identityId).toMatch(/^id_/);
    expect(await call(sim, '/v2/identities.getIdentity', { identity: 'shared_1' })).toMatchObject({ id: identityId, meta: { a: 1 } });
    const read = await send(sim.url, `/v1/identities.getIdentity?identityId=${identityId}`, {
      method: 'GET',
      headers: { authorization: `Bearer ${sim.rootKey}` },
    });
    expect(read.body).toEqual({ id: identityId, externalId: 'shared_1', meta: { a: 1 }, ratelimits: [] });
  });
});

describe('the programmatic API: createSimulator', () => {
  test('url, rootKey, workspaceId, clock, engine, reset() work as documented', async () => {
    const own = await createSimulator({ startMs: START_MS, rootKey: 'root_programmatic_1234', seed: 9, errorsUrl: 'https://errors.example/x' });
    try {
      expect(own.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(own.rootKey).toBe('root_programmatic_1234');
      expect(own.workspaceId).toMatch(/^ws_/);
      expect(own.engine.snapshot().workspaces.map((w) => w.id)).toEqual([own.workspaceId]);

      // The root key works over HTTP; errorsUrl shapes the error type.
      const { apiId } = await call<{ apiId: string }>(own, '/v2/apis.createApi', { name: 'p' });
      const missing = await postJson(own.url, '/v2/keys.getKey', { keyId: 'key_nope' }, own.rootKey);
      expect(expectV2Error(missing, 404).type).toBe('https://errors.example/x/service/data/key_not_found');

      // The clock object is the service clock.
      expect(own.clock.now()).toBe(START_MS);
      own.clock.advance(1);
      expect(await call(own, '/_sim/clock.get', {})).toMatchObject({ iso: '2028-02-29T00:00:00.000Z' });

      // The engine is the one behind the server.
      const direct = own.engine.keys.createKey(own.rootKey, { apiId, credits: { remaining: 1 } });
      if (!direct.ok) throw new Error(direct.error.detail);
      expect(await call(own, '/v2/keys.verifyKey', { key: direct.value.key })).toMatchObject({ valid: true, credits: 0 });

      // reset(): start state, same root key, clock at its start.
      own.reset();
      expect(own.clock.now()).toBe(START_MS);
      expect(own.engine.snapshot().apis).toEqual([]);
      expect(await call(own, '/_sim/clock.get', {})).toMatchObject({ nowMs: START_MS });
      expectV2Error(await postJson(own.url, '/v2/keys.createKey', { apiId }, own.rootKey), 404, 'data/api_not_found');
    } finally {
      await own.close();
    }
  });

  test('the same seed gives the same ids and keys', async () => {
    const make = async () => {
      const s = await createSimulator({ startMs: START_MS, seed: 1234 });
      try {
        const { apiId } = await call<{ apiId: string }>(s, '/v2/apis.createApi', { name: 'a' });
        const key = await call<{ keyId: string; key: string }>(s, '/v2/keys.createKey', { apiId });
        return { rootKey: s.rootKey, apiId, ...key };
      } finally {
        await s.close();
      }
    };
    expect(await make()).toEqual(await make());
  });

  test('after close() the port refuses connections, even with a keep-alive connection open before', async () => {
    const own = await createSimulator({ startMs: START_MS });
    const port = Number(new URL(own.url).port);
    expect((await send(own.url, '/_sim/health', { method: 'GET' })).status).toBe(200);
    expect(await connectionRefused(port)).toBe('connected');
    const started = Date.now();
    await own.close();
    expect(Date.now() - started).toBeLessThan(2000);
    expect(await connectionRefused(port)).toBe('ECONNREFUSED');
    await expect(send(own.url, '/_sim/health', { method: 'GET' })).rejects.toThrow();
  });
});
