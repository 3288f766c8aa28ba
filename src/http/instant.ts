/**
 * Instants as people write them (`serve --start`, `/_sim/clock.set`'s `to`): ISO-8601 or Unix ms.
 *
 * `Date.parse` rolls impossible calendar dates over (2028-02-30 becomes 1 March, 24:00 the next
 * day), which would silently move a test's clock to a day nobody asked for. Every field of the
 * written date and time is therefore checked against the calendar before it is parsed.
 */
import { MAX_INSTANT_MS, type Result, daysInMonth } from '../engine/index.js';
import { invalid, ok } from '../engine/errors.js';

const ISO = /^([+-]\d{6}|\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,]\d+)?)?)?(Z|[+-]\d{2}:?\d{2})?$/i;

/** Why the written calendar fields are impossible, or undefined when they exist. */
export function calendarProblem(text: string): string | undefined {
  const m = ISO.exec(text);
  if (m === null) return 'it is not of the form 2028-02-28, 2028-02-28T23:59:59Z or 2028-02-28T23:59:59.999+01:00';
  const year = Number(m[1]);
  const month = Number(m[2]);
  const day = Number(m[3]);
  if (month < 1 || month > 12) return `month ${m[2]} does not exist (01–12)`;
  const last = daysInMonth(year, month);
  if (day < 1 || day > last) return `day ${m[3]} does not exist in ${m[1]}-${m[2]} (it has ${last} days)`;
  if (m[4] !== undefined && Number(m[4]) > 23) return `hour ${m[4]} does not exist (00–23)`;
  if (m[5] !== undefined && Number(m[5]) > 59) return `minute ${m[5]} does not exist (00–59)`;
  if (m[6] !== undefined && Number(m[6]) > 59) return `second ${m[6]} does not exist (00–59)`;
  const zone = m[7];
  if (zone !== undefined && zone.toUpperCase() !== 'Z') {
    const digits = zone.replace(':', '');
    if (Number(digits.slice(1, 3)) > 23 || Number(digits.slice(3, 5)) > 59) return `the time zone offset ${zone} does not exist`;
  }
  return undefined;
}

/** Parses `--start` / `to`: ISO-8601 (a date, or a date and time with a time zone or Z) or Unix ms. */
export function parseInstant(value: string | number, location: string): Result<number> {
  const fix = 'Use e.g. "2028-02-28T23:59:59.999Z" or 1835395199999.';
  const shown = `"${String(value).slice(0, 64)}"`;
  if (typeof value === 'string' && !/^\d+$/.test(value)) {
    const problem = calendarProblem(value.trim());
    if (problem !== undefined) return invalid(location, `${shown} is not a valid ISO-8601 instant: ${problem}.`, fix);
  }
  const ms = typeof value === 'number' ? value : /^\d+$/.test(value) ? Number(value) : Date.parse(value.trim());
  if (!Number.isSafeInteger(ms) || ms < 0 || ms > MAX_INSTANT_MS) {
    return invalid(location, `${shown} is not an ISO-8601 instant or Unix ms between 1970 and +275760-09-13.`, fix);
  }
  return ok(ms);
}
