/**
 * A reference model of usage credits with refill (docs/service-model.md#credits, #verification-order, #refill), written independently of
 * src/engine: its calendar is built on `Date.UTC` and loops over UTC days and months instead of
 * the engine's day-count arithmetic, so a bug in src/engine/calendar.ts cannot hide in both.
 */

export const DAY_MS = 86_400_000;

export interface ModelRefill {
  interval: 'daily' | 'monthly';
  amount: number;
  /** Monthly: 1..31, the default 1 already applied. Daily: unused (1). */
  refillDay: number;
}

export interface ModelKey {
  /** Credits left; null = unlimited. */
  remaining: number | null;
  refill: ModelRefill | null;
  /** Refills are due at every boundary strictly after this instant (last settle or configuration). */
  anchorMs: number;
}

/** Days in a month (month0 is 0..11), via the day before the next month's 1st. */
export function utcDaysInMonth(year: number, month0: number): number {
  return new Date(Date.UTC(year, month0 + 1, 0)).getUTCDate();
}

/** 00:00 UTC on min(refillDay, days in the month). */
export function utcMonthlyInstant(year: number, month0: number, refillDay: number): number {
  return Date.UTC(year, month0, Math.min(refillDay, utcDaysInMonth(year, month0)));
}

/** The first UTC midnight strictly after `ms`. */
export function nextMidnightAfter(ms: number): number {
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1);
}

/** The first 1st-of-the-month 00:00 UTC strictly after `ms`. */
export function nextMonthStartAfter(ms: number): number {
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
}

/** The first "last day of a month, 00:00 UTC" strictly after `ms`. */
export function nextLastDayAfter(ms: number): number {
  return nextMonthlyInstantAfter(ms, 31);
}

/** The first monthly refill instant strictly after `ms`, walking month by month. */
export function nextMonthlyInstantAfter(ms: number, refillDay: number): number {
  const d = new Date(ms);
  let year = d.getUTCFullYear();
  let month0 = d.getUTCMonth();
  for (;;) {
    const instant = utcMonthlyInstant(year, month0, refillDay);
    if (instant > ms) return instant;
    month0 += 1;
    if (month0 === 12) {
      month0 = 0;
      year += 1;
    }
  }
}

export function nextBoundaryAfter(ms: number, refill: ModelRefill): number {
  return refill.interval === 'daily' ? nextMidnightAfter(ms) : nextMonthlyInstantAfter(ms, refill.refillDay);
}

/**
 * Applies the refills due in (anchorMs, nowMs]: a refill replaces the balance with `amount`, so
 * several missed boundaries are the same as one. Returns whether at least one boundary was crossed.
 */
export function settle(key: ModelKey, nowMs: number): boolean {
  let refilled = false;
  if (key.refill !== null && nextBoundaryAfter(key.anchorMs, key.refill) <= nowMs) {
    key.remaining = key.refill.amount;
    refilled = true;
  }
  key.anchorMs = Math.max(key.anchorMs, nowMs);
  return refilled;
}
