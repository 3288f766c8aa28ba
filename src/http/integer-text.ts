/**
 * The JSON text of a number, as `JSON.stringify` writes it, faster for the integers answers carry
 * beyond 2^31 (balances of 10^12, Unix-ms instants): V8 writes such a number with its general
 * double-to-text algorithm, while two halves below 10^9 are written as small integers, which is
 * about half the time (docs/benchmarks.md#http-simulator). Any other finite number is left to
 * the platform; a number that is not finite is the caller's to refuse (JSON writes it as null).
 */
const ZEROS = ['', '0', '00', '000', '0000', '00000', '000000', '0000000', '00000000'];

export function integerText(n: number): string {
  if (n > 2_147_483_647 && n <= Number.MAX_SAFE_INTEGER && Number.isInteger(n)) {
    let high = Math.floor(n / 1e9);
    let rest = n - high * 1e9;
    // Near 2^53 the quotient is rounded before the floor: one step back or on puts it right
    // (high × 10^9 and the difference are exact integers below 2^53).
    if (rest < 0) {
      high -= 1;
      rest += 1e9;
    } else if (rest >= 1e9) {
      high += 1;
      rest -= 1e9;
    }
    const low = `${rest}`;
    return `${high}${ZEROS[9 - low.length] as string}${low}`;
  }
  return `${n}`;
}
