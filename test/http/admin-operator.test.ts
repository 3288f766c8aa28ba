/**
 * The admin surface `/_sim/*` answers the operator only — the root key the simulator started
 * with — over real sockets: workspace root keys (none, some or every permission, any workspace)
 * get 403 before anything happens; the journal holds hashes, not credentials; a restore that
 * would lock the operator out is refused; a loopback server refuses foreign Host headers.
 */
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import {
  JournalReplayer,
  type JournalStart,
  type JournalTake,
  ROUTES,
  type Simulator,
  createSimulator,
  exposureWarning,
  nodeSha256,
} from '../../src/http/index.js';
import { type Answer, call, expectV2Error, locationsOf, postJson } from '../helpers/http.js';

const START_MS = Date.parse('2028-03-01T08:00:00.000Z');
const OPERATOR = 'root_operator_0123456789';
let sim: Simulator;

beforeAll(async () => {
  sim = await createSimulator({ startMs: START_MS, seed: 5, rootKey: OPERATOR, validateResponses: true });
});
afterAll(() => sim.close());
beforeEach(() => sim.reset());

/** Root keys that are not the operator's: none, one, every permission of its workspace, and another workspace's. */
async function workspaceRootKeys(): Promise<{ bare: string; reader: string; star: string; foreign: string }> {
  const bare = (await call<{ rootKey: string }>(sim, '/_sim/rootKeys.create', { permissions: [] })).rootKey;
  const reader = (await call<{ rootKey: string }>(sim, '/_sim/rootKeys.create', { permissions: ['api.*.read_key'] })).rootKey;
  const star = (await call<{ rootKey: string }>(sim, '/_sim/rootKeys.create', { permissions: ['*'] })).rootKey;
  const foreign = (await call<{ rootKey: string }>(sim, '/_sim/workspaces.create', { name: 'other' })).rootKey;
  return { bare, reader, star, foreign };
}

function snapshotText(): string {
  return JSON.stringify(sim.engine.snapshot());
}

