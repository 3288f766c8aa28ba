/**
 * How a key's hash is held in memory: its 32 bytes as a string of 32 one-byte characters (each
 * code 0–255), the "digest", instead of the 43 characters of unpadded base64url a snapshot and
 * `KeyRecord.hash` carry. V8 stores such a string one byte a character: 48 bytes on the heap
 * instead of 64, 16 MB less at a million keys (docs/benchmarks.md, "Memory: a million keys").
 * The key index (state.ts, `keysByDigest`) is keyed by it, and a verification hashes straight
 * into it (node:crypto's `digest('latin1')`, or sha256.ts's `sha256Digest`).
 *
 * A snapshot may hold any text of 1 to 255 characters as a key's hash (a hand-written one, or one
 * of another tool). Only a canonical base64url SHA-256 (43 characters of the url-safe alphabet
 * whose unused last bits are zero, as every hash the engine makes) becomes a digest; any other
 * text is kept as itself behind a mark, U+0100, that no digest can start with (a digest's
 * characters are all below U+0100). So the two forms map one to one, every snapshot is written
 * back byte for byte, and such a key matches no verification, as before.
 */
import { flatString } from './flat-string.js';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const CODES = Array.from(ALPHABET, (ch) => ch.charCodeAt(0));
const VALUE = new Int8Array(128).fill(-1);
for (let i = 0; i < ALPHABET.length; i++) VALUE[ALPHABET.charCodeAt(i)] = i;

/** Characters of a SHA-256 as unpadded base64url; bytes of it. */
export const HASH_LENGTH = 43;
export const DIGEST_LENGTH = 32;
/** Starts the in-memory form of a hash that is not a canonical base64url SHA-256. */
const OTHER_MARK = '\u0100';

// Scratch buffers: the engine is synchronous, so there is no reentrancy. Plain arrays of small
// integers: String.fromCharCode.apply reads them faster than typed arrays (about 1.5x, 43 codes).
const BYTES: number[] = new Array<number>(DIGEST_LENGTH).fill(0);
const TEXT: number[] = new Array<number>(HASH_LENGTH).fill(0);

function sextet(hash: string, i: number): number {
  const unit = hash.charCodeAt(i);
  return unit < 128 ? VALUE[unit]! : -1;
}

/** The in-memory form of a key hash as a snapshot or `KeyRecord.hash` gives it (one to one). */
export function digestOfHash(hash: string): string {
  if (hash.length === HASH_LENGTH && decodeInto(hash)) return String.fromCharCode.apply(null, BYTES);
  // A rope or a slice would keep more than the text (flat-string.ts).
  return flatString(OTHER_MARK + hash);
}

/** Decodes 43 base64url characters into BYTES; false unless they are a canonical encoding. */
function decodeInto(hash: string): boolean {
  let at = 0;
  for (let i = 0; i < 40; i += 4) {
    const a = sextet(hash, i);
    const b = sextet(hash, i + 1);
    const c = sextet(hash, i + 2);
    const d = sextet(hash, i + 3);
    if ((a | b | c | d) < 0) return false;
    const n = (a << 18) | (b << 12) | (c << 6) | d;
    BYTES[at++] = n >>> 16;
    BYTES[at++] = (n >>> 8) & 0xff;
    BYTES[at++] = n & 0xff;
  }
  // The last three characters carry two bytes and two unused bits, which must be zero.
  const a = sextet(hash, 40);
  const b = sextet(hash, 41);
  const c = sextet(hash, 42);
  if ((a | b | c) < 0 || (c & 3) !== 0) return false;
  const n = (a << 12) | (b << 6) | c;
  BYTES[30] = n >>> 10;
  BYTES[31] = (n >>> 2) & 0xff;
  return true;
}

/** The key hash (unpadded base64url, or the snapshot's own text) of an in-memory digest. */
export function hashOfDigest(digest: string): string {
  if (digest.charCodeAt(0) === OTHER_MARK.charCodeAt(0)) return digest.slice(1);
  let at = 0;
  for (let i = 0; i < 30; i += 3) {
    const n = (digest.charCodeAt(i) << 16) | (digest.charCodeAt(i + 1) << 8) | digest.charCodeAt(i + 2);
    TEXT[at++] = CODES[n >>> 18]!;
    TEXT[at++] = CODES[(n >>> 12) & 63]!;
    TEXT[at++] = CODES[(n >>> 6) & 63]!;
    TEXT[at++] = CODES[n & 63]!;
  }
  const n = (digest.charCodeAt(30) << 16) | (digest.charCodeAt(31) << 8);
  TEXT[at++] = CODES[n >>> 18]!;
  TEXT[at++] = CODES[(n >>> 12) & 63]!;
  TEXT[at] = CODES[(n >>> 6) & 63]!;
  return String.fromCharCode.apply(null, TEXT);
}
