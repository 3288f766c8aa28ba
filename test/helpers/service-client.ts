/**
 * One client interface over the service, with two implementations: the engine called directly and
 * the HTTP simulator reached through real sockets. The contract suite (test/contract/) is written
 * against `ServiceClient` only, so the same expectations hold for both (docs/architecture.md#conventions).
 *
 * Both clients answer a uniform `Outcome`: success carries `data` (and `pagination` for list
 * operations, in the shape the HTTP layer answers), failure carries the error identifier
 * `err:service:<category>:<name>`. The HTTP client also checks every envelope it receives
 * (docs/errors.md#envelope), so each call of the suite checks the wire format as a side effect.
 */
import type {
  ControllableClock,
  CreateApiInput,
  CreateIdentityInput,
  CreateKeyInput,
  CreateKeyOutput,
  DeleteKeyInput,
  Engine,
  ErrorCode,
  FieldError,
  GetKeyInput,
  IdentityView,
  KeyView,
  LimitInput,
  LimitOutput,
  ListIdentitiesInput,
  ListOverridesInput,
  MultiLimitEntry,
  OverrideRefInput,
  OverrideView,
  Result,
  SetOverrideInput,
  UpdateCreditsInput,
  UpdateCreditsOutput,
  UpdateKeyInput,
  UpdateIdentityInput,
  VerifyKeyInput,
  VerifyKeyOutput,
} from '../../src/engine/index.js';
import { SPEC_CATALOGUE } from './error-catalogue.js';

/** `pagination` of list operations: `cursor` is absent on the last page. */
export interface Pagination {
  hasMore: boolean;
  cursor?: string;
}

export interface Success<T> {
  ok: true;
  data: T;
  pagination?: Pagination;
}

export interface Failure {
  ok: false;
  /** `err:service:<category>:<name>`; over HTTP read back from the `type` URL. */
  code: ErrorCode | (string & {});
  detail: string;
  /** Field-level violations (always present on HTTP 400 answers). */
  errors?: FieldError[];
  /** The HTTP status; only the HTTP client knows it. */
  status?: number;
}

export type Outcome<T> = Success<T> | Failure;

/** A v2 identity reference: the `id_…` or the externalId. */
export interface IdentityRefV2 {
  identity: string;
}

export type UpdateIdentityV2Input = Omit<UpdateIdentityInput, 'identity' | 'identityId' | 'externalId'> & IdentityRefV2;

type Op<I, O> = (rootKey: string | undefined, input: I) => Promise<Outcome<O>>;
type Empty = Record<string, never>;

export interface ServiceClient {
  readonly target: 'engine' | 'http';
  /** Root key of the start workspace; it holds `*`. */
  readonly rootKey: string;
  readonly workspaceId: string;

  readonly apis: {
    createApi: Op<CreateApiInput, { apiId: string }>;
  };
  readonly keys: {
    createKey: Op<CreateKeyInput, CreateKeyOutput>;
    getKey: Op<GetKeyInput, KeyView>;
    updateKey: Op<UpdateKeyInput, Empty>;
    deleteKey: Op<DeleteKeyInput, Empty>;
    verifyKey: Op<VerifyKeyInput, VerifyKeyOutput>;
    updateCredits: Op<UpdateCreditsInput, UpdateCreditsOutput>;
  };
  readonly identities: {
    createIdentity: Op<CreateIdentityInput, { identityId: string }>;
    getIdentity: Op<IdentityRefV2, IdentityView>;
    listIdentities: Op<ListIdentitiesInput, IdentityView[]>;
    updateIdentity: Op<UpdateIdentityV2Input, IdentityView>;
    /** Answers only `meta` over HTTP: `data` is undefined. */
    deleteIdentity: Op<IdentityRefV2, undefined>;
  };
  readonly ratelimit: {
    limit: Op<LimitInput, LimitOutput>;
    multiLimit: Op<LimitInput[], { passed: boolean; limits: MultiLimitEntry[] }>;
    setOverride: Op<SetOverrideInput, { overrideId: string }>;
    getOverride: Op<OverrideRefInput, OverrideView>;
    listOverrides: Op<ListOverridesInput, OverrideView[]>;
    deleteOverride: Op<OverrideRefInput, Empty>;
  };

