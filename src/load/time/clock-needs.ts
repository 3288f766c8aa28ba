/**
 * What a scenario needs of the service clock, against what the target's clock does, judged
 * before the run touches the target: a scenario that moves the clock (`requires: ['clock']`,
 * `clock.startAt`, sweeps of simulated time) needs a frozen (manual) clock. Against a keysim serve
 * whose clock runs by itself it would set that clock forward for good, make its fixtures, and only
 * then fail when a sweep cannot start; it is refused instead, before anything is sent.
 */
import type { Scenario, SimulatorAdmin } from '../scenario/index.js';
import { clockStartMs, requiresClock } from '../scenario/index.js';

/** How a scenario wants the embedded simulator's clock during its run: frozen (default) or running. */
export function wantsRunningClock(scenario: Pick<Scenario<unknown>, 'clockMode'>): boolean {
  return scenario.clockMode === 'running';
}

/** The clock option of the embedded simulator a scenario gets: a running (system) clock for clockMode 'running'. */
export function embeddedClockOption(scenario: Pick<Scenario<unknown>, 'clockMode'>): { clock?: 'system' } {
  return wantsRunningClock(scenario) ? { clock: 'system' } : {};
}

/**
 * Why the scenario cannot run against this simulator's clock, with how to run it; undefined when
 * it can (or when the target has no admin surface: a live target is handled by the skip of clock
 * scenarios). Reads the clock's mode only: changes nothing.
 */
export async function clockModeRefusal(
  scenario: Scenario<unknown>,
  admin: Pick<SimulatorAdmin, 'clockMode'> | undefined,
  url: string,
): Promise<string | undefined> {
  if (admin === undefined || !requiresClock(scenario)) return undefined;
  if ((await admin.clockMode()) === 'manual') return undefined;
  const startMs = clockStartMs(scenario);
  const start = startMs === undefined ? '' : ` --start ${new Date(startMs).toISOString()}`;
  return (
    `it moves the service clock, which needs a frozen (manual) clock, but the simulator at ${url} runs on the system clock: ` +
    `nothing was sent and its clock was not touched. Run it against a keysim serve started with --clock manual${start ? ` (e.g. keysim serve --clock manual${start})` : ''}, or on the embedded simulator (--target sim)`
  );
}
