/**
 * The head of one HTTP/1.x response: its status line and the few headers a load client needs
 * (Content-Length, Transfer-Encoding, Connection, Keep-Alive, Content-Type, Content-Encoding and,
 * when asked, Date). Every other header is skipped without being decoded.
 */
import { HttpProtocolError } from './errors.js';
import { hasToken, keepAliveTimeoutMs, lower, nameIs } from './header-bytes.js';

/** What a response head says. */
export interface ResponseHead {
  status: number;
  /** -1 when the head has no Content-Length. */
  contentLength: number;
  chunked: boolean;
  /** `Connection: close`, or HTTP/1.0 without keep-alive. */
  close: boolean;
  keepAliveMs: number | undefined;
  contentType: string | undefined;
  contentEncoding: string | undefined;
  dateMs: number | undefined;
  /** The `x-keysim-region` header: the region that answered (keysim's production profile names it). */
  region: string | undefined;
}

/** A head to fill with readResponseHead (one per parser, reused for every response: no allocation per answer). */
export function emptyResponseHead(): ResponseHead {
  return {
    status: 0,
    contentLength: -1,
    chunked: false,
    close: false,
    keepAliveMs: undefined,
    contentType: undefined,
    contentEncoding: undefined,
    dateMs: undefined,
    region: undefined,
  };
}

/**
 * Reads the head in buf[start, end) (end = its blank line) into `head`; throws HttpProtocolError
 * when it is not an HTTP/1.x response head. `dates`: read the Date header too.
 */
export function readResponseHead(buf: Buffer, start: number, end: number, dates: boolean, head: ResponseHead): ResponseHead {
  // "HTTP/1.x SSS": 12 bytes at least.
  if (
    end - start < 12 ||
    buf[start] !== 0x48 ||
    buf[start + 1] !== 0x54 ||
    buf[start + 2] !== 0x54 ||
    buf[start + 3] !== 0x50 ||
    buf[start + 4] !== 0x2f ||
    buf[start + 5] !== 0x31 ||
    buf[start + 6] !== 0x2e ||
    buf[start + 8] !== 0x20
  ) {
    throw new HttpProtocolError(`the answer is not an HTTP/1.x response: "${buf.toString('latin1', start, Math.min(end, start + 40))}"`);
  }
  const http10 = buf[start + 7] === 0x30;
  const d0 = (buf[start + 9] as number) - 0x30;
  const d1 = (buf[start + 10] as number) - 0x30;
  const d2 = (buf[start + 11] as number) - 0x30;
  if (d0 < 1 || d0 > 5 || d1 < 0 || d1 > 9 || d2 < 0 || d2 > 9) {
    throw new HttpProtocolError(`the status line has no valid status code: "${buf.toString('latin1', start, Math.min(end, start + 40))}"`);
  }
  head.status = d0 * 100 + d1 * 10 + d2;
  let contentLength = -1;
  let chunked = false;
  let close = http10;
  let keepAliveMs: number | undefined;
  let contentType: string | undefined;
  let contentEncoding: string | undefined;
  let dateMs: number | undefined;
  let region: string | undefined;
  // Header lines: from after the status line to `end`.
  let line = buf.indexOf(0x0a, start + 12) + 1;
  while (line > 0 && line < end + 2) {
    let lineEnd = buf.indexOf(0x0a, line);
    if (lineEnd < 0 || lineEnd > end + 2) lineEnd = end + 2;
    const valueEnd = buf[lineEnd - 1] === 0x0d ? lineEnd - 1 : lineEnd;
    let colon = line;
    while (colon < valueEnd && buf[colon] !== 0x3a) colon++;
    if (colon === valueEnd)
      throw new HttpProtocolError(`a response header line has no colon: "${buf.toString('latin1', line, Math.min(valueEnd, line + 40))}"`);
    const nameLength = colon - line;
    // Only a few names matter, and they differ in length or first letter.
    const first = lower(buf[line] as number);
    let v = colon + 1;
    while (v < valueEnd && (buf[v] === 0x20 || buf[v] === 0x09)) v++;
    let ve = valueEnd;
    while (ve > v && (buf[ve - 1] === 0x20 || buf[ve - 1] === 0x09)) ve--;
    if (first === 0x63 && nameLength === 14 && nameIs(buf, line, 14, 'content-length')) {
      let n = 0;
      if (v === ve || ve - v > 15) throw new HttpProtocolError(`Content-Length is not a number: "${buf.toString('latin1', v, ve)}"`);
      for (let i = v; i < ve; i++) {
        const d = (buf[i] as number) - 0x30;
        if (d < 0 || d > 9) throw new HttpProtocolError(`Content-Length is not a number: "${buf.toString('latin1', v, ve)}"`);
        n = n * 10 + d;
      }
      if (contentLength >= 0 && contentLength !== n) throw new HttpProtocolError('the response has two different Content-Length headers');
      contentLength = n;
    } else if (first === 0x74 && nameLength === 17 && nameIs(buf, line, 17, 'transfer-encoding')) {
      // Chunked must be the last coding; other codings (gzip) are not asked for, so not expected.
      chunked = buf.toString('latin1', v, ve).toLowerCase().trimEnd().endsWith('chunked');
    } else if (first === 0x63 && nameLength === 10 && nameIs(buf, line, 10, 'connection')) {
      if (hasToken(buf, v, ve, 'close')) close = true;
      else if (http10 && hasToken(buf, v, ve, 'keep-alive')) close = false;
    } else if (first === 0x6b && nameLength === 10 && nameIs(buf, line, 10, 'keep-alive')) {
      keepAliveMs = keepAliveTimeoutMs(buf, v, ve) ?? keepAliveMs;
    } else if (first === 0x63 && nameLength === 12 && contentType === undefined && nameIs(buf, line, 12, 'content-type')) {
      contentType = buf.toString('latin1', v, ve);
    } else if (first === 0x63 && nameLength === 16 && nameIs(buf, line, 16, 'content-encoding')) {
      const coding = buf.toString('latin1', v, ve).toLowerCase();
      contentEncoding = contentEncoding === undefined ? coding : `${contentEncoding}, ${coding}`;
    } else if (first === 0x64 && nameLength === 4 && dates && dateMs === undefined && nameIs(buf, line, 4, 'date')) {
      // Two Date headers (a proxy adding its own): the first that parses is the one.
      const parsed = Date.parse(buf.toString('latin1', v, ve));
      if (Number.isFinite(parsed)) dateMs = parsed;
    } else if (first === 0x78 && nameLength === 15 && region === undefined && nameIs(buf, line, 15, 'x-keysim-region')) {
      // The region that answered, for a promise set's bounds (docs/consistency.md); short, kept as text.
      region = buf.toString('latin1', v, Math.min(ve, v + 64));
    }
    line = lineEnd + 1;
  }
  head.contentLength = contentLength;
  head.chunked = chunked;
  head.close = close;
  head.keepAliveMs = keepAliveMs;
  head.contentType = contentType;
  head.contentEncoding = contentEncoding;
  head.dateMs = dateMs;
  head.region = region;
  return head;
}