  // Fixtures (the simulator's admin surface). They throw on failure: they are set-up, not subject.
  /** Another workspace with an all-powerful root key. */
  createWorkspace(): Promise<{ workspaceId: string; rootKey: string }>;
  /** A root key with these permissions in the workspace of `inWorkspaceOf` (default: the start workspace). */
  createRootKey(permissions: string[], inWorkspaceOf?: string): Promise<string>;
  createNamespace(name: string, inWorkspaceOf?: string): Promise<string>;
  deleteNamespace(namespace: string, inWorkspaceOf?: string): Promise<void>;
  configureApi(input: { apiId: string; keyAuth?: boolean; encryption?: boolean }, inWorkspaceOf?: string): Promise<void>;
  configureVault(enabled: boolean, inWorkspaceOf?: string): Promise<void>;
  /** Moves the service clock to `ms` (never backwards). */
  setClock(ms: number): Promise<void>;
  advanceClock(ms: number): Promise<void>;
  now(): Promise<number>;
}

/** The error catalogue as docs/errors.md writes it (error-catalogue.ts): what a check expects of an error, read from the document, not from the source. */
export { SPEC_CATALOGUE };

// ── checks shared by both clients ──────────────────────────────────────────────────────────

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Optional response fields are omitted, never null or undefined (docs/service-model.md#wire-format); the only
 * nullable field by contract is a balance (`remaining: null` = unlimited). Free-form `meta` is
 * the caller's own JSON and is not inspected.
 */
function checkOmittedNotNull(op: string, value: unknown, path: string): void {
  if (Array.isArray(value)) {
    value.forEach((item, i) => checkOmittedNotNull(op, item, `${path}[${i}]`));
    return;
  }
  if (!isRecord(value)) return;
  for (const [key, child] of Object.entries(value)) {
    const at = `${path}.${key}`;
    if (child === undefined) throw new Error(`${op}: ${at} is present but undefined; unset fields must be omitted`);
    if (child === null && key !== 'remaining') throw new Error(`${op}: ${at} is null; unset optional fields must be omitted`);
    if (key !== 'meta') checkOmittedNotNull(op, child, at);
  }
}

/** The wire form of a value: what a client sees after JSON (no undefined, no shared references). */
function wire<T>(value: T): T {
  return value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T);
}

// ── engine ─────────────────────────────────────────────────────────────────────────────────

function fromResult<T>(op: string, result: Result<T>): Outcome<T> {
  if (!result.ok) {
    const { code, detail, errors } = result.error;
    if (typeof detail !== 'string' || detail.length === 0) throw new Error(`${op}: error ${code} has no detail`);
    return errors === undefined ? { ok: false, code, detail } : { ok: false, code, detail, errors: wire(errors) };
  }
  checkOmittedNotNull(op, result.value, 'data');
  return { ok: true, data: wire(result.value) };
}

function paged<T>(data: T, cursor: string | undefined): Success<T> {
  return { ok: true, data, pagination: cursor === undefined ? { hasMore: false } : { hasMore: true, cursor } };
}

/**
 * The engine called directly. Inputs and outputs go through JSON, as they would on the wire, and
 * list operations answer the `{ data, pagination }` shape of the HTTP layer.
 */
