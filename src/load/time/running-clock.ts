/**
 * Service-clock bounds for load on a simulator whose clock runs by itself (`keysim serve` on the
 * system clock, possibly with an offset such as `--start 2028-02-28T23:59:00Z`), reached over a
 * URL. One read of the service clock between two wall-clock readings t0 and t1 gives s; the
 * service clock runs at the wall clock's rate, so at wall time w it reads between s + (w − t1) and
 * s + (w − t0). Each request of the history is bracketed by these (lowerMs read when it is sent,
 * upperMs when it completes), instead of wall times that miss the simulator's offset.
 */
import type { ServiceClockBounds } from './clock-driver.js';

/** Slack for the two machines' clocks drifting apart during a phase, ms. */
const DRIFT_SLACK_MS = 50;

export async function runningClockBounds(serviceNow: () => Promise<number>, wallNow: () => number = Date.now): Promise<ServiceClockBounds> {
  const t0 = wallNow();
  const s = await serviceNow();
  const t1 = wallNow();
  return {
    get lowerMs() {
      return s + (wallNow() - t1) - DRIFT_SLACK_MS;
    },
    get upperMs() {
      return s + (wallNow() - t0) + DRIFT_SLACK_MS;
    },
  };
}
