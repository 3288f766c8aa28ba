/**
 * The simulator's admin surface, `/_sim/*`: what production has no API for — the clock,
 * fixtures (workspaces, root keys, namespaces, API and vault settings), reset, snapshots and
 * injected faults.
 * Every call is a POST with the operator's root key as bearer (operator.ts): any other root key
 * gets 403. Calls that act in one workspace take an optional `workspaceId`; default the
 * operator's own.
 */
import { ClockMoveError, type ControllableClock, type Result } from '../engine/index.js';
import { fail } from '../engine/errors.js';
import { parseInstant } from './instant.js';
import { authorizeOperator, restoreKeepingOperator, restoreStreamed } from './operator.js';
import { StreamedRestore, readRestoreBody } from './restore-body.js';
import { asData, defineRoute, type Reply, type Route, type RouteContext } from './route.js';
import {
  apiConfigureRequest,
  apiRateLimitRequest,
  clockAdvanceRequest,
  clockSetRequest,
  clockView,
  emptyRequest,
  faultsSetRequest,
  faultsView,
  journalStartRequest,
  journalTakeRequest,
  namespaceCreateRequest,
  namespaceDeleteRequest,
  RESTORE_MAX_BODY_BYTES,
  restoreRequest,
  rootKeyCreateRequest,
  vaultConfigureRequest,
  workspaceCreateRequest,
} from './schemas/admin.js';
import { boolean, integer, nullable, object, string } from './schema.js';
import { type JournalStart, MAX_JOURNAL_TAKE } from './journal.js';

export function viewClock(clock: ControllableClock): { nowMs: number; iso: string; mode: string } {
  const nowMs = clock.now();
  return { nowMs, iso: new Date(nowMs).toISOString(), mode: clock.mode };
}

/**
 * Runs `fn` for the operator only, with the workspace it acts in: `workspaceId` when given, else
 * the operator's own. (The server checks the operator before it even reads the input; this check
 * keeps a handler safe wherever it is called from, e.g. a journal replay.)
 */
function asOperator(ctx: RouteContext, rootKey: string | undefined, fn: (workspaceId: string) => Result<Reply>, workspaceId?: string): Result<Reply> {
  const caller = authorizeOperator(ctx, rootKey);
  return caller.ok ? fn(workspaceId ?? caller.value.workspaceId) : caller;
}

/** Moves the clock with `move`; a refused move (backwards, no instant) is the 400 the operator gets. */
function clockAnswer(ctx: RouteContext, move: () => number): Result<Reply> {
  try {
    move();
  } catch (error) {
    if (error instanceof ClockMoveError) return fail('err:service:application:invalid_input', error.message);
    throw error;
  }
  return { ok: true, value: { data: viewClock(ctx.clock) } };
}

const common = { method: 'POST', style: 'v2', tag: 'simulator admin', input: 'body', auth: 'required' } as const;

