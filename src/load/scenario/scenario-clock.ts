/**
 * The simulator's clock from a scenario: the admin surface (only a simulator has one) and moving
 * the service clock forward to an instant.
 */
import { iso } from '../../engine/iso.js';
import type { ScenarioContext, SimulatorAdmin } from './scenario.js';

/**
 * The admin surface of the simulator the scenario runs against. Throws an Error saying so when
 * the target is a live deployment (which has no admin surface): declare `requires: ['clock']` on
 * the scenario and keysim skips it on a live target instead of failing in it.
 * @param what who asks, for the message (e.g. the scenario's name); default "this scenario".
 */
export function requireAdmin(ctx: Pick<ScenarioContext, 'admin'>, what = 'this scenario'): SimulatorAdmin {
  if (ctx.admin === undefined) {
    throw new Error(
      `${what} moves the service clock, which only the simulator allows (--target sim, or the URL of a keysim serve); ` +
        "declare requires: ['clock'] on the scenario so that keysim skips it on a live target",
    );
  }
  return ctx.admin;
}

/**
 * Moves the service clock to `toMs` (Unix ms) and returns the clock's new value. Throws, saying
 * both instants, when the clock is already past `toMs`: it never goes back (start the run earlier
 * with the scenario's `clock.startAt`).
 */
export async function moveClockTo(admin: SimulatorAdmin, toMs: number): Promise<number> {
  const nowMs = await admin.clockNow();
  if (toMs < nowMs) {
    throw new Error(
      `the service clock is at ${iso(nowMs)}, already past the planned ${iso(toMs)} ` +
        "(it never goes back: start the scenario's clock earlier with clock.startAt)",
    );
  }
  return toMs === nowMs ? nowMs : admin.clockSet(toMs);
}

/** Unix ms as an ISO-8601 instant, for messages: the engine's one `iso`, here for the scenarios that import it with the clock. */
export { iso } from '../../engine/iso.js';
