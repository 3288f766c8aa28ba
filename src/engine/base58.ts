import { fromCodes } from './flat-string.js';

/** The Bitcoin base58 alphabet: no 0, O, I or l, so keys survive being read aloud or retyped. */
export const BASE58_ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

const ALPHABET_CODES = Array.from(BASE58_ALPHABET, (ch) => ch.charCodeAt(0));

/**
 * Encodes bytes as base58 (big-endian number, leading zero bytes as '1'), optionally after a
 * prefix, as one flat string (see flat-string.ts).
 */
export function base58Encode(bytes: Uint8Array, prefix = ''): string {
  let zeros = 0;
  while (zeros < bytes.length && bytes[zeros] === 0) zeros++;
  // Repeated division of the byte array by 58, digits collected least significant first.
  const digits: number[] = [];
  for (let i = zeros; i < bytes.length; i++) {
    let carry = bytes[i] ?? 0;
    for (let j = 0; j < digits.length; j++) {
      carry += (digits[j] ?? 0) << 8;
      digits[j] = carry % 58;
      carry = (carry / 58) | 0;
    }
    while (carry > 0) {
      digits.push(carry % 58);
      carry = (carry / 58) | 0;
    }
  }
  const codes = new Uint16Array(prefix.length + zeros + digits.length);
  for (let i = 0; i < prefix.length; i++) codes[i] = prefix.charCodeAt(i);
  codes.fill(0x31, prefix.length, prefix.length + zeros); // '1'
  let at = prefix.length + zeros;
  for (let k = digits.length - 1; k >= 0; k--) codes[at++] = ALPHABET_CODES[digits[k] ?? 0] ?? 0;
  return fromCodes(codes);
}
