/**
 * Version 1 of the identity operations (docs/service-model.md#version-1). It
 * exists only over HTTP: reads are GET with query parameters, answers are direct objects (no
 * envelope), lists are `{ identities, cursor?, total }`, errors are unstructured
 * `{ error: { code, message, requestId } }`, and the state is shared with version 2.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { useSimulator } from '../helpers/simulator.js';
import { type ServiceClient, httpClient } from '../helpers/service-client.js';
import { CONTRACT_START_MS } from './contract.js';

const MINUTE = 60_000;

const sim = useSimulator({ startMs: CONTRACT_START_MS, seed: 1 });
let v2: ServiceClient;

beforeEach(() => {
  v2 = httpClient(sim());
});

interface V1Answer {
  status: number;
  body: Record<string, unknown>;
}

/** One v1 call: POST with a JSON body, or GET with query parameters. Checks it is JSON without a v2 envelope. */
async function v1(
  method: 'GET' | 'POST',
  op: string,
  input: Record<string, string | number | unknown>,
  rootKey: string | null = sim().rootKey,
): Promise<V1Answer> {
  const headers: Record<string, string> = {};
  if (rootKey !== null) headers.authorization = `Bearer ${rootKey}`;
  let url = `${sim().url}/v1/identities.${op}`;
  let body: string | undefined;
  if (method === 'GET') {
    const query = new URLSearchParams(Object.entries(input).map(([k, v]): [string, string] => [k, String(v)]));
    if ([...query.keys()].length > 0) url += `?${query.toString()}`;
  } else {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(input);
  }
  const res = await fetch(url, body === undefined ? { method, headers } : { method, headers, body });
  expect(res.headers.get('content-type') ?? '').toMatch(/^application\/json/);
  const parsed = (await res.json()) as Record<string, unknown>;
  expect(typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)).toBe(true);
  // Version 1 has no envelope: no meta.requestId and no data wrapper (an identity's own meta is its metadata).
  expect(parsed).not.toHaveProperty('meta.requestId');
  expect(parsed).not.toHaveProperty('data');
  return { status: res.status, body: parsed };
}

/** The body of a 200 answer. */
function ok(answer: V1Answer): Record<string, unknown> {
  if (answer.status !== 200) throw new Error(`expected 200, got ${answer.status}: ${JSON.stringify(answer.body)}`);
  return answer.body;
}

/** Asserts an unstructured v1 error with this status and code. */
function expectV1Error(answer: V1Answer, status: number, code: string): void {
  expect({ status: answer.status, code: (answer.body.error as { code?: unknown } | undefined)?.code }).toEqual({ status, code });
  expect(Object.keys(answer.body)).toEqual(['error']);
  const error = answer.body.error as Record<string, unknown>;
  expect(Object.keys(error).sort()).toEqual(['code', 'message', 'requestId']);
  expect(error.message).toEqual(expect.any(String));
  expect((error.message as string).length).toBeGreaterThan(0);
  expect(error.requestId).toMatch(/^req_/);
}

