/** integer-text.ts: the text JSON.stringify writes for every finite number (seed printed on failure). */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { integerText } from '../../src/http/integer-text.js';
import { assertProperty } from '../helpers/property.js';

describe('integerText', () => {
  test('writes what JSON.stringify writes, for any finite number', () => {
    const nearBillions = fc.tuple(fc.integer({ min: 2, max: 9_007_199 }), fc.integer({ min: -3, max: 3 })).map(([k, d]) => Math.min(Number.MAX_SAFE_INTEGER, k * 1e9 + d));
    const number = fc.oneof(
      fc.double({ noNaN: true, noDefaultInfinity: true }),
      fc.integer(),
      fc.maxSafeInteger(),
      fc.integer({ min: 2 ** 31 - 2, max: 2 ** 31 + 2 }),
      nearBillions,
      fc.constantFrom(Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER + 1, 2 ** 53 + 2, 1e21, 999_999_999_999, 1_000_000_000_000, 1_795_629_660_000, -0),
    );
    assertProperty(
      fc.property(number, (n) => {
        expect(integerText(n)).toBe(JSON.stringify(n));
      }),
      { numRuns: 2_000 },
    );
  });

  test('every safe integer next to a multiple of 10^9, up to 2^53', () => {
    // Where the rounded quotient can land on the wrong side of the floor.
    for (let k = 9_007_199; k > 9_007_199 - 2_000; k--) {
      for (const d of [-1, 0, 1]) {
        const n = k * 1e9 + d;
        if (n <= Number.MAX_SAFE_INTEGER) expect(integerText(n)).toBe(JSON.stringify(n));
      }
    }
    expect(integerText(Number.MAX_SAFE_INTEGER)).toBe('9007199254740991');
    expect(integerText(3_000_000_000)).toBe('3000000000');
    expect(integerText(3_000_000_007)).toBe('3000000007');
  });
});
