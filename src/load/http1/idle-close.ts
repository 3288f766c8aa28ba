/**
 * How long a server keeps an idle keep-alive connection, learnt from the closes themselves: many
 * servers and proxies close idle connections after a second or so without announcing it (no
 * `Keep-Alive: timeout=N`), and a request sent at the moment they do is lost with the connection —
 * its outcome unknown, and not re-sendable (it may have spent credits). Once a connection closed
 * while idle after T ms, connections idle for more than half of T are replaced before a send, so
 * that the race is not run again. The learner is shared by a client's connections to one server.
 */

/** Reuse idle connections this long at most before anything was learnt (undici's keep-alive cap). */
export const DEFAULT_IDLE_LIMIT_MS = 30_000;
/** Of an observed idle close after T ms, connections idle past this fraction of T are not reused. */
export const IDLE_SAFE_FRACTION = 0.5;

export class IdleCloseLearner {
  #limitMs = DEFAULT_IDLE_LIMIT_MS;
  #shortestCloseMs: number | undefined;

  /** The longest a connection may have been idle to be reused, ms. */
  get limitMs(): number {
    return this.#limitMs;
  }

  /** The shortest idle time after which the server was seen closing a connection, ms (undefined: none seen). */
  get shortestCloseMs(): number | undefined {
    return this.#shortestCloseMs;
  }

  /** A connection with nothing outstanding was closed by the server after `idleMs` of silence. */
  closedIdle(idleMs: number): void {
    if (!(idleMs >= 0)) return;
    if (this.#shortestCloseMs !== undefined && idleMs >= this.#shortestCloseMs) return;
    this.#shortestCloseMs = idleMs;
    this.#limitMs = Math.min(this.#limitMs, Math.floor(idleMs * IDLE_SAFE_FRACTION));
  }
}
