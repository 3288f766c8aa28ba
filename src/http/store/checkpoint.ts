/**
 * A replica's whole state after one entry of the log, as plain JSON (docs/simulator.md#replicas-on-redis):
 * what a replica starting later, or one that fell behind a trimmed log, resumes from instead of
 * applying the log from its first entry. Everything an entry can change is in it — the engine
 * (with its id sequence), the engine faults' decisions, the clock, the faults, the simulator's own
 * API rate limit and the journal — so a replica resumed from it answers every later entry as the
 * replica that wrote it does.
 *
 * The engine part is the engine's snapshot as the state stands, refills due but not applied
 * included: settling them here, on the one replica that keeps the checkpoint, would change its
 * state and not the others' (a skip-refill fault may later skip a refill settled here).
 */
import type { ClockPosition, EngineSnapshot } from '../../engine/index.js';
import type { ApiRateLimitPosition } from '../api-rate-limit.js';
import type { FaultsView } from '../faults.js';
import type { JournalPosition } from '../journal.js';
import type { RouteContext } from '../route.js';

export const CHECKPOINT_FORMAT = 'keysim-checkpoint/1';

export interface CheckpointState {
  format: typeof CHECKPOINT_FORMAT;
  clock: ClockPosition;
  engine: EngineSnapshot;
  faultDice: [number, number, number, number];
  faults: FaultsView;
  apiRateLimit: ApiRateLimitPosition;
  journal: JournalPosition;
}

/** The state of `ctx` now (between two entries). The clock first: the snapshot reads it. */
export function captureState(ctx: RouteContext): CheckpointState {
  return {
    format: CHECKPOINT_FORMAT,
    clock: ctx.clock.position(),
    // Not settled: the checkpoint must leave the state it copies as it is (takeSnapshot).
    engine: ctx.engine.exactSnapshot(),
    faultDice: ctx.engine.faultDicePosition(),
    faults: ctx.faults.view,
    apiRateLimit: ctx.apiRateLimit.position(),
    journal: ctx.journal.position(),
  };
}

/**
 * Puts `ctx` (built from the same start) in a checkpoint's state. A checkpoint this keysim cannot
 * read throws: every replica runs the same version (genesis.ts), so that is a bug or a store
 * written by hand, and the replica must not serve from a state it could not take in.
 */
export function resumeState(ctx: RouteContext, state: CheckpointState): void {
  const format: unknown = state.format;
  if (format !== CHECKPOINT_FORMAT) throw new Error(`the store's checkpoint is in the format ${JSON.stringify(format)}, not ${CHECKPOINT_FORMAT}`);
  const restored = ctx.engine.restore(state.engine);
  if (!restored.ok) throw new Error(`the store's checkpoint does not restore: ${restored.error.detail}`);
  // A view is a whole configuration (every rate, 0 = off): setting it is setting none when none was set.
  const set = ctx.faults.set(state.faults, 'checkpoint');
  if (!set.ok) throw new Error(`the store's checkpoint holds faults this keysim refuses: ${set.error.detail}`);
  // After the faults: setting them starts their decisions afresh, and the checkpoint's go on.
  ctx.engine.resumeFaultDice(state.faultDice);
  ctx.clock.resume(state.clock);
  ctx.apiRateLimit.resume(state.apiRateLimit);
  ctx.journal.resume(state.journal);
}
