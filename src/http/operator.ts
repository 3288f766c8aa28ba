/**
 * Who may run the admin surface `/_sim/*`: the simulator's operator only.
 *
 * The operator's credential is the root key the simulator started with (given to `keysim serve`
 * or `createSimulator()`, or generated and printed by them). It is a root key of the start
 * workspace like any other — it also calls the service — but only its hash is kept, and only a
 * request bearing it passes the admin surface. Every other root key, whatever its permissions or
 * workspace, is a workspace's credential: it calls the service and gets 403 on `/_sim/*`, because
 * the admin surface acts on the whole simulator (every workspace, the clock, snapshots holding
 * recoverable plaintexts, the journal).
 */
import { randomBytes } from 'node:crypto';
import { CheckedSnapshot, type EngineStats, type Result, base58Encode } from '../engine/index.js';
import type { Caller } from '../engine/auth.js';
import { fail, invalid, ok } from '../engine/errors.js';
import type { StreamedRestore } from './restore-body.js';
import type { RouteContext } from './route.js';

/** The caller when it is the operator; no root key → 400, unknown → 401, any other root key → 403. */
export function authorizeOperator(ctx: Pick<RouteContext, 'engine' | 'operatorRootKeyHash'>, rootKey: string | undefined): Result<Caller> {
  const caller = ctx.engine.admin.authenticate(rootKey);
  if (!caller.ok) return caller;
  if (caller.value.rootKeyHash !== ctx.operatorRootKeyHash) {
    return fail(
      'err:service:authorization:insufficient_permissions',
      "The simulator's admin surface (/_sim/*) answers only its operator: the root key the simulator was started with (keysim serve --root-key, or the one it printed). Workspace root keys call the service's API only.",
    );
  }
  return caller;
}

/**
 * Replaces the state with a snapshot — `/_sim/restore` and `keysim serve --restore` alike — unless
 * it has no root key with the operator's hash: restoring it would leave the operator's root key
 * unknown and the admin surface (reset and restore included) unreachable until a restart.
 * Either way a refused snapshot changes nothing. A clock behind the snapshot's instant moves to it.
 */
export function restoreKeepingOperator(ctx: Pick<RouteContext, 'engine' | 'operatorRootKeyHash' | 'clock'>, snapshot: unknown): Result<EngineStats> {
  // A snapshot read from text record by record (a file: keysim serve --restore) is checked already.
  if (snapshot instanceof CheckedSnapshot) {
    if (!snapshot.hasRootKeyHash(ctx.operatorRootKeyHash)) return lockedOut();
    const stats = ctx.engine.restoreChecked(snapshot);
    if (ctx.clock.now() < snapshot.takenAtMs) ctx.clock.set(snapshot.takenAtMs);
    return ok(stats);
  }
  if (snapshotKeepsOperator(snapshot, ctx.operatorRootKeyHash) === false) return lockedOut();
  const restored = ctx.engine.restore(snapshot);
  // A state resumes at the instant it was taken, or later: its refill schedule and windows were
  // settled up to then, and a clock behind them (a reset since, or another simulator's snapshot)
  // would give a state whose own next snapshot no longer passes the restore's checks.
  if (restored.ok) {
    const takenAtMs = (snapshot as { takenAtMs: number }).takenAtMs;
    if (ctx.clock.now() < takenAtMs) ctx.clock.set(takenAtMs);
  }
  return restored;
}

/**
 * The same for a restore body read as it arrived (restore-body.ts): the same checks in the same
 * order, the state swapped only if all pass. While the journal records, the restore is journaled
 * as the snapshot it stands for.
 */
export function restoreStreamed(ctx: Pick<RouteContext, 'engine' | 'operatorRootKeyHash' | 'clock' | 'journal'>, input: StreamedRestore): Result<EngineStats> {
  if (input.rootKeys.listed && !input.rootKeys.hashes.includes(ctx.operatorRootKeyHash)) return lockedOut();
  if (!input.checked.ok) return input.checked;
  const checked = input.checked.value;
  if (ctx.journal.active) input.journalCopy = { snapshot: checked.plain() };
  const restored = ctx.engine.restoreChecked(checked);
  if (ctx.clock.now() < checked.takenAtMs) ctx.clock.set(checked.takenAtMs);
  return ok(restored);
}

function lockedOut(): Result<never> {
  return invalid(
    'body.snapshot.rootKeys',
    "The snapshot has no root key with the operator's hash: restoring it would lock the operator out of the admin surface (reset and restore included) until a restart. Nothing was changed.",
    'Restore a snapshot taken from a simulator started with the same root key, or start this one with a root key of that snapshot (keysim serve --root-key).',
  );
}

/** Whether a snapshot (as sent to a restore) still holds the operator's root key. */
function snapshotKeepsOperator(snapshot: unknown, operatorRootKeyHash: string): boolean | 'unknown' {
  if (typeof snapshot !== 'object' || snapshot === null) return 'unknown';
  const rootKeys = (snapshot as { rootKeys?: unknown }).rootKeys;
  if (!Array.isArray(rootKeys)) return 'unknown';
  return rootKeys.some((r: unknown) => typeof r === 'object' && r !== null && (r as { hash?: unknown }).hash === operatorRootKeyHash);
}

/**
 * A root key no one can guess or reproduce (node:crypto, 192 bits): what `keysim serve` starts
 * with when given neither a root key nor a seed.
 */
export function randomRootKey(): string {
  return base58Encode(randomBytes(24), 'root_');
}
