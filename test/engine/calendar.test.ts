/**
 * The refill calendar (docs/service-model.md#refill): civil-date arithmetic against JavaScript's own UTC
 * calendar, worked examples for short months, and the counting properties — one daily refill per
 * UTC midnight crossed, one monthly refill per month crossed.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { MS_PER_DAY, civilFromDays, daysFromCivil, daysInMonth, isLeapYear, monthlyRefillInstant, nextRefillBoundary } from '../../src/engine/index.js';
import { assertProperty } from '../helpers/property.js';

const FIRST_DAY = 0; // 1970-01-01
const LAST_DAY = Date.UTC(2400, 11, 31) / MS_PER_DAY; // 2400-12-31

/** Days in a month (1..12) as JavaScript's Date sees them: the day before the next month's 1st. */
function jsDaysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/** The expected monthly refill instant, built only from Date.UTC. */
function jsMonthlyInstant(year: number, month: number, refillDay: number): number {
  return Date.UTC(year, month - 1, Math.min(refillDay, jsDaysInMonth(year, month)));
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

const dayArb = fc.integer({ min: FIRST_DAY, max: LAST_DAY });
const yearArb = fc.integer({ min: 1970, max: 2400 });
const monthArb = fc.integer({ min: 1, max: 12 });
const refillDayArb = fc.integer({ min: 1, max: 31 });
/** An instant 1970..2400, biased towards midnights and the milliseconds around them. */
const instantArb = fc
  .tuple(dayArb, fc.oneof(fc.constant(0), fc.constant(1), fc.constant(MS_PER_DAY - 1), fc.integer({ min: 0, max: MS_PER_DAY - 1 })))
  .map(([day, ms]) => day * MS_PER_DAY + ms);

describe('civil dates', () => {
  it('civilFromDays agrees with getUTC* for any day 1970..2400', () => {
    assertProperty(
      fc.property(dayArb, (days) => {
        const date = new Date(days * MS_PER_DAY);
        expect(civilFromDays(days)).toEqual({ year: date.getUTCFullYear(), month: date.getUTCMonth() + 1, day: date.getUTCDate() });
      }),
      { numRuns: 2_000 },
    );
  });

  it('daysFromCivil agrees with Date.UTC for any date 1970..2400 and inverts civilFromDays', () => {
    assertProperty(
      fc.property(yearArb, monthArb, fc.integer({ min: 1, max: 31 }), (year, month, rawDay) => {
        const day = Math.min(rawDay, jsDaysInMonth(year, month));
        const days = daysFromCivil(year, month, day);
        expect(days * MS_PER_DAY).toBe(Date.UTC(year, month - 1, day));
        expect(civilFromDays(days)).toEqual({ year, month, day });
      }),
      { numRuns: 2_000 },
    );
  });

  it('round-trips every single day from 1970-01-01 to 2400-12-31', () => {
    let mismatches = 0;
    let checked = 0;
    for (let days = FIRST_DAY; days <= LAST_DAY; days += 1) {
      const date = new Date(days * MS_PER_DAY);
      const civil = civilFromDays(days);
      if (civil.year !== date.getUTCFullYear() || civil.month !== date.getUTCMonth() + 1 || civil.day !== date.getUTCDate()) mismatches += 1;
      if (daysFromCivil(civil.year, civil.month, civil.day) !== days) mismatches += 1;
      checked += 1;
    }
    expect(checked).toBe(LAST_DAY + 1);
    expect(mismatches).toBe(0);
  });

  it('knows the epoch and a few fixed dates', () => {
    expect(daysFromCivil(1970, 1, 1)).toBe(0);
    expect(civilFromDays(0)).toEqual({ year: 1970, month: 1, day: 1 });
    expect(daysFromCivil(2000, 3, 1)).toBe(11_017);
    expect(civilFromDays(daysFromCivil(2028, 2, 29))).toEqual({ year: 2028, month: 2, day: 29 });
    // The day after 28 Feb of a common year is 1 March.
    expect(civilFromDays(daysFromCivil(2027, 2, 28) + 1)).toEqual({ year: 2027, month: 3, day: 1 });
  });

  it('isLeapYear follows the Gregorian rule', () => {
    expect(isLeapYear(1900)).toBe(false);
    expect(isLeapYear(2000)).toBe(true);
    expect(isLeapYear(2024)).toBe(true);
    expect(isLeapYear(2027)).toBe(false);
    expect(isLeapYear(2028)).toBe(true);
    expect(isLeapYear(2100)).toBe(false);
    expect(isLeapYear(2400)).toBe(true);
    assertProperty(
      fc.property(fc.integer({ min: 1600, max: 2400 }), (year) => {
        expect(isLeapYear(year)).toBe(jsDaysInMonth(year, 2) === 29);
      }),
    );
  });

  it('daysInMonth: February 28 or 29, 30-day and 31-day months', () => {
    expect(daysInMonth(1900, 2)).toBe(28);
    expect(daysInMonth(2000, 2)).toBe(29);
    expect(daysInMonth(2024, 2)).toBe(29);
    expect(daysInMonth(2027, 2)).toBe(28);
    expect([4, 6, 9, 11].map((m) => daysInMonth(2027, m))).toEqual([30, 30, 30, 30]);
    expect([1, 3, 5, 7, 8, 10, 12].map((m) => daysInMonth(2027, m))).toEqual([31, 31, 31, 31, 31, 31, 31]);
    assertProperty(
      fc.property(fc.integer({ min: 1600, max: 2400 }), monthArb, (year, month) => {
        expect(daysInMonth(year, month)).toBe(jsDaysInMonth(year, month));
      }),
      { numRuns: 500 },
    );
  });
});

describe('monthly refill instants: worked examples', () => {
  it('refillDay 31 falls on the last day of February: 28 in 2027, 29 in 2028', () => {
    expect(iso(monthlyRefillInstant(2027, 2, 31))).toBe('2027-02-28T00:00:00.000Z');
    expect(iso(monthlyRefillInstant(2028, 2, 31))).toBe('2028-02-29T00:00:00.000Z');
    expect(iso(nextRefillBoundary(Date.UTC(2027, 0, 31, 0, 0, 0, 1), 'monthly', 31))).toBe('2027-02-28T00:00:00.000Z');
    expect(iso(nextRefillBoundary(Date.UTC(2028, 1, 28, 23, 59, 59, 999), 'monthly', 31))).toBe('2028-02-29T00:00:00.000Z');
  });

  it('refillDay 31 falls on the 30th of 30-day months', () => {
    expect(iso(monthlyRefillInstant(2027, 4, 31))).toBe('2027-04-30T00:00:00.000Z');
    expect(iso(monthlyRefillInstant(2027, 6, 31))).toBe('2027-06-30T00:00:00.000Z');
    expect(iso(monthlyRefillInstant(2027, 9, 31))).toBe('2027-09-30T00:00:00.000Z');
    expect(iso(monthlyRefillInstant(2027, 11, 31))).toBe('2027-11-30T00:00:00.000Z');
    expect(iso(monthlyRefillInstant(2027, 5, 31))).toBe('2027-05-31T00:00:00.000Z');
    // From 30 April 00:00 on, the next one is 31 May.
    expect(iso(nextRefillBoundary(Date.UTC(2027, 3, 30), 'monthly', 31))).toBe('2027-05-31T00:00:00.000Z');
  });

  it('refillDay 29 and 30 in February', () => {
    expect(iso(monthlyRefillInstant(2027, 2, 29))).toBe('2027-02-28T00:00:00.000Z');
    expect(iso(monthlyRefillInstant(2028, 2, 29))).toBe('2028-02-29T00:00:00.000Z');
    expect(iso(monthlyRefillInstant(2027, 2, 30))).toBe('2027-02-28T00:00:00.000Z');
    expect(iso(monthlyRefillInstant(2028, 2, 30))).toBe('2028-02-29T00:00:00.000Z');
    expect(iso(monthlyRefillInstant(2027, 3, 30))).toBe('2027-03-30T00:00:00.000Z');
    expect(iso(nextRefillBoundary(Date.UTC(2027, 1, 28), 'monthly', 30))).toBe('2027-03-30T00:00:00.000Z');
  });

  it('refillDay 1 (the default) is the 1st of every month', () => {
    expect(iso(monthlyRefillInstant(2027, 1, 1))).toBe('2027-01-01T00:00:00.000Z');
    expect(iso(monthlyRefillInstant(2028, 2, 1))).toBe('2028-02-01T00:00:00.000Z');
    expect(iso(nextRefillBoundary(Date.UTC(2027, 11, 31, 23, 59, 59, 999), 'monthly', 1))).toBe('2028-01-01T00:00:00.000Z');
    expect(iso(nextRefillBoundary(Date.UTC(2028, 0, 1), 'monthly', 1))).toBe('2028-02-01T00:00:00.000Z');
  });

  it('daily boundaries are the next 00:00:00.000 UTC, strictly after the instant', () => {
    expect(iso(nextRefillBoundary(Date.UTC(2027, 0, 15, 12), 'daily', 1))).toBe('2027-01-16T00:00:00.000Z');
    expect(iso(nextRefillBoundary(Date.UTC(2027, 0, 15), 'daily', 1))).toBe('2027-01-16T00:00:00.000Z');
    expect(iso(nextRefillBoundary(Date.UTC(2027, 0, 15) - 1, 'daily', 1))).toBe('2027-01-15T00:00:00.000Z');
    expect(iso(nextRefillBoundary(Date.UTC(2028, 1, 28, 23), 'daily', 1))).toBe('2028-02-29T00:00:00.000Z');
    expect(iso(nextRefillBoundary(Date.UTC(2027, 11, 31, 23, 59, 59, 999), 'daily', 1))).toBe('2028-01-01T00:00:00.000Z');
  });
});

describe('monthly refill instants: properties', () => {
  it('for every refillDay 1..31 and any month 1970..2400 the refill is 00:00 UTC on min(refillDay, days in month)', () => {
    assertProperty(
      fc.property(refillDayArb, yearArb, monthArb, (refillDay, year, month) => {
        const instant = monthlyRefillInstant(year, month, refillDay);
        const expected = jsMonthlyInstant(year, month, refillDay);
        expect(iso(instant)).toBe(iso(expected));
        const date = new Date(instant);
        expect(date.getUTCFullYear()).toBe(year);
        expect(date.getUTCMonth() + 1).toBe(month);
        expect(date.getUTCDate()).toBe(Math.min(refillDay, jsDaysInMonth(year, month)));
        expect(instant % MS_PER_DAY).toBe(0);

        // It is the boundary that follows the millisecond before it, and it is followed by next month's.
        expect(nextRefillBoundary(instant - 1, 'monthly', refillDay)).toBe(instant);
        const nextMonth = month === 12 ? jsMonthlyInstant(year + 1, 1, refillDay) : jsMonthlyInstant(year, month + 1, refillDay);
        expect(iso(nextRefillBoundary(instant, 'monthly', refillDay))).toBe(iso(nextMonth));
      }),
      { numRuns: 3_000 },
    );
  });

  it('holds for every refillDay and every month 1970..2400, exhaustively', () => {
    const failures: string[] = [];
    for (let refillDay = 1; refillDay <= 31; refillDay += 1) {
      for (let year = 1970; year <= 2400; year += 1) {
        for (let month = 1; month <= 12; month += 1) {
          const instant = monthlyRefillInstant(year, month, refillDay);
          const nextMonth = month === 12 ? jsMonthlyInstant(year + 1, 1, refillDay) : jsMonthlyInstant(year, month + 1, refillDay);
          if (
            instant !== jsMonthlyInstant(year, month, refillDay) ||
            nextRefillBoundary(instant - 1, 'monthly', refillDay) !== instant ||
            nextRefillBoundary(instant, 'monthly', refillDay) !== nextMonth
          ) {
            if (failures.length < 10) failures.push(`${year}-${month} refillDay ${refillDay}`);
          }
        }
      }
    }
    expect(failures).toEqual([]);
  });

  it('nextRefillBoundary is the first boundary strictly after any instant', () => {
    assertProperty(
      fc.property(instantArb, refillDayArb, fc.constantFrom('daily' as const, 'monthly' as const), (afterMs, refillDay, interval) => {
        const boundary = nextRefillBoundary(afterMs, interval, refillDay);
        expect(boundary).toBeGreaterThan(afterMs);
        expect(boundary % MS_PER_DAY).toBe(0);
        if (interval === 'daily') {
          expect(boundary - afterMs).toBeLessThanOrEqual(MS_PER_DAY);
        } else {
          const date = new Date(boundary);
          const year = date.getUTCFullYear();
          const month = date.getUTCMonth() + 1;
          expect(date.getUTCDate()).toBe(Math.min(refillDay, jsDaysInMonth(year, month)));
          // No refill instant of the previous month lies in (afterMs, boundary).
          const previous = month === 1 ? jsMonthlyInstant(year - 1, 12, refillDay) : jsMonthlyInstant(year, month - 1, refillDay);
          expect(previous).toBeLessThanOrEqual(afterMs);
        }
      }),
      { numRuns: 2_000 },
    );
  });
});

/** Walks the boundaries in (t0, t1] and returns them. */
function walk(t0: number, t1: number, interval: 'daily' | 'monthly', refillDay: number): number[] {
  const out: number[] = [];
  let boundary = nextRefillBoundary(t0, interval, refillDay);
  while (boundary <= t1) {
    out.push(boundary);
    const next = nextRefillBoundary(boundary, interval, refillDay);
    if (next <= boundary) throw new Error(`nextRefillBoundary did not move forward from ${iso(boundary)}`);
    boundary = next;
  }
  return out;
}

/** The months whose refill instant lies in (t0, t1], counted from Date.UTC alone. */
function countMonthlyInstants(t0: number, t1: number, refillDay: number): number {
  const start = new Date(t0);
  let year = start.getUTCFullYear();
  let month = start.getUTCMonth() + 1;
  let count = 0;
  for (;;) {
    const instant = jsMonthlyInstant(year, month, refillDay);
    if (instant > t1) return count;
    if (instant > t0) count += 1;
    month += 1;
    if (month === 13) {
      month = 1;
      year += 1;
    }
  }
}

describe('refill counts over a clock interval', () => {
  const maxT0 = Date.UTC(2397, 0, 1);
  const startArb = instantArb.filter((ms) => ms <= maxT0);

  it('daily refills: one per UTC midnight crossed', () => {
    assertProperty(
      fc.property(startArb, fc.integer({ min: 0, max: 400 * MS_PER_DAY }), (t0, lengthMs) => {
        const t1 = t0 + lengthMs;
        const boundaries = walk(t0, t1, 'daily', 1);
        expect(boundaries.length).toBe(Math.floor(t1 / MS_PER_DAY) - Math.floor(t0 / MS_PER_DAY));
        // Each one is a UTC midnight, one day after the previous one.
        expect(boundaries.filter((b, i) => b % MS_PER_DAY !== 0 || (i > 0 && b - (boundaries[i - 1] ?? 0) !== MS_PER_DAY))).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });

  it('daily refills: an interval ending exactly on a midnight counts it; one ending a millisecond before does not', () => {
    assertProperty(
      fc.property(fc.integer({ min: 1, max: LAST_DAY }), fc.integer({ min: 1, max: 5 * MS_PER_DAY }), (day, backMs) => {
        const midnight = day * MS_PER_DAY;
        const t0 = Math.max(0, midnight - backMs);
        expect(walk(t0, midnight, 'daily', 1).at(-1)).toBe(midnight);
        expect(walk(t0, midnight - 1, 'daily', 1)).not.toContain(midnight);
        expect(walk(midnight, midnight + MS_PER_DAY - 1, 'daily', 1)).toEqual([]);
      }),
    );
  });

  it('monthly refills: one per month whose refill instant is crossed', () => {
    assertProperty(
      fc.property(startArb, fc.integer({ min: 0, max: 3 * 366 * MS_PER_DAY }), refillDayArb, (t0, lengthMs, refillDay) => {
        const t1 = t0 + lengthMs;
        const boundaries = walk(t0, t1, 'monthly', refillDay);
        expect(boundaries.length).toBe(countMonthlyInstants(t0, t1, refillDay));
        // One per calendar month, never two in the same month.
        const months = boundaries.map((b) => iso(b).slice(0, 7));
        expect(new Set(months).size).toBe(months.length);
        const misplaced = boundaries.filter((b) => {
          const date = new Date(b);
          return b !== jsMonthlyInstant(date.getUTCFullYear(), date.getUTCMonth() + 1, refillDay);
        });
        expect(misplaced.map(iso)).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });

  it('monthly refills: a calendar year matches the independent count; 364 days hold at most 12, 366 days at least 12', () => {
    assertProperty(
      fc.property(startArb, refillDayArb, (t0, refillDay) => {
        const start = new Date(t0);
        const t1 = Date.UTC(
          start.getUTCFullYear() + 1,
          start.getUTCMonth(),
          start.getUTCDate(),
          start.getUTCHours(),
          start.getUTCMinutes(),
          start.getUTCSeconds(),
          start.getUTCMilliseconds(),
        );
        // Feb 29 + 1 year normalises to Mar 1, which can add a month-end boundary: compare with the independent count.
        expect(walk(t0, t1, 'monthly', refillDay).length).toBe(countMonthlyInstants(t0, t1, refillDay));
        expect(walk(t0, t0 + 364 * MS_PER_DAY, 'monthly', refillDay).length).toBeLessThanOrEqual(12);
        expect(walk(t0, t0 + 366 * MS_PER_DAY, 'monthly', refillDay).length).toBeGreaterThanOrEqual(12);
      }),
    );
  });
});
