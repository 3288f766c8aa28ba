/**
 * SHA-256 (FIPS 180-4) in plain TypeScript. The engine may not import `node:crypto` (it has no
 * I/O and no platform dependencies), and keys are short, so one or two compression rounds per
 * hash keep verification fast. Checked against node:crypto in the tests.
 */

const K = new Int32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74,
  0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d,
  0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e,
  0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5,
  0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);
const H0 = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19];
const HEX_CODES = Array.from('0123456789abcdef', (ch) => ch.charCodeAt(0));

// Scratch buffers reused across calls: the engine is synchronous, so there is no reentrancy.
// Non-null assertions below index fixed-size typed arrays within their bounds.
const W = new Int32Array(64);
const H = new Int32Array(8);
const SHORT = new Uint8Array(128);
const OUT = new Uint8Array(64);
const B64_CODES = Array.from('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_', (ch) => ch.charCodeAt(0));
const DIGEST = new Uint8Array(32);
const OUT64 = new Uint8Array(43);

/** Writes `text` as UTF-8 followed by SHA-256 padding; returns the padded message. */
function pad(text: string): Uint8Array {
  let data: Uint8Array | undefined;
  let length = text.length;
  for (let i = 0; i < text.length; i++) {
    if (text.charCodeAt(i) > 0x7f) {
      data = new TextEncoder().encode(text);
      length = data.length;
      break;
    }
  }
  const total = Math.ceil((length + 9) / 64) * 64;
  const padded = total <= SHORT.length ? SHORT : new Uint8Array(total);
  if (data === undefined) {
    for (let i = 0; i < length; i++) padded[i] = text.charCodeAt(i);
  } else {
    padded.set(data);
  }
  padded.fill(0, length, total);
  padded[length] = 0x80;
  const bitLength = length * 8;
  const high = Math.floor(bitLength / 0x1_0000_0000);
  const low = bitLength >>> 0;
  padded[total - 8] = high >>> 24;
  padded[total - 7] = (high >>> 16) & 0xff;
  padded[total - 6] = (high >>> 8) & 0xff;
  padded[total - 5] = high & 0xff;
  padded[total - 4] = low >>> 24;
  padded[total - 3] = (low >>> 16) & 0xff;
  padded[total - 2] = (low >>> 8) & 0xff;
  padded[total - 1] = low & 0xff;
  return total === padded.length ? padded : padded.subarray(0, total);
}

function compress(m: Uint8Array, offset: number): void {
  for (let t = 0; t < 16; t++) {
    const o = offset + t * 4;
    W[t] = (m[o]! << 24) | (m[o + 1]! << 16) | (m[o + 2]! << 8) | m[o + 3]!;
  }
  for (let t = 16; t < 64; t++) {
    const w15 = W[t - 15]!;
    const w2 = W[t - 2]!;
    const s0 = ((w15 >>> 7) | (w15 << 25)) ^ ((w15 >>> 18) | (w15 << 14)) ^ (w15 >>> 3);
    const s1 = ((w2 >>> 17) | (w2 << 15)) ^ ((w2 >>> 19) | (w2 << 13)) ^ (w2 >>> 10);
    W[t] = (W[t - 16]! + s0 + W[t - 7]! + s1) | 0;
  }
  let a = H[0]!;
  let b = H[1]!;
  let c = H[2]!;
  let d = H[3]!;
  let e = H[4]!;
  let f = H[5]!;
  let g = H[6]!;
  let h = H[7]!;
  for (let t = 0; t < 64; t++) {
    const S1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
    const ch = (e & f) ^ (~e & g);
    const t1 = (h + S1 + ch + K[t]! + W[t]!) | 0;
    const S0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
    const maj = (a & b) ^ (a & c) ^ (b & c);
    const t2 = (S0 + maj) | 0;
    h = g;
    g = f;
    f = e;
    e = (d + t1) | 0;
    d = c;
    c = b;
    b = a;
    a = (t1 + t2) | 0;
  }
  H[0] = (H[0]! + a) | 0;
  H[1] = (H[1]! + b) | 0;
  H[2] = (H[2]! + c) | 0;
  H[3] = (H[3]! + d) | 0;
  H[4] = (H[4]! + e) | 0;
  H[5] = (H[5]! + f) | 0;
  H[6] = (H[6]! + g) | 0;
  H[7] = (H[7]! + h) | 0;
}

function digest(text: string): void {
  const message = pad(text);
  H.set(H0);
  for (let offset = 0; offset < message.length; offset += 64) compress(message, offset);
}

/** SHA-256 of the UTF-8 encoding of `text`, as 64 lowercase hex digits. */
export function sha256Hex(text: string): string {
  digest(text);
  // One flat string from char codes: a hash is kept per key, and `+=` would store a rope.
  for (let i = 0; i < 8; i++) {
    const word = H[i]!;
    for (let nibble = 0; nibble < 8; nibble++) OUT[i * 8 + nibble] = HEX_CODES[(word >>> (28 - nibble * 4)) & 0xf]!;
  }
  return String.fromCharCode.apply(null, OUT as unknown as number[]);
}

function digestBytes(): void {
  for (let i = 0; i < 8; i++) {
    const word = H[i]!;
    DIGEST[i * 4] = word >>> 24;
    DIGEST[i * 4 + 1] = (word >>> 16) & 0xff;
    DIGEST[i * 4 + 2] = (word >>> 8) & 0xff;
    DIGEST[i * 4 + 3] = word & 0xff;
  }
}

/**
 * SHA-256 of the UTF-8 encoding of `text`, as a string of its 32 bytes (one character, code
 * 0–255, a byte; what node:crypto's `digest('latin1')` gives): the form the engine holds a key's
 * hash in (key-digest.ts).
 */
export function sha256Digest(text: string): string {
  digest(text);
  digestBytes();
  return String.fromCharCode.apply(null, DIGEST as unknown as number[]);
}

/**
 * SHA-256 of the UTF-8 encoding of `text`, as unpadded base64url (43 characters): the form of
 * snapshots and root keys — the same digest as hex in two thirds of the memory.
 */
export function sha256Base64Url(text: string): string {
  digest(text);
  digestBytes();
  let at = 0;
  for (let i = 0; i < 30; i += 3) {
    const n = (DIGEST[i]! << 16) | (DIGEST[i + 1]! << 8) | DIGEST[i + 2]!;
    OUT64[at++] = B64_CODES[n >>> 18]!;
    OUT64[at++] = B64_CODES[(n >>> 12) & 63]!;
    OUT64[at++] = B64_CODES[(n >>> 6) & 63]!;
    OUT64[at++] = B64_CODES[n & 63]!;
  }
  // The last two bytes give three characters (no padding).
  const n = (DIGEST[30]! << 16) | (DIGEST[31]! << 8);
  OUT64[at++] = B64_CODES[n >>> 18]!;
  OUT64[at++] = B64_CODES[(n >>> 12) & 63]!;
  OUT64[at] = B64_CODES[(n >>> 6) & 63]!;
  return String.fromCharCode.apply(null, OUT64 as unknown as number[]);
}
