/**
 * A rate limiter with the classic bug: a fixed window instead of the sliding one. It counts cost
 * per window floor(now / duration) and forgets the previous window entirely, so a burst at the
 * limit just before a window edge and another just after it are both admitted. Written apart from
 * the engine on purpose: the checker must recognise the bug from the answers alone.
 */

export interface LimitAnswer {
  limit: number;
  remaining: number;
  /** Unix ms at which the current fixed window ends (what a correct service reports too). */
  reset: number;
  success: boolean;
}

export class FixedWindowLimiter {
  readonly #counts = new Map<string, { window: number; used: number }>();

  /** Decides one ratelimit.limit request at service time `nowMs`. */
  limit(request: { identifier: string; limit: number; duration: number; cost?: number }, nowMs: number): LimitAnswer {
    const cost = request.cost ?? 1;
    const window = Math.floor(nowMs / request.duration);
    const key = `${request.identifier}\0${request.duration}`;
    const stored = this.#counts.get(key);
    const used = stored !== undefined && stored.window === window ? stored.used : 0;
    const reset = (window + 1) * request.duration;
    if (cost > 0 && used + cost > request.limit) return { limit: request.limit, remaining: 0, reset, success: false };
    this.#counts.set(key, { window, used: used + cost });
    return { limit: request.limit, remaining: request.limit - used - cost, reset, success: true };
  }
}
