/**
 * Deliberate wrong behaviour, for testing checkers: the engine misbehaves on purpose, at given
 * rates, in ways a correct client-side checker must notice.
 *
 * - `overAdmitRate`: a verification that should be refused for credits (USAGE_EXCEEDED) is
 *   answered VALID. The balance is left unchanged (nothing is deducted, it never goes negative)
 *   and the answer reports that unchanged balance: a VALID whose cost exceeds the balance.
 *   Likewise a `ratelimit.limit` / `ratelimit.multiLimit` request the window refuses is answered
 *   as admitted (success / passed true, remaining 0), with nothing counted in the window.
 * - `skipRefillRate`: a due refill is not applied. The key's next boundary advances as if it had
 *   been, but the balance stays. Several missed boundaries settled at once are one refill, so
 *   they are skipped (or applied) together.
 * - `lostDecrementRate`: a VALID verification of a key with a usage limit (cost ≥ 1) reports the
 *   balance after the deduction (balance − cost), but the deduction is never stored — a lost
 *   write: the answer looks right, the next read shows the old balance.
 *
 * Decisions come from a Random of their own (seeded from the engine seed), so enabling faults
 * never changes the generated ids and keys; each `setFaults` restarts that sequence. Faults are
 * a setting, not state: snapshots do not contain them, restore keeps them, reset clears them.
 * The admin fixtures and snapshots are never faulted (a snapshot settles refills normally).
 */
import { type Result, invalid, ok } from './errors.js';
import type { Random } from './random.js';

export interface EngineFaults {
  /** Probability 0..1 that a verification refused for credits, or a rate-limit request refused by its window, is answered as admitted. */
  overAdmitRate?: number;
  /** Probability 0..1 that a due refill is skipped (the boundary passes, the balance stays). */
  skipRefillRate?: number;
  /** Probability 0..1 that a VALID verification's deduction is reported but not stored. */
  lostDecrementRate?: number;
  /**
   * Only these operations misbehave (names as the v2 API has them, e.g. `keys.verifyKey`;
   * refills are settled by keys.verifyKey, keys.getKey, keys.updateKey, keys.deleteKey and
   * keys.updateCredits). Absent = every operation.
   */
  operations?: readonly string[];
}

/** The whole fault configuration, every rate present (0 = off). */
export interface EngineFaultsView {
  overAdmitRate: number;
  skipRefillRate: number;
  lostDecrementRate: number;
  operations?: string[];
}

/** The faults as the engine applies them (in the context; null when none can happen). */
export interface ActiveFaults {
  overAdmitRate: number;
  skipRefillRate: number;
  lostDecrementRate: number;
  operations: ReadonlySet<string> | null;
  random: Random;
}

export type EngineFaultRate = 'overAdmitRate' | 'skipRefillRate' | 'lostDecrementRate';
export const ENGINE_FAULT_RATES: readonly EngineFaultRate[] = ['overAdmitRate', 'skipRefillRate', 'lostDecrementRate'];

/**
 * The seed of the fault decisions: the engine seed with its low word changed, so that the fault
 * sequence differs from the id sequence and stays a safe integer.
 */
export function faultSeed(seed: number, salt = 0x5eed): number {
  const high = Math.floor(seed / 0x1_0000_0000) * 0x1_0000_0000;
  return high + (((seed >>> 0) ^ salt) >>> 0);
}

export function isRate(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 && value <= 1;
}

/** Checks a fault configuration; the normalised copy has every rate (0 when absent). */
export function checkEngineFaults(faults: EngineFaults): Result<EngineFaultsView> {
  for (const name of ENGINE_FAULT_RATES) {
    const rate = faults[name];
    if (rate !== undefined && !isRate(rate)) return invalid(`faults.${name}`, `${name} is a probability: a number from 0 to 1, got ${String(rate)}.`);
  }
  const operations = faults.operations;
  if (operations !== undefined && (!Array.isArray(operations) || !operations.every((op) => typeof op === 'string'))) {
    return invalid('faults.operations', 'operations must be a list of operation names, e.g. ["keys.verifyKey"].');
  }
  const normalised: EngineFaultsView = {
    overAdmitRate: faults.overAdmitRate ?? 0,
    skipRefillRate: faults.skipRefillRate ?? 0,
    lostDecrementRate: faults.lostDecrementRate ?? 0,
  };
  return ok(operations === undefined ? normalised : { ...normalised, operations: [...operations] });
}

/** Whether the fault with this rate strikes now, in `operation`. */
export function strikes(faults: ActiveFaults, rate: number, operation: string): boolean {
  if (rate <= 0) return false;
  if (faults.operations !== null && !faults.operations.has(operation)) return false;
  // Draw even at rate 1: the sequence then depends only on which operations were faultable.
  return faults.random.nextUint32() / 0x1_0000_0000 < rate;
}
