/**
 * Load on simulated time: a phase whose `serviceClock` is { fromMs, toMs } runs while the
 * simulator's clock sweeps linearly from fromMs (at the phase's start) to toMs (at its planned
 * end), moved through the admin surface (`/_sim/clock.set`). A month end, a daily midnight or a
 * thousand rate-limit windows are then crossed under load in seconds of wall time.
 *
 * The sweep is time-driven, not request-driven, so it serves both load models. One set is in
 * flight at a time, the next one about `intervalMs` after the previous one was sent; its target
 * is computed from the wall-time fraction of the planned duration, so a slow set only makes the
 * clock jump further next time. The clock never goes backwards.
 *
 * Bounds for the history (history.ts: serviceInvokeMs ≤ the service clock at execution ≤
 * serviceCompleteMs). The simulator executes requests one at a time and its clock only moves
 * when set (a manual clock, as the embedded simulator has):
 *   lowerMs — the last value the simulator acknowledged. The clock was there when the answer left,
 *             so a request sent from now on executes at or after it.
 *   upperMs — the highest value issued so far (set before the set is sent). The clock has never
 *             held a value that was not issued before, so a request answered now executed at or
 *             before it.
 * On a clock that also runs by itself (a `system` clock) upperMs would not bound it: the driver is
 * for frozen clocks.
 */
import { performance } from 'node:perf_hooks';
import { iso } from '../../engine/iso.js';
import type { SimulatorAdmin } from '../scenario/index.js';

/** What the history needs from the service clock while a phase runs. */
export interface ServiceClockBounds {
  /** At most the service clock for any request sent from now on, Unix ms. */
  readonly lowerMs: number;
  /** At least the service clock at which any request answered by now executed, Unix ms. */
  readonly upperMs: number;
}

/** The sweep could not start or failed: its message says why (the runner wraps it in ScenarioFailedError). */
export class ServiceClockError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ServiceClockError';
  }
}

export interface ClockDriverOptions {
  /** The simulator's admin surface (clockNow, clockSet, clockMode); undefined on a live target, which fails. */
  admin: Pick<SimulatorAdmin, 'clockNow' | 'clockSet' | 'clockMode'> | undefined;
  /** Service time at the phase's start, Unix ms. */
  fromMs: number;
  /** Service time at the phase's planned end, Unix ms (≥ fromMs). */
  toMs: number;
  /** The phase's planned wall duration, ms. */
  durationMs: number;
  /** Wall time between the starts of two sets, ms (default 5; a set still in flight delays the next). */
  intervalMs?: number;
  /** Monotonic wall clock, ms (default performance.now). */
  now?: () => number;
}

const DEFAULT_INTERVAL_MS = 5;

/**
 * What is wrong with a phase's sweep before anything runs (the runner checks every phase up
 * front, so a bad last phase does not throw away the ones before it); undefined when nothing is.
 * Whether the clock has already passed fromMs can only be known when the phase starts.
 */
export function serviceClockProblem(sweep: { fromMs: number; toMs: number; durationMs: number }, clockControl: boolean): string | undefined {
  if (!clockControl) {
    return 'its load runs on simulated time (serviceClock), which needs control of the service clock: this target has none (a live deployment). Run it on the simulator.';
  }
  const { fromMs, toMs, durationMs } = sweep;
  if (!Number.isSafeInteger(fromMs) || !Number.isSafeInteger(toMs) || fromMs < 0 || toMs < fromMs) {
    return `serviceClock must be whole Unix ms with 0 ≤ fromMs ≤ toMs, got fromMs ${fromMs}, toMs ${toMs}.`;
  }
  if (!(durationMs > 0)) return `a sweep needs a planned duration > 0 ms, got ${durationMs}.`;
  return undefined;
}

/** Moves the simulator's clock across one phase; see the top of the file. */
export class ClockDriver implements ServiceClockBounds {
  readonly fromMs: number;
  readonly toMs: number;
  readonly durationMs: number;
  readonly #admin: Pick<SimulatorAdmin, 'clockNow' | 'clockSet' | 'clockMode'>;
  readonly #intervalMs: number;
  readonly #now: () => number;
  #wallStartMs: number;
  #lowerMs: number;
  #upperMs: number;
  #sets = 0;
  #stopping = false;
  #error: unknown;
  #wake: (() => void) | undefined;
  #timer: NodeJS.Timeout | undefined;
  #loop: Promise<void> = Promise.resolve();