describe('version 1 identity endpoints', () => {
  it('createIdentity answers { identityId } at the top level', async () => {
    const body = ok(
      await v1('POST', 'createIdentity', { externalId: 'v1-user', meta: { plan: 'pro' }, ratelimits: [{ name: 'req', limit: 10, duration: MINUTE }] }),
    );
    expect(body).toEqual({ identityId: expect.stringMatching(/^id_/) });
  });

  it('getIdentity is a GET by ?identityId= or ?externalId=, answering the identity directly, rate limits without ids', async () => {
    const { identityId } = ok(
      await v1('POST', 'createIdentity', { externalId: 'v1-user', meta: { plan: 'pro' }, ratelimits: [{ name: 'req', limit: 10, duration: MINUTE }] }),
    ) as {
      identityId: string;
    };
    const expected = { id: identityId, externalId: 'v1-user', meta: { plan: 'pro' }, ratelimits: [{ name: 'req', limit: 10, duration: MINUTE }] };
    expect(ok(await v1('GET', 'getIdentity', { identityId }))).toEqual(expected);
    expect(ok(await v1('GET', 'getIdentity', { externalId: 'v1-user' }))).toEqual(expected);
    // meta and ratelimits are always shown in version 1.
    const bare = ok(await v1('POST', 'createIdentity', { externalId: 'bare' })) as { identityId: string };
    expect(ok(await v1('GET', 'getIdentity', { externalId: 'bare' }))).toEqual({ id: bare.identityId, externalId: 'bare', meta: {}, ratelimits: [] });
  });

  it('listIdentities is a GET answering { identities, cursor?, total }; the cursor disappears on the last page', async () => {
    const created: string[] = [];
    for (let i = 0; i < 5; i++) created.push((ok(await v1('POST', 'createIdentity', { externalId: `person-${i}` })) as { identityId: string }).identityId);
    const seen: string[] = [];
    const cursors: boolean[] = [];
    let cursor: string | undefined;
    for (let guard = 0; guard < 10; guard++) {
      const page = ok(await v1('GET', 'listIdentities', cursor === undefined ? { limit: 2 } : { limit: 2, cursor }));
      expect(Object.keys(page).sort()).toEqual('cursor' in page ? ['cursor', 'identities', 'total'] : ['identities', 'total']);
      expect(page.total).toBe(5);
      const identities = page.identities as Array<{ id: string; externalId: string; meta: unknown; ratelimits: unknown }>;
      expect(identities.length).toBeLessThanOrEqual(2);
      for (const identity of identities) expect(identity).toEqual({ id: expect.any(String), externalId: expect.any(String), meta: {}, ratelimits: [] });
      seen.push(...identities.map((i) => i.id));
      cursor = typeof page.cursor === 'string' ? page.cursor : undefined;
      cursors.push(cursor !== undefined);
      if (cursor === undefined) {
        expect(page).not.toHaveProperty('cursor');
        break;
      }
    }
    expect(cursors).toEqual([true, true, false]);
    expect(seen).toEqual([...created].sort());
  });

  it('updateIdentity by identityId or by externalId answers the identity', async () => {
    const { identityId } = ok(await v1('POST', 'createIdentity', { externalId: 'changing', meta: { a: 1 } })) as { identityId: string };
    expect(ok(await v1('POST', 'updateIdentity', { identityId, meta: { b: 2 } }))).toEqual({
      id: identityId,
      externalId: 'changing',
      meta: { b: 2 },
      ratelimits: [],
    });
    expect(ok(await v1('POST', 'updateIdentity', { externalId: 'changing', ratelimits: [{ name: 'r', limit: 3, duration: MINUTE }] }))).toEqual({
      id: identityId,
      externalId: 'changing',
      meta: { b: 2 },
      ratelimits: [{ name: 'r', limit: 3, duration: MINUTE }],
    });
  });

  it('deleteIdentity by identityId answers {}; the identity is gone afterwards', async () => {
    const { identityId } = ok(await v1('POST', 'createIdentity', { externalId: 'leaving' })) as { identityId: string };
    expect(ok(await v1('POST', 'deleteIdentity', { identityId }))).toEqual({});
    expectV1Error(await v1('GET', 'getIdentity', { identityId }), 404, 'NOT_FOUND');
    expectV1Error(await v1('POST', 'deleteIdentity', { identityId }), 404, 'NOT_FOUND');
  });

  it('errors are unstructured { error: { code, message, requestId } }', async () => {
    expectV1Error(await v1('GET', 'getIdentity', { identityId: 'id_doesNotExist' }), 404, 'NOT_FOUND');
    expectV1Error(await v1('GET', 'getIdentity', { externalId: 'nobody' }), 404, 'NOT_FOUND');
    expectV1Error(await v1('POST', 'updateIdentity', { externalId: 'nobody', meta: {} }), 404, 'NOT_FOUND');
    ok(await v1('POST', 'createIdentity', { externalId: 'taken' }));
    expectV1Error(await v1('POST', 'createIdentity', { externalId: 'taken' }), 409, 'CONFLICT');
    expectV1Error(await v1('POST', 'createIdentity', { externalId: 'not allowed spaces' }), 400, 'BAD_REQUEST');
    expectV1Error(await v1('GET', 'getIdentity', {}), 400, 'BAD_REQUEST');
    expectV1Error(await v1('GET', 'listIdentities', { limit: 0 }), 400, 'BAD_REQUEST');
    expectV1Error(await v1('GET', 'listIdentities', { limit: 'ten' }), 400, 'BAD_REQUEST');
    expectV1Error(await v1('GET', 'getIdentity', { externalId: 'taken' }, 'root_unknown_0000000000'), 401, 'UNAUTHORIZED');
    const missing = await v1('GET', 'getIdentity', { externalId: 'taken' }, null);
    expect([400, 401]).toContain(missing.status);
    expectV1Error(missing, missing.status, missing.status === 400 ? 'BAD_REQUEST' : 'UNAUTHORIZED');
    const reader = await v2.createRootKey(['api.*.read_key']);
    const forbidden = await v1('GET', 'getIdentity', { externalId: 'taken' }, reader);
    expect(forbidden.status).toBe(403);
    expectV1Error(forbidden, 403, (forbidden.body.error as { code: string }).code);
    expect((forbidden.body.error as { code: string }).code).toMatch(/^[A-Z_]+$/);
  });

  it('shares state with version 2: v1 → v2', async () => {
    const { identityId } = ok(
      await v1('POST', 'createIdentity', { externalId: 'from-v1', meta: { v: 1 }, ratelimits: [{ name: 'req', limit: 5, duration: MINUTE }] }),
    ) as {
      identityId: string;
    };
    const seen = await v2.identities.getIdentity(v2.rootKey, { identity: 'from-v1' });
    expect(seen.ok && seen.data).toEqual({
      id: identityId,
      externalId: 'from-v1',
      meta: { v: 1 },
      ratelimits: [{ id: expect.stringMatching(/^rl_/), name: 'req', limit: 5, duration: MINUTE, autoApply: false }],
    });
    // One externalId namespace for both versions.
    const dup = await v2.identities.createIdentity(v2.rootKey, { externalId: 'from-v1' });
    expect(dup.ok ? 'success' : dup.code).toBe('err:service:data:identity_already_exists');
    ok(await v1('POST', 'updateIdentity', { identityId, meta: { v: 2 } }));
    const updated = await v2.identities.getIdentity(v2.rootKey, { identity: identityId });
    expect(updated.ok && updated.data.meta).toEqual({ v: 2 });
    ok(await v1('POST', 'deleteIdentity', { identityId }));
    const gone = await v2.identities.getIdentity(v2.rootKey, { identity: identityId });
    expect(gone.ok ? 'success' : gone.code).toBe('err:service:data:identity_not_found');
  });

  it('shares state with version 2: v2 → v1', async () => {
    const created = await v2.identities.createIdentity(v2.rootKey, { externalId: 'from-v2', ratelimits: [{ name: 'req', limit: 5, duration: MINUTE }] });
    if (!created.ok) throw new Error(created.detail);
    const { identityId } = created.data;
    expect(ok(await v1('GET', 'getIdentity', { identityId }))).toEqual({
      id: identityId,
      externalId: 'from-v2',
      meta: {},
      ratelimits: [{ name: 'req', limit: 5, duration: MINUTE }],
    });
    expectV1Error(await v1('POST', 'createIdentity', { externalId: 'from-v2' }), 409, 'CONFLICT');
    const listed = ok(await v1('GET', 'listIdentities', {}));
    expect(listed).toEqual({
      identities: [{ id: identityId, externalId: 'from-v2', meta: {}, ratelimits: [{ name: 'req', limit: 5, duration: MINUTE }] }],
      total: 1,
    });
    const updated = await v2.identities.updateIdentity(v2.rootKey, { identity: identityId, meta: { from: 'v2' } });
    expect(updated.ok).toBe(true);
    expect(ok(await v1('GET', 'getIdentity', { externalId: 'from-v2' })).meta).toEqual({ from: 'v2' });
    const deleted = await v2.identities.deleteIdentity(v2.rootKey, { identity: identityId });
    expect(deleted.ok).toBe(true);
    expectV1Error(await v1('GET', 'getIdentity', { identityId }), 404, 'NOT_FOUND');
    expect(ok(await v1('GET', 'listIdentities', {}))).toEqual({ identities: [], total: 0 });
  });
});
