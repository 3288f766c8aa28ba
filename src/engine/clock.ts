import { iso } from './iso.js';

/** Milliseconds since the Unix epoch, UTC. */
export type EpochMs = number;

/** The engine's only source of time. Everything that depends on "now" reads it here. */
export interface Clock {
  now(): EpochMs;
}

export type ClockMode = 'manual' | 'system';

/**
 * A clock the simulator can move: it only ever goes forward (like Stripe's test clocks), so
 * refill settlement and rate-limit windows never see time run backwards.
 */
export interface ControllableClock extends Clock {
  readonly mode: ClockMode;
  /**
   * Moves the clock to `toMs` and returns it. Throws a ClockMoveError when `toMs` is before now
   * (a test must not carry on at the wrong time) or is no instant.
   */
  set(toMs: EpochMs): EpochMs;
  /** Moves the clock forward by `byMs` (a whole number ≥ 0) and returns the new time; throws a ClockMoveError otherwise. */
  advance(byMs: number): EpochMs;
  /** Puts the clock back where it started: the one backwards move, used by a full reset. */
  resetToStart(): void;
  /**
   * Runs `fn` on one reading of the clock: every `now()` inside it answers `nowMs` (moved only by
   * `set`, `advance` or `resetToStart` inside it). The simulator runs each request this way, so
   * that the instant its journal records is the very instant the engine decides with — a running
   * clock read twice can straddle a window edge, and a replay at the journaled instant then
   * decides otherwise.
   */
  holding<T>(fn: (nowMs: EpochMs) => T): T;
  /** Where the clock stands, as plain data: a store checkpoint carries it to another replica. */
  position(): ClockPosition;
  /** Stands where `position()` stood (on a clock of the same mode and start). */
  resume(position: ClockPosition): void;
}

/** A manual clock's instant, or a running clock's offset from real time and its last reading. */
export type ClockPosition = { nowMs: EpochMs } | { offsetMs: number; lastMs: EpochMs };

/** The last instant a JavaScript Date can show (+275760-09-13): beyond it nothing can be dated. */
export const MAX_INSTANT_MS = 8.64e15;

function checkInstant(ms: number, what: string): string | undefined {
  if (!Number.isSafeInteger(ms)) return `${what} must be a whole number of milliseconds, got ${String(ms)}.`;
  if (ms < 0) return `${what} must not be before 1970-01-01T00:00:00Z, got ${ms}.`;
  if (ms > MAX_INSTANT_MS) return `${what} must not be after ${MAX_INSTANT_MS} ms (+275760-09-13, the last instant a date can show), got ${ms}.`;
  return undefined;
}

/**
 * A move of the clock that was refused: backwards, or to something that is no instant. The HTTP
 * admin surface answers it as a 400; in code it is thrown, so that a test cannot go on at a time
 * it did not ask for.
 */
export class ClockMoveError extends RangeError {
  constructor(message: string) {
    super(message);
    this.name = 'ClockMoveError';
  }
}

function backwards(nowMs: EpochMs, toMs: EpochMs): ClockMoveError {
  return new ClockMoveError(
    `cannot set the clock back: ${iso(toMs)} (${toMs}) is before now ${iso(nowMs)} (${nowMs}); the clock only moves forward. Use a later instant, or a reset to go back to the start.`,
  );
}

/** A frozen clock that moves only when told to. The default for tests and embedded runs. */
export class ManualClock implements ControllableClock {
  readonly mode = 'manual' as const;
  readonly #startMs: EpochMs;
  #nowMs: EpochMs;

  constructor(startMs: EpochMs) {
    const problem = checkInstant(startMs, 'The start time');
    if (problem !== undefined) throw new RangeError(problem);
    this.#startMs = startMs;
    this.#nowMs = startMs;
  }

  now(): EpochMs {
    return this.#nowMs;
  }