describe('only the operator runs /_sim/*', () => {
  test('a root key without permissions cannot mint a * root key through /_sim/rootKeys.create', async () => {
    const { bare } = await workspaceRootKeys();
    const before = snapshotText();
    const answer = await postJson(sim.url, '/_sim/rootKeys.create', { permissions: ['*'] }, bare);
    const error = expectV2Error(answer, 403, 'authorization/insufficient_permissions');
    expect(error.detail).toMatch(/operator/);
    expect(snapshotText()).toBe(before);
  });

  test('a root key of another workspace cannot read /_sim/snapshot (every workspace, recoverable plaintexts)', async () => {
    const { foreign, star } = await workspaceRootKeys();
    for (const key of [foreign, star]) {
      const answer = await postJson(sim.url, '/_sim/snapshot', {}, key);
      expectV2Error(answer, 403, 'authorization/insufficient_permissions');
      expect(answer.text).not.toContain('"rootKeys"');
    }
  });

  test('every /_sim/* route but GET /_sim/health refuses every workspace root key with 403 and changes nothing; an unknown key gets 401, none 400', async () => {
    const keys = await workspaceRootKeys();
    await call(sim, '/_sim/journal.start', {});
    await postJson(sim.url, '/v2/apis.createApi', { name: 'journaled' }, OPERATOR);
    const before = snapshotText();
    const admin = ROUTES.filter((r) => r.path.startsWith('/_sim/'));
    expect(admin.length).toBeGreaterThan(15);
    for (const route of admin) {
      for (const [name, key] of Object.entries(keys)) {
        const answer = await postJson(sim.url, route.path, {}, key);
        expect(answer.status, `${route.path} with the ${name} root key: ${answer.text.slice(0, 200)}`).toBe(403);
        expectV2Error(answer, 403, 'authorization/insufficient_permissions');
      }
      expectV2Error(await postJson(sim.url, route.path, {}, 'root_unknown_0000000000'), 401, 'authentication/key_not_found');
      expectV2Error(await postJson(sim.url, route.path, {}, null), 400, 'authentication/missing');
    }
    expect(snapshotText()).toBe(before);
    expect(sim.clock.now()).toBe(START_MS);
    // The journal was neither stopped, drained nor restarted by them: the operator still finds its entry.
    const taken = await call<JournalTake>(sim, '/_sim/journal.take', {});
    expect(taken.active).toBe(true);
    expect(taken.entries.map((e) => e.path)).toEqual(['/v2/apis.createApi']);
    // Health needs no key.
    const health = await fetch(`${sim.url}/_sim/health`);
    expect(health.status).toBe(200);
  });

  test('a workspace root key sending an admin body over the limit gets 403, not 413: the body is never read', async () => {
    const small = await createSimulator({ rootKey: OPERATOR, maxBodyBytes: 1024 });
    try {
      const star = (await call<{ rootKey: string }>(small, '/_sim/rootKeys.create', { permissions: ['*'] })).rootKey;
      const huge = { name: 'x'.repeat(1_000_000) };
      expectV2Error(await postJson(small.url, '/_sim/namespaces.create', huge, star), 403, 'authorization/insufficient_permissions');
      expectV2Error(await postJson(small.url, '/_sim/restore', { snapshot: huge }, star), 403, 'authorization/insufficient_permissions');
      // The operator's body is read, and is over the limit.
      expectV2Error(await postJson(small.url, '/_sim/namespaces.create', huge, OPERATOR), 413);
      expect((await fetch(`${small.url}/_sim/health`)).status).toBe(200);
    } finally {
      await small.close();
    }
  });

  test('workspace root keys still call the service: the admin surface is all they lose', async () => {
    const { star, foreign } = await workspaceRootKeys();
    expect(await call(sim, '/v2/apis.createApi', { name: 'by star' }, star)).toMatchObject({ apiId: expect.stringMatching(/^api_/) });
    expect(await call(sim, '/v2/apis.createApi', { name: 'by foreign' }, foreign)).toMatchObject({ apiId: expect.stringMatching(/^api_/) });
  });

  test('the operator sets up another workspace by its workspaceId (namespaces, root keys, vault, APIs)', async () => {
    const other = await call<{ workspaceId: string; rootKey: string }>(sim, '/_sim/workspaces.create', { name: 'tenant' });
    await call(sim, '/_sim/namespaces.create', { name: 'tenant-ns', workspaceId: other.workspaceId });
    // The namespace is the other workspace's: its root key limits in it, the operator's workspace has none of that name.
    expect(await call(sim, '/v2/ratelimit.limit', { namespace: 'tenant-ns', identifier: 'u', limit: 1, duration: 1000 }, other.rootKey)).toMatchObject({
      success: true,
    });
    expectV2Error(await postJson(sim.url, '/v2/ratelimit.limit', { namespace: 'tenant-ns', identifier: 'u', limit: 1, duration: 1000 }, OPERATOR), 404);
    const minted = await call<{ rootKey: string; workspaceId: string }>(sim, '/_sim/rootKeys.create', {
      permissions: ['api.*.create_api'],
      workspaceId: other.workspaceId,
    });
    expect(minted.workspaceId).toBe(other.workspaceId);
    const { apiId } = await call<{ apiId: string }>(sim, '/v2/apis.createApi', { name: 'tenant api' }, minted.rootKey);
    expect(await call(sim, '/_sim/apis.configure', { apiId, encryption: true, workspaceId: other.workspaceId })).toMatchObject({ apiId, encryption: true });
    expect(await call(sim, '/_sim/vault.configure', { enabled: true, workspaceId: other.workspaceId })).toEqual({ enabled: true });
    expectV2Error(await postJson(sim.url, '/_sim/rootKeys.create', { permissions: [], workspaceId: 'ws_missing' }, OPERATOR), 404, 'data/workspace_not_found');
  });
});

