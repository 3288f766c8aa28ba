/**
 * The load client's response parser on byte streams built by hand: every framing a server may
 * use (Content-Length, chunked, until close, no body), interim answers, header names in any case,
 * pipelined answers in one piece, and the same stream split at every byte.
 */
import { describe, expect, test } from 'vitest';
import { type ParsedResponse, ResponseParser } from '../../../src/load/http1/response-parser.js';

interface Seen {
  status: number;
  body: string;
  close: boolean;
  keepAliveMs: number | undefined;
}

function collect(): { parser: ResponseParser; seen: Seen[] } {
  const seen: Seen[] = [];
  const parser = new ResponseParser((r: ParsedResponse) => {
    seen.push({ status: r.status, body: r.body.toString('utf8'), close: r.close, keepAliveMs: r.keepAliveMs });
    return true;
  });
  return { parser, seen };
}

function parseAll(stream: string, pieces: readonly number[] = []): Seen[] {
  const { parser, seen } = collect();
  const bytes = Buffer.from(stream, 'utf8');
  let at = 0;
  for (const cut of [...pieces, bytes.length]) {
    parser.push(bytes.subarray(at, cut));
    at = cut;
  }
  parser.end();
  return seen;
}

const json = '{"data":{"valid":true,"code":"VALID"},"meta":{"requestId":"req_1"}}';
const lengthAnswer = `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(json)}\r\nkeep-alive: timeout=5\r\n\r\n${json}`;
const chunkedAnswer = `HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{"dat\r\n1a;ext=1\r\na":{"code":"NOT_FOUND"}}  \r\n0\r\nx-trailer: yes\r\n\r\n`;

describe('response framing', () => {
  test('a Content-Length body is read exactly, with the keep-alive hint', () => {
    expect(parseAll(lengthAnswer)).toEqual([{ status: 200, body: json, close: false, keepAliveMs: 5_000 }]);
  });

  test('a chunked body is put back together; extensions and trailers are skipped', () => {
    expect(parseAll(chunkedAnswer)).toEqual([{ status: 201, body: '{"data":{"code":"NOT_FOUND"}}  ', close: false, keepAliveMs: undefined }]);
  });

  test('header names and the close token are matched in any case', () => {
    const seen = parseAll(`HTTP/1.1 404 Not Found\r\nCONTENT-LENGTH: 2\r\nConnection: Close\r\n\r\n{}`);
    expect(seen).toEqual([{ status: 404, body: '{}', close: true, keepAliveMs: undefined }]);
  });

  test('without a length or chunked coding the body runs until the server closes', () => {
    const { parser, seen } = collect();
    parser.push(Buffer.from('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\r\n{"a":'));
    parser.push(Buffer.from('1}'));
    expect(seen).toEqual([]);
    expect(parser.end()).toBe(true);
    expect(seen).toEqual([{ status: 200, body: '{"a":1}', close: true, keepAliveMs: undefined }]);
  });

  test('204 and 304 have no body even with a Content-Length; a 1xx interim answer is skipped', () => {
    const seen = parseAll(`HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\ncontent-length: 10\r\n\r\nHTTP/1.1 304 Not Modified\r\n\r\n${lengthAnswer}`);
    expect(seen.map((s) => [s.status, s.body])).toEqual([
      [204, ''],
      [304, ''],
      [200, json],
    ]);
  });

  test('Keep-Alive and Connection values with several parts are read', () => {
    const a = parseAll('HTTP/1.1 200 OK\r\nKeep-Alive: max=100, Timeout = 7\r\nconnection: Upgrade, CLOSE\r\ncontent-length: 0\r\n\r\n')[0];
    expect(a).toMatchObject({ close: true, keepAliveMs: 7_000 });
    const b = parseAll('HTTP/1.1 200 OK\r\nkeep-alive: timeout=15, max=5\r\nconnection: keep-alive\r\ncontent-length: 0\r\n\r\n')[0];
    expect(b).toMatchObject({ close: false, keepAliveMs: 15_000 });
  });

  test('HTTP/1.0 closes unless it says keep-alive', () => {
    expect(parseAll('HTTP/1.0 200 OK\r\ncontent-length: 0\r\n\r\n')[0]?.close).toBe(true);
    expect(parseAll('HTTP/1.0 200 OK\r\nconnection: keep-alive\r\ncontent-length: 0\r\n\r\n')[0]?.close).toBe(false);
  });

  test('pipelined answers in one piece come out in order', () => {
    const stream = `${lengthAnswer}${chunkedAnswer}${lengthAnswer}`;
    expect(parseAll(stream).map((s) => s.status)).toEqual([200, 201, 200]);
  });

  test('the same stream split at every byte parses the same (multi-byte UTF-8 included)', () => {
    const utf8 = '{"name":"café ✓"}';
    const stream = `${lengthAnswer}${chunkedAnswer}HTTP/1.1 200 OK\r\ncontent-length: ${Buffer.byteLength(utf8)}\r\n\r\n${utf8}`;
    const whole = parseAll(stream);
    expect(whole).toHaveLength(3);
    expect(whole[2]?.body).toBe(utf8);
    const length = Buffer.byteLength(stream);
    for (let cut = 1; cut < length; cut++) expect(parseAll(stream, [cut])).toEqual(whole);
    // One byte at a time.
    expect(
      parseAll(
        stream,
        Array.from({ length: length - 1 }, (_, i) => i + 1),
      ),
    ).toEqual(whole);
  });

  test('a close in the middle of a response is reported as cut short', () => {
    const { parser, seen } = collect();
    parser.push(Buffer.from(lengthAnswer.slice(0, -3)));
    expect(parser.end()).toBe(false);
    expect(seen).toEqual([]);
  });
});

describe('bytes that are not a response are refused with a message naming what is wrong', () => {
  test.each([
    ['not HTTP', 'SSH-2.0-OpenSSH_9.6\r\n\r\n', /not an HTTP\/1\.x response/],
    ['no status code', 'HTTP/1.1 abc OK\r\n\r\n', /no valid status code/],
    ['a bad Content-Length', 'HTTP/1.1 200 OK\r\ncontent-length: 12x\r\n\r\n', /Content-Length is not a number/],
    ['two Content-Lengths that differ', 'HTTP/1.1 200 OK\r\ncontent-length: 1\r\ncontent-length: 2\r\n\r\n', /two different Content-Length/],
    ['a bad chunk size', 'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n', /chunk size is not hexadecimal/],
    ['a header line without a colon', 'HTTP/1.1 200 OK\r\nbroken\r\n\r\n', /no colon/],
  ])('%s', (_name, stream, message) => {
    const { parser } = collect();
    expect(() => parser.push(Buffer.from(stream))).toThrow(message);
  });
});
