/**
 * The refill calendar refill-month-end judges by, written from the interface document and not
 * from the engine: the refill days under test and their amounts, the midnights swept in a common
 * and a leap year, the refill dates expected at each (by hand), and an independent month-length
 * calculation of whether a monthly refill falls between two instants.
 */

/** Refill days under test; 1 is the control (it refills on the 1st of every month). */
export const DAYS = [29, 30, 31, 1] as const;
export type Day = (typeof DAYS)[number];
export const amountOf = (day: Day): number => 1000 + day;

export type YearKind = 'common' | 'leap';

/** A midnight of interest: 00:00 UTC of `MM-DD`. */
export interface Midnight {
  label: string;
  month: number;
  day: number;
}

/** The midnights swept in one year, in time order. */
export function midnightsOf(kind: YearKind): Midnight[] {
  return ['01-29', '01-30', '01-31', '02-01', '02-28', ...(kind === 'leap' ? ['02-29'] : []), '03-01', '03-29', '03-30', '03-31'].map((label) => {
    const [mm, dd] = label.split('-');
    return { label, month: Number(mm), day: Number(dd) };
  });
}

/**
 * The calendar, written out by hand: the observations at which each key must show a fresh refill.
 * `MM-DD`: during the sweep across that midnight (seen at the sweep's end). `MM-DD-start`: between
 * the previous sweep's end and this sweep's start — only before the first sweep of the leap year,
 * which follows April–December of the common year (and, for refillDay 1, 1 January).
 */
export const EXPECTED_REFILLS: Record<YearKind, Record<Day, readonly string[]>> = {
  common: {
    29: ['01-29', '02-28', '03-29'],
    30: ['01-30', '02-28', '03-30'],
    31: ['01-31', '02-28', '03-31'],
    1: ['02-01', '03-01'],
  },
  leap: {
    29: ['01-29-start', '01-29', '02-29', '03-29'],
    30: ['01-29-start', '01-30', '02-29', '03-30'],
    31: ['01-29-start', '01-31', '02-29', '03-31'],
    1: ['01-29-start', '02-01', '03-01'],
  },
};

const isLeap = (year: number): boolean => (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;

/**
 * Whether a monthly refill on `day` falls in (fromMs, toMs]: the refill instant of a month is
 * 00:00 UTC on min(day, days in that month). Written from the interface document, not the engine.
 * Months are counted from the start's month; Date.UTC carries month 12 into the next year.
 */
export function refillBetween(day: number, fromMs: number, toMs: number): boolean {
  const start = new Date(fromMs);
  const year = start.getUTCFullYear();
  for (let month = start.getUTCMonth(); Date.UTC(year, month, 1) <= toMs; month++) {
    const daysInMonth = new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
    const at = Date.UTC(year, month, Math.min(day, daysInMonth));
    if (at > fromMs && at <= toMs) return true;
  }
  return false;
}

/** The first common year, after the clock's current year, that is followed by a leap year. */
export function chooseYears(nowMs: number): Record<YearKind, number> {
  let year = new Date(nowMs).getUTCFullYear() + 1;
  while (isLeap(year) || !isLeap(year + 1)) year++;
  return { common: year, leap: year + 1 };
}
