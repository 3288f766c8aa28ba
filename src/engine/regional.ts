/**
 * The seam the production profile (production/) uses to put one region in front of the exact
 * engine, which then stands for the service's database. While a hook is installed
 * (`Engine.inRegion`), verification reads the key record through it (a region's key cache) and
 * spends credits through it (a region's counter); everything else still reads and writes the
 * database. Without a hook — the default — the engine is the exact, linearizable service.
 *
 * `RegionalDatabase` is the profile's door to the database for what happens outside an
 * operation: a cache filled, a counter created, a debit replayed.
 */
import type { EpochMs } from './clock.js';
import type { EngineContext } from './context.js';
import { settleKey, settleRefill } from './credits.js';
import { keyToJson } from './key-record.js';
import { commitWindow, readWindow } from './ratelimit-window.js';
import type { KeyRecord, WindowCounter } from './state.js';

export type { RegionalHook } from './regional-hook.js';

export interface RegionalDatabase {
  /** A copy of the key with this hash digest, refills settled to `nowMs`; undefined when none. */
  keyCopy(digest: string, nowMs: EpochMs): KeyRecord | undefined;
  /** The key's balance in the database, refills settled to `nowMs`: null unlimited, undefined deleted. */
  balance(keyId: string, nowMs: EpochMs): number | null | undefined;
  /**
   * A debit made in a region, landing in the database at `atMs`: refills due by then first, then
   * the balance less `cost`, never below 0. Nothing when the key is gone or unlimited.
   */
  replayDebit(keyId: string, cost: number, atMs: EpochMs): void;
  /** The hash digest of a key (what the key caches are keyed by), undefined when none. */
  digestOf(keyId: string): string | undefined;
  /** A copy of the database's rate-limit counter `key` (ratelimit-window.ts), undefined when none. */
  windowCounter(key: string): WindowCounter | undefined;
  /**
   * Adds `cost` admitted by a region in fixed window `window` to the database's counter `key`
   * (read at `nowMs`): to its current window, or to its previous one; older counts no longer
   * matter and are dropped.
   */
  pushWindow(key: string, durationMs: number, window: number, cost: number, nowMs: EpochMs): void;
}

/** The operation a region's settlements count as, for the fault filter. */
const OPERATION = 'keys.verifyKey';

export function regionalDatabase(ctx: EngineContext, digestOf: (key: KeyRecord) => string): RegionalDatabase {
  return {
    keyCopy(digest, nowMs) {
      const key = ctx.state.keysByDigest.get(digest);
      if (key === undefined) return undefined;
      settleKey(ctx, key, nowMs, OPERATION);
      return keyToJson(key);
    },
    balance(keyId, nowMs) {
      const key = ctx.state.keys.get(keyId);
      if (key === undefined) return undefined;
      settleKey(ctx, key, nowMs, OPERATION);
      return key.remaining;
    },
    replayDebit(keyId, cost, atMs) {
      const key = ctx.state.keys.get(keyId);
      if (key === undefined) return;
      // The refills due before the debit landed come first (a refill replaces the balance).
      settleRefill(key, atMs, ctx.compat);
      if (key.remaining !== null) key.remaining = Math.max(0, key.remaining - cost);
    },
    digestOf(keyId) {
      const key = ctx.state.keys.get(keyId);
      return key === undefined ? undefined : digestOf(key);
    },
    windowCounter(key) {
      const counter = ctx.state.windows.get(key);
      return counter === undefined ? undefined : { ...counter };
    },
    pushWindow(key, durationMs, window, cost, nowMs) {
      const view = readWindow(ctx.state.windows, key, nowMs, durationMs);
      if (window === view.window) commitWindow(ctx.state.windows, view, cost);
      else if (window === view.window - 1) ctx.state.windows.set(key, { window: view.window, current: view.current, previous: view.previous + cost });
    },
  };
}
