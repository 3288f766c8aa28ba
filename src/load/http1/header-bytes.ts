/**
 * Byte-level reading of HTTP/1.x header names and values, in place in the read buffer: the
 * response parser compares the few names it needs without making strings of the rest, which is
 * most of why it is cheap.
 */

/** Lower-case ASCII of a byte. */
export function lower(byte: number): number {
  return byte >= 0x41 && byte <= 0x5a ? byte | 0x20 : byte;
}

/** Whether buf[start, start + name.length) is `name` (given in lower case), ignoring case. */
export function nameIs(buf: Buffer, start: number, length: number, name: string): boolean {
  if (length !== name.length) return false;
  for (let i = 0; i < length; i++) if (lower(buf[start + i] as number) !== name.charCodeAt(i)) return false;
  return true;
}

/** Whether the comma-separated header value buf[start, end) holds the token (lower case), ignoring case. */
export function hasToken(buf: Buffer, start: number, end: number, token: string): boolean {
  // The usual value is the token alone ("keep-alive", "close"): compared in place, without a string.
  if (nameIs(buf, start, end - start, token)) return true;
  if (end - start <= token.length) return false;
  const value = buf.toString('latin1', start, end).toLowerCase();
  return value.split(',').some((part) => part.trim() === token);
}

/** The whole seconds of "timeout=N" in a Keep-Alive header value, in ms; undefined when absent. */
export function keepAliveTimeoutMs(buf: Buffer, start: number, end: number): number | undefined {
  // "timeout=5" (node:http's own) is read in place; anything else goes through a regular expression.
  if (end - start > 8 && nameIs(buf, start, 8, 'timeout=')) {
    let n = 0;
    let i = start + 8;
    for (; i < end; i++) {
      const d = (buf[i] as number) - 0x30;
      if (d < 0 || d > 9) break;
      n = n * 10 + d;
    }
    if (i === end && i > start + 8) return n * 1000;
  }
  const match = /timeout\s*=\s*(\d+)/i.exec(buf.toString('latin1', start, end));
  return match === null ? undefined : Number(match[1]) * 1000;
}
