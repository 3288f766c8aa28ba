/**
 * A region's cache of rate-limit overrides: which override (or none) applies to a namespace's
 * identifier, as read from the database, kept for 60 s. A change made in this region drops it;
 * the other regions keep theirs until it is 60 s old.
 */
import type { EpochMs } from '../clock.js';
import type { OverrideRecord } from '../state.js';

interface Cached {
  override: OverrideRecord | undefined;
  readAtMs: EpochMs;
}

export class OverrideCache {
  readonly #entries = new Map<string, Cached>();

  constructor(private readonly ttlMs: number) {}

  match(namespaceId: string, identifier: string, nowMs: EpochMs, lookup: () => OverrideRecord | undefined): OverrideRecord | undefined {
    const key = `${namespaceId}\0${identifier}`;
    const cached = this.#entries.get(key);
    if (cached !== undefined && nowMs - cached.readAtMs < this.ttlMs) return cached.override;
    const override = lookup();
    this.#entries.set(key, { override, readAtMs: nowMs });
    return override;
  }

  clear(): void {
    this.#entries.clear();
  }
}
