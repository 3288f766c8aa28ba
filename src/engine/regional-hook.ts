/**
 * What one region of the production profile puts in front of the service (regional.ts): its
 * key cache, its credit counters, its rate-limit counters and its cache of overrides. Its own
 * file, so that the context names it without a cycle.
 */
import type { EpochMs } from './clock.js';
import type { WindowCheck, WindowDecision } from './ratelimit-window.js';
import type { KeyRecord, OverrideRecord } from './state.js';

export interface RegionalHook {
  /** The record verification decides on (the region's copy), or undefined: NOT_FOUND. */
  readKey(digest: string): KeyRecord | undefined;
  /**
   * Spends `cost` credits of a key that has a usage limit, in the region's counter: true when the
   * balance covered it. Sets `key.remaining` (the region's copy) to the region's balance after.
   */
  spendCredits(key: KeyRecord, cost: number): boolean;
  /** Rate-limit windows decided on the region's own counters (as `decideWindows` decides them). */
  decideWindows(checks: readonly WindowCheck[], nowMs: EpochMs): { passed: boolean; decisions: WindowDecision[] };
  /** The override of a namespace's identifier as the region knows it; `lookup` reads the database. */
  matchOverride(namespaceId: string, identifier: string, lookup: () => OverrideRecord | undefined): OverrideRecord | undefined;
}
