/**
 * What one region of the production profile puts in front of verification (regional.ts): its
 * key cache and its credit counters. Its own file, so that the context names it without a cycle.
 */
import type { KeyRecord } from './state.js';

export interface RegionalHook {
  /** The record verification decides on (the region's copy), or undefined: NOT_FOUND. */
  readKey(digest: string): KeyRecord | undefined;
  /**
   * Spends `cost` credits of a key that has a usage limit, in the region's counter: true when the
   * balance covered it. Sets `key.remaining` (the region's copy) to the region's balance after.
   */
  spendCredits(key: KeyRecord, cost: number): boolean;
}