  set(toMs: EpochMs): EpochMs {
    const problem = checkInstant(toMs, 'The target time');
    if (problem !== undefined) throw new ClockMoveError(problem);
    if (toMs < this.#nowMs) throw backwards(this.#nowMs, toMs);
    this.#nowMs = toMs;
    return toMs;
  }

  advance(byMs: number): EpochMs {
    const problem = checkInstant(byMs, 'The step');
    if (problem !== undefined) throw new ClockMoveError(problem);
    return this.set(this.#nowMs + byMs);
  }

  resetToStart(): void {
    this.#nowMs = this.#startMs;
  }

  /** A frozen clock reads one instant anyway. */
  holding<T>(fn: (nowMs: EpochMs) => T): T {
    return fn(this.#nowMs);
  }

  position(): ClockPosition {
    return { nowMs: this.#nowMs };
  }

  resume(position: ClockPosition): void {
    if (!('nowMs' in position)) throw new Error('a manual clock resumes at an instant (nowMs)');
    this.#nowMs = position.nowMs;
  }
}

/**
 * Real time plus an offset: runs on its own, and can be pushed forward while running (time
 * travel). It never goes backwards, even if the real clock is stepped back (NTP): it then
 * stands still until real time catches up.
 */
export class SystemClock implements ControllableClock {
  readonly mode = 'system' as const;
  readonly #readRealMs: () => EpochMs;
  readonly #startOffsetMs: number;
  #offsetMs: number;
  #lastMs = 0;
  /** The instant a call holds the clock at (holding), else undefined. */
  #heldMs: EpochMs | undefined;

  /**
   * @param readRealMs the real time source (the caller passes `Date.now`: the engine never reads it).
   * @param startMs where the clock starts; defaults to real time.
   */
  constructor(readRealMs: () => EpochMs, startMs?: EpochMs) {
    this.#readRealMs = readRealMs;
    const realMs = readRealMs();
    if (startMs !== undefined) {
      const problem = checkInstant(startMs, 'The start time');
      if (problem !== undefined) throw new RangeError(problem);
    }
    this.#startOffsetMs = startMs === undefined ? 0 : startMs - realMs;
    this.#offsetMs = this.#startOffsetMs;
  }

  /** The running clock as it reads now, whether or not a call holds it. */
  #read(): EpochMs {
    const ms = this.#readRealMs() + this.#offsetMs;
    if (ms > this.#lastMs) this.#lastMs = ms;
    return this.#lastMs;
  }

  now(): EpochMs {
    return this.#heldMs ?? this.#read();
  }

  set(toMs: EpochMs): EpochMs {
    const problem = checkInstant(toMs, 'The target time');
    if (problem !== undefined) throw new ClockMoveError(problem);
    // Inside a held call "now" is the held instant: what the call has seen so far.
    const nowMs = this.now();
    if (toMs < nowMs) throw backwards(nowMs, toMs);
    // The offset follows real time as it is, so the clock reads toMs from here on.
    this.#offsetMs += toMs - this.#read();
    this.#lastMs = toMs;
    if (this.#heldMs !== undefined) this.#heldMs = toMs;
    return toMs;
  }

  advance(byMs: number): EpochMs {
    const problem = checkInstant(byMs, 'The step');
    if (problem !== undefined) throw new ClockMoveError(problem);
    return this.set(this.now() + byMs);
  }

  resetToStart(): void {
    this.#offsetMs = this.#startOffsetMs;
    this.#lastMs = 0;
    if (this.#heldMs !== undefined) this.#heldMs = this.#read();
  }

  position(): ClockPosition {
    return { offsetMs: this.#offsetMs, lastMs: this.#lastMs };
  }

  resume(position: ClockPosition): void {
    if (!('offsetMs' in position)) throw new Error('a running clock resumes at an offset (offsetMs, lastMs)');
    this.#offsetMs = position.offsetMs;
    this.#lastMs = position.lastMs;
  }

  holding<T>(fn: (nowMs: EpochMs) => T): T {
    // Nested: the outer call's instant stands.
    if (this.#heldMs !== undefined) return fn(this.#heldMs);
    this.#heldMs = this.#read();
    try {
      return fn(this.#heldMs);
    } finally {
      this.#heldMs = undefined;
    }
  }
}
