/**
 * Usage credits and refill.
 *
 * Refill is computed, not scheduled: a key stores `nextRefillAtMs`, the first calendar boundary
 * it has not yet applied. Every operation that touches a key first calls `settleRefill`, which
 * applies the boundaries up to "now" in O(1) — several missed boundaries collapse into one,
 * because a refill replaces the balance rather than adding to it. Advancing the clock therefore
 * costs nothing, whatever the number of keys.
 */
import type { EpochMs } from './clock.js';
import type { Compat, EngineContext } from './context.js';
import { strikes } from './faults.js';
import { nextRefillBoundary } from './calendar.js';
import { type Result, invalid, ok } from './errors.js';
import type { KeyRecord, RefillConfig } from './state.js';

/** The largest balance or amount accepted: beyond it, JSON numbers lose integer precision. */
export const MAX_CREDITS = Number.MAX_SAFE_INTEGER;

/** A refill as requests send it. */
export interface RefillInput {
  interval: 'daily' | 'monthly';
  amount: number;
  refillDay?: number;
}

/** The refill as answers show it: `refillDay` only for monthly refills. */
export interface RefillView {
  interval: 'daily' | 'monthly';
  amount: number;
  refillDay?: number;
}

/** Applies every refill boundary up to `nowMs` (idempotent; call before reading a balance). */
export function settleRefill(key: KeyRecord, nowMs: EpochMs, compat: Compat): void {
  const refill = key.refill;
  if (refill === null || key.nextRefillAtMs === null || nowMs < key.nextRefillAtMs) return;
  // Production leaves a balance that is already at least the amount alone (docs/departures.md#compat-mode).
  const keep = compat === 'production' && key.remaining !== null && key.remaining >= refill.amount;
  if (!keep) key.remaining = refill.amount;
  key.nextRefillAtMs = nextRefillBoundary(nowMs, refill.interval, refill.refillDay ?? 1);
}

/**
 * `settleRefill` for an operation of the service: with the skipRefill fault, a due refill may be
 * skipped (the boundary advances, the balance stays). `operation` names it for the fault filter.
 */
export function settleKey(ctx: EngineContext, key: KeyRecord, nowMs: EpochMs, operation: string): void {
  // Nothing due is the common case: it never looks at the faults.
  if (key.nextRefillAtMs === null || nowMs < key.nextRefillAtMs) return;
  const faults = ctx.faults;
  if (faults !== null && key.refill !== null && strikes(faults, faults.skipRefillRate, operation)) {
    key.nextRefillAtMs = nextRefillBoundary(nowMs, key.refill.interval, key.refill.refillDay ?? 1);
    return;
  }
  settleRefill(key, nowMs, ctx.compat);
}

/** Sets (or clears) a key's refill; the first refill is at the next boundary after `nowMs`. */
export function setRefill(key: KeyRecord, refill: RefillConfig | null, nowMs: EpochMs): void {
  key.refill = refill;
  key.nextRefillAtMs = refill === null ? null : nextRefillBoundary(nowMs, refill.interval, refill.refillDay ?? 1);
}

export function isCreditAmount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 && value <= MAX_CREDITS;
}

// Keys usually share a handful of plans: one frozen object per distinct configuration saves
// ~50 bytes per key at a million keys. Bounded, so arbitrary input cannot grow it without end.
const INTERNED = new Map<string, RefillConfig>();
const MAX_INTERNED = 10_000;

/** The shared, frozen refill configuration equal to `config` (or `config` itself once the bound is reached). */
export function internRefill(config: RefillConfig): RefillConfig {
  const key = `${config.interval}:${config.amount}:${config.refillDay ?? ''}`;
  const known = INTERNED.get(key);
  if (known !== undefined) return known;
  if (INTERNED.size >= MAX_INTERNED) return config;
  const frozen = Object.freeze(config);
  INTERNED.set(key, frozen);
  return frozen;
}

