/**
 * How long a server keeps an idle keep-alive connection, learnt from the closes themselves: many
 * servers and proxies close idle connections after a second or so without announcing it (no
 * `Keep-Alive: timeout=N`), and a request sent at the moment they do is lost with the connection —
 * its outcome unknown, and not re-sendable (it may have spent credits). Once a connection closed
 * while idle after T ms, connections idle for more than half of T are replaced before a send, so
 * that the race is not run again. The learner is shared by a client's connections to one server.
 *
 * The estimate can rise again, so that one early close (a proxy reloading, a server restarted)
 * does not make every later pause reconnect for the rest of the run:
 * - a `Keep-Alive: timeout=N` hint replaces whatever was learnt: the server said how long it keeps;
 * - without a hint, after REUSES_TO_RAISE reuses in a row of connections idle for at least
 *   RAISE_NEAR of the limit that were answered (no idle close seen meanwhile), the limit doubles
 *   (at most the default) and the close that set it is forgotten. If the server does close at the
 *   old T, the next idle close lowers it again: at most one lost race per raise, after 50
 *   answered reuses.
 */

/** Reuse idle connections this long at most before anything was learnt (undici's keep-alive cap). */
export const DEFAULT_IDLE_LIMIT_MS = 30_000;
/** Of an observed idle close after T ms, connections idle past this fraction of T are not reused. */
export const IDLE_SAFE_FRACTION = 0.5;
/** Answered reuses near the limit, in a row, after which the limit is raised. */
export const REUSES_TO_RAISE = 50;
/** A reuse counts towards a raise when the connection was idle at least this fraction of the limit. */
export const RAISE_NEAR = 0.5;
/** Replace an idle connection this long before the server's announced keep-alive timeout (or at half of it, if sooner). */
export const HINT_MARGIN_MS = 1_000;

export class IdleCloseLearner {
  #limitMs = DEFAULT_IDLE_LIMIT_MS;
  #shortestCloseMs: number | undefined;
  #reusesNearLimit = 0;

  /** The longest a connection may have been idle to be reused, ms. */
  get limitMs(): number {
    return this.#limitMs;
  }

  /** The shortest idle time after which the server was seen closing a connection, ms (undefined: none seen, or forgotten). */
  get shortestCloseMs(): number | undefined {
    return this.#shortestCloseMs;
  }

  /** A connection with nothing outstanding was closed by the server after `idleMs` of silence. */
  closedIdle(idleMs: number): void {
    if (!(idleMs >= 0)) return;
    this.#reusesNearLimit = 0;
    if (this.#shortestCloseMs !== undefined && idleMs >= this.#shortestCloseMs) return;
    this.#shortestCloseMs = idleMs;
    this.#limitMs = Math.min(this.#limitMs, Math.floor(idleMs * IDLE_SAFE_FRACTION));
  }

  /** A connection idle for `idleMs` was reused and its request answered. */
  reused(idleMs: number): void {
    if (!(idleMs >= RAISE_NEAR * this.#limitMs) || this.#limitMs >= DEFAULT_IDLE_LIMIT_MS) return;
    if (++this.#reusesNearLimit < REUSES_TO_RAISE) return;
    this.#reusesNearLimit = 0;
    this.#shortestCloseMs = undefined;
    this.#limitMs = Math.min(DEFAULT_IDLE_LIMIT_MS, Math.max(1, this.#limitMs * 2));
  }

  /** An answer announced `Keep-Alive: timeout` of `timeoutMs`: it replaces what was learnt. */
  hinted(timeoutMs: number): void {
    if (!(timeoutMs >= 0)) return;
    this.#reusesNearLimit = 0;
    this.#shortestCloseMs = undefined;
    this.#limitMs = Math.max(0, Math.min(DEFAULT_IDLE_LIMIT_MS, timeoutMs - HINT_MARGIN_MS, timeoutMs / 2));
  }
}
