/**
 * The service clock a scenario starts with, settled before its setup: `clock.startAt` moves it
 * there (the embedded simulator is already created at that instant), and every phase's sweep of
 * simulated time is checked against it, so that a sweep into the past fails before anything is
 * made or sent, with what to do about it (docs/scenarios.md#month-end-pitfalls).
 */
import { iso } from '../../engine/iso.js';
import type { PhaseSpec, Scenario, ScenarioContext } from './scenario.js';

/** Whether the scenario needs control of the service clock (`requires: ['clock']` or a `clock` setting). */
export function requiresClock(scenario: Pick<Scenario<unknown>, 'requires' | 'clock'>): boolean {
  return scenario.requires?.includes('clock') === true || scenario.clock !== undefined;
}

/** `clock.startAt` as Unix ms; undefined when the scenario has none; throws when it is no instant. */
export function clockStartMs(scenario: Pick<Scenario<unknown>, 'clock'>): number | undefined {
  const startAt = scenario.clock?.startAt;
  if (startAt === undefined) return undefined;
  const ms = typeof startAt === 'number' ? startAt : Date.parse(startAt);
  if (!Number.isSafeInteger(ms) || ms < 0) throw new Error(`clock.startAt must be an ISO-8601 instant or Unix ms, got ${JSON.stringify(startAt)}`);
  return ms;
}

/**
 * Moves the service clock to `clock.startAt` before setup and returns the clock the run starts
 * with (undefined on a target without clock control). Throws a message saying what to do when the
 * target has no clock to move or the clock is already past the instant (it never goes back).
 */
export async function startServiceClock(scenario: Scenario<unknown>, ctx: ScenarioContext): Promise<number | undefined> {
  const startMs = clockStartMs(scenario);
  const admin = ctx.admin;
  if (admin === undefined) {
    if (startMs !== undefined)
      throw new Error(
        `its clock.startAt (${iso(startMs)}) needs control of the service clock, which a live deployment does not give: run it on the simulator (--target sim, or the URL of a keysim serve)`,
      );
    return undefined;
  }
  const nowMs = await admin.clockNow();
  if (startMs === undefined || startMs === nowMs) return nowMs;
  if (startMs < nowMs) {
    throw new Error(
      `its clock.startAt is ${iso(startMs)}, but the simulator's clock is already at ${iso(nowMs)} and never goes back: ` +
        'restart the keysim serve (or start it with --start) at or before that instant, or use the embedded simulator (--target sim)',
    );
  }
  return admin.clockSet(startMs);
}

/** Thrown by the fixtures stand-in when `phases` reads them: the sweeps are then checked after setup. */
class FixturesNotReady extends Error {}

const NOT_READY: unknown = new Proxy(
  {},
  {
    get() {
      throw new FixturesNotReady();
    },
    has() {
      throw new FixturesNotReady();
    },
  },
);

/**
 * The phases' sweeps of simulated time, when `phases` can tell them without the fixtures (it is
 * called with a stand-in that throws when read); undefined when it cannot.
 */
function phasesBeforeSetup(scenario: Scenario<unknown>, ctx: ScenarioContext): ReadonlyArray<PhaseSpec<unknown>> | undefined {
  if (scenario.phases === undefined) return [];
  try {
    return scenario.phases(ctx, NOT_READY);
  } catch {
    // Reading the fixtures, or any other failure: the real call after setup says what is wrong.
    return undefined;
  }
}

/**
 * A message naming every phase whose sweep starts before `clockMs`, and what to do; undefined
 * when none does. `when` says at which point the clock was read ("before setup", "after setup").
 */
export function sweepsInThePast(phases: ReadonlyArray<PhaseSpec<unknown>>, clockMs: number, when: string, hasStartAt: boolean): string | undefined {
  const early = phases.filter((p) => p.serviceClock !== undefined && p.serviceClock.fromMs < clockMs);
  if (early.length === 0) return undefined;
  const earliest = Math.min(...early.map((p) => p.serviceClock?.fromMs ?? clockMs));
  const list = early.map((p) => `"${p.name}" from ${iso(p.serviceClock?.fromMs ?? 0)}`).join(', ');
  const fix = hasStartAt
    ? `set the scenario's clock.startAt at or before ${iso(earliest)}, and make the setup leave the clock there (it never goes back)`
    : `set clock: { startAt: '${iso(earliest)}' } (or earlier) on the scenario, so that the run starts there and the fixtures are created before the sweep`;
  return `the service clock is at ${iso(clockMs)} ${when}, later than the start of phase ${list}: the clock never goes back. ${fix[0]?.toUpperCase()}${fix.slice(1)}.`;
}

/** Before setup: a message when a phase's sweep (known without the fixtures) starts before the clock. */
export function sweepProblemBeforeSetup(scenario: Scenario<unknown>, ctx: ScenarioContext, clockMs: number | undefined): string | undefined {
  if (clockMs === undefined) return undefined;
  const phases = phasesBeforeSetup(scenario, ctx);
  return phases === undefined ? undefined : sweepsInThePast(phases, clockMs, 'before setup', scenario.clock !== undefined);
}