export const adminRoutes: Route[] = [
  defineRoute({
    ...common,
    path: '/_sim/clock.get',
    journal: false,
    summary: 'Read the service clock.',
    request: emptyRequest,
    response: clockView,
    handle: (ctx, rootKey) => asOperator(ctx, rootKey, () => ({ ok: true, value: { data: viewClock(ctx.clock) } })),
  }),
  defineRoute({
    ...common,
    path: '/_sim/clock.set',
    summary: 'Set the service clock (ISO-8601 or Unix ms); never backwards.',
    request: clockSetRequest,
    response: clockView,
    handle: (ctx, rootKey, input) =>
      asOperator(ctx, rootKey, () => {
        const to = parseInstant(input.to, 'body.to');
        return to.ok ? clockAnswer(ctx, () => ctx.clock.set(to.value)) : to;
      }),
  }),
  defineRoute({
    ...common,
    path: '/_sim/clock.advance',
    summary: 'Move the service clock forward by byMs.',
    request: clockAdvanceRequest,
    response: clockView,
    handle: (ctx, rootKey, input) => asOperator(ctx, rootKey, () => clockAnswer(ctx, () => ctx.clock.advance(input.byMs))),
  }),
  defineRoute({
    ...common,
    path: '/_sim/reset',
    journal: false,
    summary: 'Back to the start state: one workspace with the same root key, the clock at its start, no API rate limit, no injected faults.',
    request: emptyRequest,
    response: clockView,
    handle: (ctx, rootKey) =>
      asOperator(ctx, rootKey, () => {
        ctx.reset();
        return { ok: true, value: { data: viewClock(ctx.clock) } };
      }),
  }),
  defineRoute({
    ...common,
    path: '/_sim/namespaces.create',
    summary: 'Create a rate-limit namespace (an existing name answers its id).',
    request: namespaceCreateRequest,
    response: object({ namespaceId: string() }),
    handle: (ctx, rootKey, input) =>
      asOperator(
        ctx,
        rootKey,
        (workspaceId) => {
          const created = ctx.engine.admin.createNamespace(workspaceId, input.name);
          return created.ok ? { ok: true, value: { data: { namespaceId: created.value.namespaceId } } } : created;
        },
        input.workspaceId,
      ),
  }),
  defineRoute({
    ...common,
    path: '/_sim/namespaces.delete',
    summary: 'Delete a namespace; it answers 410 afterwards.',
    request: namespaceDeleteRequest,
    response: object({ namespaceId: string() }),
    handle: (ctx, rootKey, input) =>
      asOperator(ctx, rootKey, (workspaceId) => asData(ctx.engine.admin.deleteNamespace(workspaceId, input.namespace)), input.workspaceId),
  }),
  defineRoute({
    ...common,
    path: '/_sim/workspaces.create',
    summary: 'Create another workspace with a root key holding every permission of that workspace (no admin credential).',
    request: workspaceCreateRequest,
    response: object({ workspaceId: string(), rootKey: string() }),
    handle: (ctx, rootKey, input) =>
      asOperator(ctx, rootKey, () => {
        const created = ctx.engine.admin.createWorkspace(input.name === undefined ? {} : { name: input.name });
        return created.ok ? { ok: true, value: { data: { workspaceId: created.value.workspaceId, rootKey: created.value.rootKey } } } : created;
      }),
  }),
  defineRoute({
    ...common,
    path: '/_sim/rootKeys.create',
    summary: "Create a root key with the given permissions in a workspace (default the operator's). It calls the service's API; it is no admin credential.",
    request: rootKeyCreateRequest,
    response: object({ rootKey: string(), workspaceId: string() }),
    handle: (ctx, rootKey, input) =>
      asOperator(
        ctx,
        rootKey,
        (workspaceId) => {
          const created = ctx.engine.admin.createRootKey(workspaceId, input.permissions);
          return created.ok ? { ok: true, value: { data: { rootKey: created.value.rootKey, workspaceId } } } : created;
        },
        input.workspaceId,
      ),
  }),
  defineRoute({
    ...common,
    path: '/_sim/apis.configure',
    summary: 'Switch key authentication and key encryption of an API (the 412 conditions).',
    request: apiConfigureRequest,
    response: object({ apiId: string(), keyAuth: boolean(), encryption: boolean() }),
    handle: (ctx, rootKey, input) =>
      asOperator(
        ctx,
        rootKey,
        (workspaceId) =>
          asData(
            ctx.engine.admin.configureApi(workspaceId, {
              apiId: input.apiId,
              ...(input.keyAuth === undefined ? {} : { keyAuth: input.keyAuth }),
              ...(input.encryption === undefined ? {} : { encryption: input.encryption }),
            }),
          ),
        input.workspaceId,
      ),
  }),
  defineRoute({
    ...common,
    path: '/_sim/vault.configure',
    summary: "Switch the workspace's vault (needed for recoverable keys).",
    request: vaultConfigureRequest,
    response: object({ enabled: boolean() }),
    handle: (ctx, rootKey, input) =>
      asOperator(ctx, rootKey, (workspaceId) => asData(ctx.engine.admin.configureVault(workspaceId, input.enabled)), input.workspaceId),
  }),
  defineRoute({
    ...common,
    path: '/_sim/apiRateLimit.set',
    journal: false,
    summary: "Limit the simulator's own API per root key (429 beyond); limit null removes it. Reset removes it too.",
    request: apiRateLimitRequest,
    response: object({ limit: nullable(integer()), durationMs: nullable(integer()) }),
    handle: (ctx, rootKey, input) =>
      asOperator(ctx, rootKey, () => {
        ctx.apiRateLimit.set(input.limit === null ? null : { limit: input.limit, durationMs: input.durationMs ?? 1000 });
        const config = ctx.apiRateLimit.config;
        return { ok: true, value: { data: { limit: config?.limit ?? null, durationMs: config?.durationMs ?? null } } };
      }),
  }),
  defineRoute({
    ...common,
    path: '/_sim/faults.set',
    journal: false,
    summary:
      'Inject faults (replacing the current ones): latencyMs, errorRate (500s), dropRate (closed connections), overAdmitRate, skipRefillRate, lostDecrementRate, optionally only in some operations. Answers the whole configuration.',
    request: faultsSetRequest,
    response: faultsView,
    handle: (ctx, rootKey, input) => asOperator(ctx, rootKey, () => asData(ctx.faults.set(input))),
  }),
  defineRoute({
    ...common,
    path: '/_sim/faults.get',
    journal: false,
    summary: 'The injected faults (every rate, 0 = off).',
    request: emptyRequest,
    response: faultsView,
    handle: (ctx, rootKey) => asOperator(ctx, rootKey, () => ({ ok: true, value: { data: ctx.faults.view } })),
  }),
  defineRoute({
    ...common,
    path: '/_sim/faults.clear',
    journal: false,
    summary: 'Remove every injected fault. Reset removes them too.',
    request: emptyRequest,
    response: faultsView,
    handle: (ctx, rootKey) => asOperator(ctx, rootKey, () => ({ ok: true, value: { data: ctx.faults.clear() } })),
  }),
  defineRoute({
    ...common,
    path: '/_sim/snapshot',
    journal: false,
    streamReply: true,
    summary: 'The whole state as JSON (root keys and keys as hashes only).',
    request: emptyRequest,
    handle: (ctx, rootKey) => asOperator(ctx, rootKey, () => ({ ok: true, value: { data: ctx.engine.snapshot() } })),
  }),
  defineRoute({
    ...common,
    path: '/_sim/restore',
    summary: "Replace the whole state with a snapshot; a bad snapshot, or one without the operator's root key, changes nothing.",
    request: restoreRequest,
    maxBodyBytes: RESTORE_MAX_BODY_BYTES,
    streamBody: readRestoreBody,
    // The input is a body read as it arrived (StreamedRestore), or one read whole (with --workers, or from a journal).
    handle: (ctx, rootKey, input) =>
      asOperator(ctx, rootKey, () => asData(input instanceof StreamedRestore ? restoreStreamed(ctx, input) : restoreKeepingOperator(ctx, input.snapshot))),
  }),
  defineRoute({
    ...common,
    path: '/_sim/journal.start',
    journal: false,
    streamReply: true,
    summary:
      "Start journaling the order in which operations execute (for a replay through a fresh engine); answers a snapshot of the state now, its starting point, and the operator root key's hash. Restarts a running journal. On the production profile it is a sync point first: every buffered debit and unpublished rate-limit count lands in the database, the regions are emptied, and the answer names the profile's figures.",
    request: journalStartRequest,
    handle: (ctx, rootKey, input) =>
      asOperator(ctx, rootKey, () => {
        const data: JournalStart = { snapshot: undefined, startedAtMs: ctx.clock.now(), operatorRootKeyHash: ctx.operatorRootKeyHash };
        // The production profile: a sync point. Its regions hold state no snapshot has (counters,
        // caches, rate-limit counts not yet published, buffered debits, the delays' position);
        // rather than put all of it in the start, the database takes what it lacks and the regions
        // start empty (ProductionProfile#syncPoint). A replay then needs only the snapshot, the seed
        // (in it) and the figures to run a profile that decides every later call the same way.
        const profile = ctx.regions?.profile;
        if (profile !== undefined) {
          profile.syncPoint();
          data.profile = { name: 'production', figures: structuredClone(profile.figures) };
        }
        data.snapshot = ctx.engine.snapshot();
        ctx.journal.start(input.capacity);
        return { ok: true, value: { data } };
      }),
  }),
  defineRoute({
    ...common,
    path: '/_sim/journal.take',
    journal: false,
    summary:
      "Hand out (and forget) the oldest journal entries: route, service time, the root key's hash, input (a verified key as its hash) and the x-keysim-seq header of each executed call.",
    request: journalTakeRequest,
    handle: (ctx, rootKey, input) => asOperator(ctx, rootKey, () => ({ ok: true, value: { data: ctx.journal.take(input.max ?? MAX_JOURNAL_TAKE) } })),
  }),
  defineRoute({
    ...common,
    path: '/_sim/journal.stop',
    journal: false,
    summary: 'Stop journaling and drop what was not handed out.',
    request: emptyRequest,
    handle: (ctx, rootKey) =>
      asOperator(ctx, rootKey, () => {
        ctx.journal.stop();
        return { ok: true, value: { data: { active: false } } };
      }),
  }),
];
