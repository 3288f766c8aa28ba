/**
 * `iso`, keysim's one helper that writes an instant into a message (the engine's clock errors, the
 * load runner's clock messages, the checkers' witnesses, the scenarios): ISO-8601 UTC for every
 * instant, and the number itself for what is no instant, never a throw.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { iso } from '../../src/engine/iso.js';
import { assertProperty } from '../helpers/property.js';

/** The largest instant a JavaScript Date holds (±100,000,000 days around 1970). */
const MAX_DATE_MS = 8.64e15;

describe('iso', () => {
  it('writes instants as ISO-8601 UTC with milliseconds: the epoch, a leap day, a month end, before 1970, the last one', () => {
    expect(iso(0)).toBe('1970-01-01T00:00:00.000Z');
    expect(iso(Date.UTC(2028, 1, 29))).toBe('2028-02-29T00:00:00.000Z');
    expect(iso(Date.UTC(2027, 0, 31, 23, 59, 59, 999))).toBe('2027-01-31T23:59:59.999Z');
    expect(iso(-1)).toBe('1969-12-31T23:59:59.999Z');
    expect(iso(MAX_DATE_MS)).toBe('+275760-09-13T00:00:00.000Z');
  });

  it('writes a number that is no instant as that number instead of throwing: NaN, an open bound, beyond the last instant', () => {
    expect(iso(Number.NaN)).toBe('NaN');
    expect(iso(Number.POSITIVE_INFINITY)).toBe('Infinity');
    expect(iso(Number.NEGATIVE_INFINITY)).toBe('-Infinity');
    expect(iso(MAX_DATE_MS + 1)).toBe('8640000000000001');
    expect(iso(-MAX_DATE_MS - 1)).toBe('-8640000000000001');
  });

  it('reads back as the same instant for every whole millisecond a Date holds, and never throws for any number', () => {
    assertProperty(
      fc.property(fc.integer({ min: -MAX_DATE_MS, max: MAX_DATE_MS }), (ms) => {
        expect(Date.parse(iso(ms))).toBe(ms);
      }),
      { numRuns: 500 },
    );
    assertProperty(
      fc.property(fc.double(), (x) => {
        expect(typeof iso(x)).toBe('string');
      }),
      { numRuns: 500 },
    );
  });
});
