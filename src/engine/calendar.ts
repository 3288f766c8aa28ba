/**
 * The refill calendar. Refills happen at fixed UTC instants:
 * - daily: every 00:00:00.000 UTC;
 * - monthly: 00:00 UTC on `refillDay` of each month, or on the month's last day when the month
 *   is shorter than `refillDay` (31 → 28 Feb, 29 Feb in a leap year, 30 Apr).
 * A key never stores a schedule: it stores the next boundary still to be applied, and every
 * operation settles the boundaries up to "now" (see credits.ts). Civil dates are computed with
 * Howard Hinnant's days-from-civil algorithms, which are exact for the proleptic Gregorian
 * calendar and need no Date object.
 */
import type { EpochMs } from './clock.js';

export const MS_PER_DAY = 86_400_000;

export type RefillInterval = 'daily' | 'monthly';

/** Days since 1970-01-01 of the civil date (month 1..12). */
export function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const mp = (month + 9) % 12;
  const doy = Math.floor((153 * mp + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146_097 + doe - 719_468;
}

/** The civil date (month 1..12) of a day count since 1970-01-01. */
export function civilFromDays(days: number): { year: number; month: number; day: number } {
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  return { year: yoe + era * 400 + (month <= 2 ? 1 : 0), month, day };
}

export function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

export function daysInMonth(year: number, month: number): number {
  if (month === 2) return isLeapYear(year) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/** The monthly refill instant of the given month: 00:00 UTC on min(refillDay, days in month). */
export function monthlyRefillInstant(year: number, month: number, refillDay: number): EpochMs {
  const day = Math.min(refillDay, daysInMonth(year, month));
  return daysFromCivil(year, month, day) * MS_PER_DAY;
}

/** The first refill boundary strictly after `afterMs`. */
export function nextRefillBoundary(afterMs: EpochMs, interval: RefillInterval, refillDay: number): EpochMs {
  const days = Math.floor(afterMs / MS_PER_DAY);
  if (interval === 'daily') return (days + 1) * MS_PER_DAY;
  const { year, month } = civilFromDays(days);
  const thisMonth = monthlyRefillInstant(year, month, refillDay);
  if (thisMonth > afterMs) return thisMonth;
  return month === 12 ? monthlyRefillInstant(year + 1, 1, refillDay) : monthlyRefillInstant(year, month + 1, refillDay);
}