export function engineClient(engine: Engine, clock: ControllableClock, workspace: { workspaceId: string; rootKey: string }): ServiceClient {
  const call =
    <I, O>(op: string, fn: (rootKey: string | undefined, input: I) => Result<O>): Op<I, O> =>
    async (rootKey, input) =>
      fromResult(op, fn(rootKey, wire(input)));

  const must = <T>(what: string, result: Result<T>): T => {
    if (!result.ok) throw new Error(`fixture ${what} failed: ${result.error.code}: ${result.error.detail}`);
    return result.value;
  };
  const workspaceOf = (rootKey: string | undefined): string => must('authenticate', engine.admin.authenticate(rootKey ?? workspace.rootKey)).workspaceId;

  return {
    target: 'engine',
    rootKey: workspace.rootKey,
    workspaceId: workspace.workspaceId,
    apis: {
      createApi: call('apis.createApi', engine.apis.createApi),
    },
    keys: {
      createKey: call('keys.createKey', engine.keys.createKey),
      getKey: call('keys.getKey', engine.keys.getKey),
      updateKey: call('keys.updateKey', engine.keys.updateKey),
      deleteKey: call('keys.deleteKey', engine.keys.deleteKey),
      verifyKey: call('keys.verifyKey', engine.keys.verifyKey),
      updateCredits: call('keys.updateCredits', engine.keys.updateCredits),
    },
    identities: {
      createIdentity: call('identities.createIdentity', engine.identities.createIdentity),
      getIdentity: call('identities.getIdentity', engine.identities.getIdentity),
      listIdentities: async (rootKey, input) => {
        const out = fromResult('identities.listIdentities', engine.identities.listIdentities(rootKey, wire(input)));
        return out.ok ? paged(out.data.identities, out.data.cursor) : out;
      },
      updateIdentity: call('identities.updateIdentity', engine.identities.updateIdentity),
      deleteIdentity: async (rootKey, input) => {
        const out = fromResult('identities.deleteIdentity', engine.identities.deleteIdentity(rootKey, wire(input)));
        return out.ok ? { ok: true, data: undefined } : out;
      },
    },
    ratelimit: {
      limit: call('ratelimit.limit', engine.ratelimit.limit),
      multiLimit: call('ratelimit.multiLimit', engine.ratelimit.multiLimit),
      setOverride: call('ratelimit.setOverride', engine.ratelimit.setOverride),
      getOverride: call('ratelimit.getOverride', engine.ratelimit.getOverride),
      listOverrides: async (rootKey, input) => {
        const out = fromResult('ratelimit.listOverrides', engine.ratelimit.listOverrides(rootKey, wire(input)));
        return out.ok ? paged(out.data.overrides, out.data.cursor) : out;
      },
      deleteOverride: call('ratelimit.deleteOverride', engine.ratelimit.deleteOverride),
    },
    createWorkspace: async () => {
      const created = must('createWorkspace', engine.admin.createWorkspace({ name: 'other' }));
      return { workspaceId: created.workspaceId, rootKey: created.rootKey };
    },
    createRootKey: async (permissions, inWorkspaceOf) => must('createRootKey', engine.admin.createRootKey(workspaceOf(inWorkspaceOf), permissions)).rootKey,
    createNamespace: async (name, inWorkspaceOf) => must('createNamespace', engine.admin.createNamespace(workspaceOf(inWorkspaceOf), name)).namespaceId,
    deleteNamespace: async (namespace, inWorkspaceOf) => {
      must('deleteNamespace', engine.admin.deleteNamespace(workspaceOf(inWorkspaceOf), namespace));
    },
    configureApi: async (input, inWorkspaceOf) => {
      must('configureApi', engine.admin.configureApi(workspaceOf(inWorkspaceOf), input));
    },
    configureVault: async (enabled, inWorkspaceOf) => {
      must('configureVault', engine.admin.configureVault(workspaceOf(inWorkspaceOf), enabled));
    },
    setClock: async (ms) => {
      clock.set(ms);
    },
    advanceClock: async (ms) => {
      clock.advance(ms);
    },
    now: async () => clock.now(),
  };
}

// ── HTTP ───────────────────────────────────────────────────────────────────────────────────

const LIST_OPS = new Set(['identities.listIdentities', 'ratelimit.listOverrides']);
const META_ONLY_OPS = new Set(['identities.deleteIdentity']);
const TYPE_URL = /\/service\/([a-z_]+)\/([a-z_]+)$/;

function fail(op: string, problem: string, text: string): never {
  throw new Error(`${op}: ${problem}; body: ${text.slice(0, 500)}`);
}

/** Checks `meta.requestId` (form `req_<id>`), common to every v2 answer. */
function checkMeta(op: string, body: Record<string, unknown>, text: string, header: string | null): void {
  const meta = body.meta;
  if (!isRecord(meta) || typeof meta.requestId !== 'string' || !/^req_[A-Za-z0-9]+$/.test(meta.requestId)) {
    fail(op, 'meta.requestId must be a string "req_<id>"', text);
  }
  if (header !== null && header !== meta.requestId) fail(op, `x-request-id ${header} differs from meta.requestId`, text);
}

/** Checks a v2 success envelope and returns it as an Outcome. */
function successOf<T>(op: string, body: Record<string, unknown>, text: string): Success<T> {
  const allowed = LIST_OPS.has(op) ? ['meta', 'data', 'pagination'] : ['meta', 'data'];
  for (const key of Object.keys(body)) if (!allowed.includes(key)) fail(op, `unexpected top-level field "${key}"`, text);
  if (META_ONLY_OPS.has(op)) {
    if ('data' in body) fail(op, 'a delete that answers only meta must not carry data', text);
    return { ok: true, data: undefined as T };
  }
  if (!('data' in body)) fail(op, 'a success must carry data', text);
  checkOmittedNotNull(op, body.data, 'data');
  if (!LIST_OPS.has(op)) return { ok: true, data: body.data as T };
  if (!Array.isArray(body.data)) fail(op, 'a list answers an array as data', text);
  const pagination = body.pagination;
  if (!isRecord(pagination) || typeof pagination.hasMore !== 'boolean') fail(op, 'a list answers pagination.hasMore', text);
  for (const key of Object.keys(pagination)) if (key !== 'hasMore' && key !== 'cursor') fail(op, `unexpected pagination.${key}`, text);
  if ('cursor' in pagination && (typeof pagination.cursor !== 'string' || pagination.cursor === '')) {
    fail(op, 'pagination.cursor is a non-empty string or absent', text);
  }
  if (pagination.hasMore !== 'cursor' in pagination) fail(op, 'pagination.hasMore must be true exactly when a cursor is given', text);
  return {
    ok: true,
    data: body.data as T,
    pagination: typeof pagination.cursor === 'string' ? { hasMore: pagination.hasMore, cursor: pagination.cursor } : { hasMore: pagination.hasMore },
  };
}

