/**
 * Strings stored for every key must be flat. V8 represents `a + b` as a rope (a ConsString of
 * two parts) and `s.slice()` as a view that keeps the whole of `s` alive; a million keys of
 * ropes cost hundreds of MB, and a sliced `start` would keep the key's plaintext in memory.
 *
 * `flatString` copies through JSON: JSON.stringify writes a new string and JSON.parse reads it
 * back into a new sequential one (lone surrogates round-trip as escapes), whatever `text` was.
 * It touches no typed array: one over 64 bytes (a SHA-256 hash of 43 characters as UTF-16 is
 * 86) gets a backing store allocated outside the JavaScript heap, so a restore that copied each
 * key's hash that way made a million allocations of the C heap, and took 2.5 times as long to
 * copy (docs/benchmarks.md, "Memory: a million keys").
 */
const CHUNK = 8192;

export function flatString(text: string): string {
  return JSON.parse(JSON.stringify(text)) as string;
}

/** A flat string from UTF-16 code units (chunked so huge inputs stay under the argument limit). */
export function fromCodes(codes: Uint16Array | Uint8Array): string {
  if (codes.length <= CHUNK) return String.fromCharCode.apply(null, codes as unknown as number[]);
  let out = '';
  for (let i = 0; i < codes.length; i += CHUNK) out += String.fromCharCode.apply(null, codes.subarray(i, i + CHUNK) as unknown as number[]);
  return flatString(out);
}