  private constructor(options: ClockDriverOptions, admin: Pick<SimulatorAdmin, 'clockNow' | 'clockSet' | 'clockMode'>, clockMs: number) {
    this.fromMs = options.fromMs;
    this.toMs = options.toMs;
    this.durationMs = options.durationMs;
    this.#admin = admin;
    this.#intervalMs = options.intervalMs ?? DEFAULT_INTERVAL_MS;
    this.#now = options.now ?? (() => performance.now());
    this.#lowerMs = clockMs;
    this.#upperMs = clockMs;
    this.#wallStartMs = this.#now();
  }

  /**
   * Sets the clock to fromMs (awaited) and starts the sweep. Throws a ServiceClockError when the
   * range is not valid or the clock is already past fromMs (it never goes back).
   */
  static async start(options: ClockDriverOptions): Promise<ClockDriver> {
    const { admin, fromMs } = options;
    const problem = serviceClockProblem(options, admin !== undefined);
    if (problem !== undefined || admin === undefined) throw new ServiceClockError(problem ?? 'no admin surface');
    // On a running clock upperMs would not bound the service time (see the top of the file).
    if ((await admin.clockMode()) !== 'manual') {
      throw new ServiceClockError(
        'its load runs on simulated time (serviceClock), which needs a manual (frozen) simulator clock; this simulator runs on the system clock. Start it with --clock manual (the embedded simulator always is).',
      );
    }
    const nowMs = await admin.clockNow();
    if (fromMs < nowMs) {
      throw new ServiceClockError(
        `serviceClock.fromMs ${iso(fromMs)} is earlier than the service clock, already at ${iso(nowMs)}: the clock never goes back. Start the sweep at or after ${iso(nowMs)}.`,
      );
    }
    const driver = new ClockDriver(options, admin, nowMs);
    if (fromMs > nowMs) await driver.#set(fromMs);
    driver.#wallStartMs = driver.#now();
    driver.#loop = driver.#run();
    return driver;
  }

  /** Wall time (options.now) the sweep is anchored at: when the clock was acknowledged at fromMs. */
  get wallStartMs(): number {
    return this.#wallStartMs;
  }

  get lowerMs(): number {
    return this.#lowerMs;
  }

  get upperMs(): number {
    return this.#upperMs;
  }

  /** Clock sets sent (the one to fromMs and the final one to toMs included, when they were needed). */
  get sets(): number {
    return this.#sets;
  }

  /** The service time the sweep aims at, at wall time `wallMs`. */
  targetAt(wallMs: number): number {
    const fraction = Math.min(1, Math.max(0, (wallMs - this.#wallStartMs) / this.durationMs));
    return Math.min(this.toMs, this.fromMs + Math.floor((this.toMs - this.fromMs) * fraction));
  }

  /** Stops the sweep and sets exactly toMs (awaited). Rethrows a set that failed during the sweep. */
  async finish(): Promise<number> {
    await this.#stop();
    if (this.#error !== undefined) throw this.#failure();
    if (this.#upperMs < this.toMs || this.#lowerMs < this.toMs) await this.#set(this.toMs);
    return this.#lowerMs;
  }

  /** Stops the sweep where it is (an interrupted run); never throws. */
  async cancel(): Promise<void> {
    await this.#stop();
  }

  async #stop(): Promise<void> {
    this.#stopping = true;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#wake?.();
    await this.#loop;
  }

  async #set(targetMs: number): Promise<void> {
    // Issued before it is sent: from now on the clock may be there.
    this.#upperMs = Math.max(this.#upperMs, targetMs);
    this.#sets++;
    const acknowledgedMs = await this.#admin.clockSet(targetMs);
    this.#lowerMs = Math.max(this.#lowerMs, acknowledgedMs);
    this.#upperMs = Math.max(this.#upperMs, this.#lowerMs);
  }

  #failure(): ServiceClockError {
    const cause = this.#error instanceof Error ? this.#error.message : String(this.#error);
    return new ServiceClockError(`moving the service clock from ${iso(this.fromMs)} to ${iso(this.toMs)} failed at ${iso(this.#upperMs)}: ${cause}`);
  }

  async #run(): Promise<void> {
    while (!this.#stopping) {
      const tickMs = this.#now();
      const targetMs = this.targetAt(tickMs);
      if (targetMs > this.#upperMs) {
        try {
          await this.#set(targetMs);
        } catch (error) {
          this.#error = error;
          return;
        }
      }
      if (this.#lowerMs >= this.toMs || this.#stopping) return;
      const waitMs = this.#intervalMs - (this.#now() - tickMs);
      await new Promise<void>((resolve) => {
        this.#wake = resolve;
        this.#timer = setTimeout(resolve, Math.max(0, waitMs));
        this.#timer.unref();
      });
      this.#wake = undefined;
      this.#timer = undefined;
    }
  }
}