/** Checks a v2 error envelope and maps its `type` URL back to the error identifier. */
function failureOf(op: string, status: number, body: Record<string, unknown>, text: string, errorsUrl: string | undefined): Failure {
  for (const key of Object.keys(body)) if (key !== 'meta' && key !== 'error') fail(op, `unexpected top-level field "${key}" in an error`, text);
  const error = body.error;
  if (!isRecord(error)) fail(op, 'an error answer carries error', text);
  const { title, detail, type, errors } = error;
  if (typeof title !== 'string' || title === '') fail(op, 'error.title must be a non-empty string', text);
  if (typeof detail !== 'string' || detail === '') fail(op, 'error.detail must be a non-empty string', text);
  if (error.status !== status) fail(op, `error.status ${String(error.status)} differs from the HTTP status ${status}`, text);
  if (typeof type !== 'string') fail(op, 'error.type must be a URL', text);
  if (errorsUrl !== undefined && !type.startsWith(`${errorsUrl}/service/`)) fail(op, `error.type must start with ${errorsUrl}/service/`, text);
  const match = TYPE_URL.exec(type);
  if (match === null) fail(op, 'error.type must end in /service/<category>/<name>', text);
  const code = `err:service:${match[1] ?? ''}:${match[2] ?? ''}`;
  const expected = SPEC_CATALOGUE[code];
  if (expected === undefined) fail(op, `${code} is not in the error catalogue`, text);
  if (expected.status !== status) fail(op, `${code} must answer ${expected.status}, got ${status}`, text);
  if (expected.title !== title) fail(op, `${code} must be titled "${expected.title}", got "${title}"`, text);
  if (status === 400 && !Array.isArray(errors)) fail(op, 'a 400 answer always carries error.errors (possibly [])', text);
  if (errors !== undefined) {
    if (!Array.isArray(errors)) fail(op, 'error.errors must be an array', text);
    for (const e of errors) {
      if (!isRecord(e) || typeof e.location !== 'string' || typeof e.message !== 'string') fail(op, 'each error.errors entry has location and message', text);
    }
  }
  const out: Failure = { ok: false, code, detail, status };
  if (Array.isArray(errors)) out.errors = errors as FieldError[];
  return out;
}

export interface HttpTarget {
  url: string;
  /**
   * Further base URLs of the same simulator (replicas on one store): requests go to `url`, then to
   * each of these in turn (round robin per request), so every answer also shows that they agree.
   */
  replicaUrls?: readonly string[];
  rootKey: string;
  workspaceId: string;
}