describe('the journal holds hashes, not credentials', () => {
  test('the journal hands out no plaintext root key or verified key, and its replay still gives the answers the clients received', async () => {
    const { star } = await workspaceRootKeys();
    const start = await call<JournalStart>(sim, '/_sim/journal.start', {});
    expect(start.operatorRootKeyHash).toBe(nodeSha256(OPERATOR));
    const { apiId } = await call<{ apiId: string }>(sim, '/v2/apis.createApi', { name: 'j' }, star);
    const { key } = await call<{ key: string }>(sim, '/v2/keys.createKey', { apiId, credits: { remaining: 2 } });
    const received: Answer[] = [];
    for (let seq = 0; seq < 3; seq++) {
      received.push(await postJson(sim.url, '/v2/keys.verifyKey', { key }, seq === 0 ? null : star));
    }
    const minted = await call<{ rootKey: string }>(sim, '/_sim/rootKeys.create', { permissions: ['*'] });
    await call(sim, '/v2/apis.createApi', { name: 'by minted' }, minted.rootKey);
    const taken = await call<JournalTake>(sim, '/_sim/journal.take', {});
    const text = JSON.stringify(taken);
    for (const secret of [OPERATOR, star, key, minted.rootKey]) expect(text).not.toContain(secret);
    const verifications = taken.entries.filter((e) => e.path === '/v2/keys.verifyKey');
    expect(verifications.map((e) => (e.input as { key: string }).key)).toEqual([nodeSha256(key), nodeSha256(key), nodeSha256(key)]);
    expect(verifications.map((e) => e.rootKeyHash)).toEqual([undefined, nodeSha256(star), nodeSha256(star)]);

    const replayer = JournalReplayer.create(start);
    const replayed = taken.entries.map((e) => replayer.apply(e));
    const replayedVerifications = taken.entries.flatMap((e, i) => (e.path === '/v2/keys.verifyKey' ? [replayed[i]] : []));
    expect(replayedVerifications.map((a) => (a?.body as { data: unknown }).data)).toEqual(received.map((a) => (a.body as { data: unknown }).data));
    expect(replayedVerifications.map((a) => (a?.body as { data: { code: string } }).data.code)).toEqual(['VALID', 'VALID', 'USAGE_EXCEEDED']);
    // Every replayed call succeeded as it did live (the minted root key authenticated by its hash).
    expect(replayed.map((a) => a.status)).toEqual(taken.entries.map(() => 200));
  });
});

describe('a restore can lock everyone out', () => {
  test('a restore whose snapshot has no root key of the operator is refused with 400 naming why, and changes nothing', async () => {
    const elsewhere = await createSimulator({ startMs: START_MS, seed: 5, rootKey: 'root_someone_else_0000' });
    let foreignSnapshot: unknown;
    try {
      await call(elsewhere, '/v2/apis.createApi', { name: 'theirs' });
      foreignSnapshot = await call(elsewhere, '/_sim/snapshot', {});
    } finally {
      await elsewhere.close();
    }
    await call(sim, '/v2/apis.createApi', { name: 'ours' });
    const before = snapshotText();
    const answer = await postJson(sim.url, '/_sim/restore', { snapshot: foreignSnapshot }, OPERATOR);
    const error = expectV2Error(answer, 400, 'application/invalid_input');
    expect(error.detail).toMatch(/operator/);
    expect(locationsOf(answer)).toContain('body.snapshot.rootKeys');
    expect(snapshotText()).toBe(before);
    // The operator still runs everything.
    expect(await call(sim, '/_sim/clock.get', {})).toMatchObject({ nowMs: START_MS });
    await call(sim, '/_sim/reset', {});
  });

  test('a snapshot that keeps the operator root key restores, and the operator keeps the admin surface', async () => {
    await call(sim, '/v2/apis.createApi', { name: 'saved' });
    const saved = await call(sim, '/_sim/snapshot', {});
    await call(sim, '/_sim/reset', {});
    expect(sim.engine.stats().apis).toBe(0);
    await call(sim, '/_sim/restore', { snapshot: saved });
    expect(sim.engine.stats().apis).toBe(1);
    await call(sim, '/_sim/clock.advance', { byMs: 1 });
  });

  test('createSimulator refuses a start snapshot without its root key (code KEYSIM_BAD_SNAPSHOT)', async () => {
    const saved = await call(sim, '/_sim/snapshot', {});
    await expect(createSimulator({ rootKey: 'root_not_in_it_00000', snapshot: saved })).rejects.toMatchObject({
      code: 'KEYSIM_BAD_SNAPSHOT',
      message: expect.stringMatching(/operator/),
    });
    const restored = await createSimulator({ startMs: START_MS, seed: 5, rootKey: OPERATOR, snapshot: saved });
    try {
      expect(await call(restored, '/_sim/snapshot', {})).toEqual(saved);
    } finally {
      await restored.close();
    }
  });
});

