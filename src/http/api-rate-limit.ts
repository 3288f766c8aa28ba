/**
 * A rate limit on the simulator's own API (off by default): when set through
 * `/_sim/apiRateLimit.set`, each root key (and anonymous verification as one caller) may make
 * `limit` requests per `durationMs` of the service clock, and the rest are answered 429 —
 * so clients can test how they handle the production service's 429s. It reuses the engine's
 * sliding window.
 */
import { type EpochMs, decideWindows, windowCounterKey } from '../engine/index.js';
import type { WindowCounter } from '../engine/state.js';

export interface ApiRateLimitConfig {
  limit: number;
  durationMs: number;
}

export interface ApiRateLimitPosition {
  config: ApiRateLimitConfig | null;
  counters: Array<[string, WindowCounter]>;
}

export class ApiRateLimiter {
  #config: ApiRateLimitConfig | null = null;
  #counters = new Map<string, WindowCounter>();

  get config(): ApiRateLimitConfig | null {
    return this.#config;
  }

  /** Sets (or, with null, removes) the limit; counting starts afresh. */
  set(config: ApiRateLimitConfig | null): void {
    this.#config = config;
    this.#counters.clear();
  }

  /** The limit and its counters as plain data (a store checkpoint carries them). */
  position(): ApiRateLimitPosition {
    return { config: this.#config === null ? null : { ...this.#config }, counters: [...this.#counters].map(([key, counter]) => [key, { ...counter }]) };
  }

  resume(position: ApiRateLimitPosition): void {
    this.#config = position.config === null ? null : { ...position.config };
    this.#counters = new Map(position.counters.map(([key, counter]) => [key, { ...counter }]));
  }

  /** Counts one request of `caller` (a root-key hash, or '' for anonymous); false = answer 429. */
  admit(caller: string, nowMs: EpochMs): boolean {
    const config = this.#config;
    if (config === null) return true;
    const check = { key: windowCounterKey('api', caller, config.durationMs), limit: config.limit, durationMs: config.durationMs, cost: 1 };
    return decideWindows(this.#counters, [check], nowMs).passed;
  }
}