/** Real fetches to a running simulator; every answer's envelope is checked on the way. */
export function httpClient(sim: HttpTarget, options: { errorsUrl?: string } = { errorsUrl: 'https://unkey.com/docs/errors' }): ServiceClient {
  const bases = [sim.url, ...(sim.replicaUrls ?? [])];
  let sent = 0;
  const nextBase = () => bases[sent++ % bases.length] as string;
  async function request(
    op: string,
    path: string,
    rootKey: string | undefined,
    input: unknown,
  ): Promise<{ status: number; body: Record<string, unknown>; text: string; requestIdHeader: string | null }> {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (rootKey !== undefined) headers.authorization = `Bearer ${rootKey}`;
    const res = await fetch(`${nextBase()}${path}`, { method: 'POST', headers, body: JSON.stringify(input) });
    const text = await res.text();
    const contentType = res.headers.get('content-type') ?? '';
    // docs/errors.md#envelope: 429 answers use application/problem+json, every other answer application/json —
    // except the errors of identities.deleteIdentity, which the official SDK types only as
    // problem+json (a documented deviation, docs/departures.md).
    const problemJson = res.status === 429 || (res.status >= 400 && path === '/v2/identities.deleteIdentity');
    const expectedType = problemJson ? 'application/problem+json' : 'application/json';
    if (!contentType.startsWith(expectedType)) fail(op, `content-type must be ${expectedType}, got "${contentType}" (status ${res.status})`, text);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      fail(op, 'the answer is not JSON', text);
    }
    if (!isRecord(body)) fail(op, 'the answer is a JSON object', text);
    return { status: res.status, body, text, requestIdHeader: res.headers.get('x-request-id') };
  }

  const call =
    <I, O>(op: string): Op<I, O> =>
    async (rootKey, input) => {
      const { status, body, text, requestIdHeader } = await request(op, `/v2/${op}`, rootKey, input);
      checkMeta(op, body, text, requestIdHeader);
      if (status === 200) return successOf<O>(op, body, text);
      if (status < 400) fail(op, `success is always 200, got ${status}`, text);
      return failureOf(op, status, body, text, options.errorsUrl);
    };

  // The admin surface answers the operator only: a fixture in another workspace names that
  // workspace, found from the root key the test holds of it.
  const workspaceOfRootKey = new Map<string, string>([[sim.rootKey, sim.workspaceId]]);
  async function admin<T>(op: string, inWorkspaceOf: string | undefined, input: unknown): Promise<T> {
    let sent = input;
    if (inWorkspaceOf !== undefined) {
      const workspaceId = workspaceOfRootKey.get(inWorkspaceOf);
      if (workspaceId === undefined) throw new Error(`${op}: the root key given as inWorkspaceOf was not created by this client`);
      sent = { ...(input as Record<string, unknown>), workspaceId };
    }
    const { status, body, text, requestIdHeader } = await request(op, `/_sim/${op}`, sim.rootKey, sent);
    checkMeta(op, body, text, requestIdHeader);
    if (status !== 200 || !('data' in body)) fail(op, `fixture failed with ${status}`, text);
    return body.data as T;
  }

  return {
    target: 'http',
    rootKey: sim.rootKey,
    workspaceId: sim.workspaceId,
    apis: {
      createApi: call('apis.createApi'),
    },
    keys: {
      createKey: call('keys.createKey'),
      getKey: call('keys.getKey'),
      updateKey: call('keys.updateKey'),
      deleteKey: call('keys.deleteKey'),
      verifyKey: call('keys.verifyKey'),
      updateCredits: call('keys.updateCredits'),
    },
    identities: {
      createIdentity: call('identities.createIdentity'),
      getIdentity: call('identities.getIdentity'),
      listIdentities: call('identities.listIdentities'),
      updateIdentity: call('identities.updateIdentity'),
      deleteIdentity: call('identities.deleteIdentity'),
    },
    ratelimit: {
      limit: call('ratelimit.limit'),
      multiLimit: call('ratelimit.multiLimit'),
      setOverride: call('ratelimit.setOverride'),
      getOverride: call('ratelimit.getOverride'),
      listOverrides: call('ratelimit.listOverrides'),
      deleteOverride: call('ratelimit.deleteOverride'),
    },
    createWorkspace: async () => {
      const created = await admin<{ workspaceId: string; rootKey: string }>('workspaces.create', undefined, { name: 'other' });
      workspaceOfRootKey.set(created.rootKey, created.workspaceId);
      return created;
    },
    createRootKey: async (permissions, inWorkspaceOf) => {
      const created = await admin<{ rootKey: string; workspaceId: string }>('rootKeys.create', inWorkspaceOf, { permissions });
      workspaceOfRootKey.set(created.rootKey, created.workspaceId);
      return created.rootKey;
    },
    createNamespace: async (name, inWorkspaceOf) => (await admin<{ namespaceId: string }>('namespaces.create', inWorkspaceOf, { name })).namespaceId,
    deleteNamespace: async (namespace, inWorkspaceOf) => {
      await admin('namespaces.delete', inWorkspaceOf, { namespace });
    },
    configureApi: async (input, inWorkspaceOf) => {
      await admin('apis.configure', inWorkspaceOf, input);
    },
    configureVault: async (enabled, inWorkspaceOf) => {
      await admin('vault.configure', inWorkspaceOf, { enabled });
    },
    setClock: async (ms) => {
      await admin('clock.set', undefined, { to: ms });
    },
    advanceClock: async (ms) => {
      await admin('clock.advance', undefined, { byMs: ms });
    },
    now: async () => (await admin<{ nowMs: number }>('clock.get', undefined, {})).nowMs,
  };
}