/** A raw request with the Host header of our choosing (fetch and undici set it from the URL). */
function withHost(url: string, path: string, host: string | undefined, method = 'GET', body?: string): Promise<Answer> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { authorization: `Bearer ${OPERATOR}`, 'content-type': 'application/json' };
    if (host !== undefined) headers.host = host;
    const req = httpRequest({ host: hostname, port: Number(port), path, method, headers, setHost: host === undefined ? false : true }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      res.on('end', () => {
        let parsed: unknown;
        try {
          parsed = JSON.parse(text);
        } catch {
          parsed = undefined;
        }
        const flat: Record<string, string> = {};
        for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') flat[k] = v;
        resolve({ status: res.statusCode ?? 0, headers: flat, text, body: parsed });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('DNS rebinding: a loopback server answers only its own names', () => {
  test('a request whose Host is not the served loopback address is refused with 421 in the envelope, on every path', async () => {
    const port = new URL(sim.url).port;
    const before = snapshotText();
    for (const host of ['evil.example', `evil.example:${port}`, `127.0.0.1:${Number(port) + 1}`, `localhost.evil.example:${port}`, `192.168.1.10:${port}`]) {
      for (const [path, method] of [
        ['/_sim/health', 'GET'],
        ['/_sim/snapshot', 'POST'],
        ['/v2/apis.createApi', 'POST'],
        ['/openapi.json', 'GET'],
      ] as const) {
        const answer = await withHost(sim.url, path, host, method, method === 'POST' ? JSON.stringify({ name: 'rebound' }) : undefined);
        expect(answer.status, `${host} ${path}`).toBe(421);
        expect(answer.body).toMatchObject({ meta: { requestId: expect.stringMatching(/^req_/) }, error: { status: 421, title: 'Misdirected Request' } });
        expect((answer.body as { error: { detail: string } }).error.detail).toContain(`127.0.0.1:${port}`);
      }
    }
    expect(snapshotText()).toBe(before);
  });

  test('the loopback names with the served port are answered: 127.0.0.1, localhost, [::1], any case', async () => {
    const port = new URL(sim.url).port;
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, `LocalHost:${port}`]) {
      expect((await withHost(sim.url, '/_sim/health', host)).status, host).toBe(200);
      expect((await withHost(sim.url, '/v2/apis.createApi', host, 'POST', JSON.stringify({ name: 'local' }))).status, host).toBe(200);
    }
  });

  test('checkHost: false answers every Host (for a simulator behind a proxy of one\u2019s own)', async () => {
    const open = await createSimulator({ checkHost: false });
    try {
      expect((await withHost(open.url, '/_sim/health', 'sim.internal:80')).status).toBe(200);
    } finally {
      await open.close();
    }
  });

  test('keysim serve warns when bound beyond loopback, and only then', () => {
    for (const address of ['0.0.0.0', '::', '[::]', '192.168.1.10']) expect(exposureWarning(address), address).toMatch(/warning: .*beyond this machine/);
    for (const address of ['127.0.0.1', '127.1.2.3', '::1', '[::1]', 'localhost']) expect(exposureWarning(address), address).toBeNull();
  });
});