/** Checks a refill request and turns it into the stored (shared, immutable) configuration. */
export function parseRefill(input: RefillInput, location: string, compat: Compat): Result<RefillConfig> {
  if (input.interval !== 'daily' && input.interval !== 'monthly') {
    return invalid(`${location}.interval`, 'The refill interval must be "daily" or "monthly".');
  }
  if (!isCreditAmount(input.amount) || input.amount < 1) {
    return invalid(`${location}.amount`, 'The refill amount must be an integer ≥ 1.');
  }
  if (input.interval === 'daily') {
    if (input.refillDay !== undefined) {
      return invalid(`${location}.refillDay`, 'refillDay applies only to monthly refills.', 'Remove refillDay or use interval "monthly".');
    }
    return ok(internRefill({ interval: 'daily', amount: input.amount, refillDay: null }));
  }
  if (input.refillDay === undefined) {
    if (compat === 'production') {
      return invalid(`${location}.refillDay`, 'A monthly refill needs a refillDay (1..31).', 'Add refillDay, e.g. 1.');
    }
    return ok(internRefill({ interval: 'monthly', amount: input.amount, refillDay: 1 }));
  }
  if (!Number.isInteger(input.refillDay) || input.refillDay < 1 || input.refillDay > 31) {
    return invalid(`${location}.refillDay`, 'refillDay must be an integer from 1 to 31.');
  }
  return ok(internRefill({ interval: 'monthly', amount: input.amount, refillDay: input.refillDay }));
}

export function viewRefill(refill: RefillConfig): RefillView {
  return refill.refillDay === null || refill.interval === 'daily'
    ? { interval: refill.interval, amount: refill.amount }
    : { interval: refill.interval, amount: refill.amount, refillDay: refill.refillDay };
}

export type CreditsOperation = 'set' | 'increment' | 'decrement';

export interface UpdateCreditsInput {
  keyId: string;
  operation: CreditsOperation;
  /** Required for increment and decrement; for set, null (or omitted) makes the key unlimited. */
  value?: number | null;
}

export interface UpdateCreditsOutput {
  /** The balance after the change; null = unlimited. */
  remaining: number | null;
  refill?: RefillView;
}

/** Checks an updateCredits request against the (settled) key, before anything changes. */
export function checkCreditsUpdate(key: KeyRecord, input: UpdateCreditsInput): Result<void> {
  const { operation, value } = input;
  if (operation !== 'set' && operation !== 'increment' && operation !== 'decrement') {
    return invalid('body.operation', 'The operation must be "set", "increment" or "decrement".');
  }
  if (value !== undefined && value !== null && !isCreditAmount(value)) {
    return invalid('body.value', `The value must be an integer from 0 to ${MAX_CREDITS}.`);
  }
  if (operation === 'set') return ok(undefined);
  if (value === undefined || value === null) {
    return invalid('body.value', `The value is required for "${operation}".`, 'Send an integer value, or use "set" with null for unlimited.');
  }
  if (key.remaining === null) {
    return invalid(
      'body.operation',
      `Cannot ${operation} the credits of a key without a usage limit.`,
      'Use "set" with a value first to give the key a usage limit.',
    );
  }
  if (operation === 'increment' && key.remaining + value > MAX_CREDITS) {
    return invalid('body.value', `The balance would exceed ${MAX_CREDITS}.`);
  }
  return ok(undefined);
}

/** Applies a checked updateCredits request. Decrement never goes below 0. */
export function applyCreditsUpdate(key: KeyRecord, input: UpdateCreditsInput): UpdateCreditsOutput {
  const value = input.value ?? null;
  switch (input.operation) {
    case 'set':
      if (value === null) {
        key.remaining = null;
        key.refill = null;
        key.nextRefillAtMs = null;
      } else {
        key.remaining = value;
      }
      break;
    case 'increment':
      key.remaining = (key.remaining ?? 0) + (value ?? 0);
      break;
    case 'decrement':
      key.remaining = Math.max(0, (key.remaining ?? 0) - (value ?? 0));
      break;
  }
  const out: UpdateCreditsOutput = { remaining: key.remaining };
  if (key.refill !== null) out.refill = viewRefill(key.refill);
  return out;
}
