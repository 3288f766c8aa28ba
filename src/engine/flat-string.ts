/**
 * Strings stored for every key must be flat. V8 represents `a + b` as a rope (a ConsString of
 * two parts) and `s.slice()` as a view that keeps the whole of `s` alive; a million keys of
 * ropes cost hundreds of MB, and a sliced `start` would keep the key's plaintext in memory.
 * `String.fromCharCode` over the code units always builds one flat string.
 */
const CHUNK = 8192;

export function flatString(text: string): string {
  const codes = new Uint16Array(text.length);
  for (let i = 0; i < text.length; i++) codes[i] = text.charCodeAt(i);
  return fromCodes(codes);
}

/** A flat string from UTF-16 code units (chunked so huge inputs stay under the argument limit). */
export function fromCodes(codes: Uint16Array | Uint8Array): string {
  if (codes.length <= CHUNK) return String.fromCharCode.apply(null, codes as unknown as number[]);
  let out = '';
  for (let i = 0; i < codes.length; i += CHUNK) out += String.fromCharCode.apply(null, codes.subarray(i, i + CHUNK) as unknown as number[]);
  return flatString(out);
}
