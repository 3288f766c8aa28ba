/**
 * The load client's limits hold whatever the chunking: a head over 64 KiB is refused whether TCP
 * delivers it in one read or in 1,460-byte pieces (fast-check: the same bytes in random chunkings
 * give the same verdict and the same parsed responses), a body over 16 MiB is a clear protocol
 * error, and of two Date headers the first valid one is taken.
 */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { MAX_BODY_BYTES, MAX_HEAD_BYTES, type ParsedResponse, ResponseParser } from '../../../src/load/http1/response-parser.js';
import { assertProperty } from '../../helpers/property.js';

interface Outcome {
  responses: Array<{ status: number; body: string; contentType: string | undefined; dateMs: number | undefined }>;
  error: string | undefined;
}

/** Feeds `stream` cut at `cuts` (sorted offsets), each piece lent in a reused buffer; the outcome. */
function feed(stream: Buffer, cuts: readonly number[]): Outcome {
  const responses: Outcome['responses'] = [];
  const parser = new ResponseParser(
    (r: ParsedResponse) => {
      responses.push({ status: r.status, body: r.body.toString('latin1'), contentType: r.contentType, dateMs: r.dateMs });
      return true;
    },
    { dates: true },
  );
  let at = 0;
  try {
    for (const cut of [...cuts, stream.length]) {
      parser.push(Buffer.from(stream.subarray(at, cut)), true);
      at = cut;
    }
    parser.end();
    return { responses, error: undefined };
  } catch (error) {
    return { responses, error: error instanceof Error ? error.message : String(error) };
  }
}

/** A response whose head is `headBytes` long (its padding header sized to fit), then a small body. */
function answerWithHead(headBytes: number): Buffer {
  const body = '{"data":{}}';
  const fixed = `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\nx-pad: \r\n\r\n`;
  const pad = 'p'.repeat(Math.max(0, headBytes - fixed.length));
  return Buffer.from(`HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\nx-pad: ${pad}\r\n\r\n${body}`, 'latin1');
}

function everyN(length: number, n: number): number[] {
  const cuts: number[] = [];
  for (let c = n; c < length; c += n) cuts.push(c);
  return cuts;
}

describe('head size', () => {
  test('a 70 KiB head is refused in one read as in 1,460-byte reads (the limit no longer depends on how TCP splits the bytes)', () => {
    const stream = answerWithHead(70 * 1024);
    const whole = feed(stream, []);
    const split = feed(stream, everyN(stream.length, 1460));
    expect(whole.error).toMatch(/head is longer than 65536 bytes/);
    expect(split.error).toMatch(/head is longer than 65536 bytes/);
    expect(whole.responses).toEqual([]);
  });

  test('a head of exactly the limit is accepted however it is split', () => {
    const stream = answerWithHead(MAX_HEAD_BYTES);
    expect(feed(stream, []).error).toBeUndefined();
    expect(feed(stream, everyN(stream.length, 1460))).toEqual(feed(stream, []));
    expect(feed(answerWithHead(MAX_HEAD_BYTES + 1), everyN(stream.length, 1460)).error).toMatch(/head is longer/);
  });

  test('any chunking of the same response bytes gives the same result: accepted or refused, the same parsed responses', () => {
    const sizes = [1024, MAX_HEAD_BYTES - 1, MAX_HEAD_BYTES, MAX_HEAD_BYTES + 1, 70 * 1024];
    assertProperty(
      fc.property(
        fc.constantFrom(...sizes),
        fc.boolean(),
        fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 60 }),
        (headBytes, twice, fractions) => {
          const one = answerWithHead(headBytes);
          const stream = twice ? Buffer.concat([answerWithHead(200), one]) : one;
          const cuts = [...new Set(fractions.map((f) => Math.floor(f * stream.length)))].filter((c) => c > 0 && c < stream.length).sort((a, b) => a - b);
          const whole = feed(stream, []);
          const split = feed(stream, cuts);
          expect(split).toEqual(whole);
          expect(whole.error === undefined).toBe(headBytes <= MAX_HEAD_BYTES);
        },
      ),
      { numRuns: 150 },
    );
  });
});

describe('body size', () => {
  test('a body over 16 MiB is refused as a protocol error: by its Content-Length, chunked, or until the close', () => {
    const big = MAX_BODY_BYTES + 1;
    expect(feed(Buffer.from(`HTTP/1.1 200 OK\r\ncontent-length: ${big}\r\n\r\n`), []).error).toMatch(/body is larger than 16777216 bytes/);
    const chunk = Buffer.alloc(4 * 1024 * 1024, 0x61);
    const chunked = [Buffer.from('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n')];
    for (let i = 0; i < 5; i++) chunked.push(Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n'));
    chunked.push(Buffer.from('0\r\n\r\n'));
    expect(feed(Buffer.concat(chunked), []).error).toMatch(/body is larger than/);
    const untilClose = Buffer.concat([Buffer.from('HTTP/1.1 200 OK\r\n\r\n'), Buffer.alloc(big, 0x61)]);
    expect(feed(untilClose, everyN(untilClose.length, 1024 * 1024)).error).toMatch(/body is larger than/);
  });

  test('a body of exactly 16 MiB is read', () => {
    const stream = Buffer.concat([Buffer.from(`HTTP/1.1 200 OK\r\ncontent-length: ${MAX_BODY_BYTES}\r\n\r\n`), Buffer.alloc(MAX_BODY_BYTES, 0x61)]);
    const out = feed(stream, everyN(stream.length, 1024 * 1024));
    expect(out.error).toBeUndefined();
    expect(out.responses[0]?.body.length).toBe(MAX_BODY_BYTES);
  });
});

describe('Date headers', () => {
  test('two Date headers are not read as "no Date header": the first valid one is taken', () => {
    const two = Buffer.from('HTTP/1.1 200 OK\r\ndate: Sat, 28 Nov 2026 02:30:16 GMT\r\ndate: Sat, 28 Nov 2026 02:30:17 GMT\r\ncontent-length: 0\r\n\r\n');
    expect(feed(two, []).responses[0]?.dateMs).toBe(Date.parse('2026-11-28T02:30:16Z'));
    const badFirst = Buffer.from('HTTP/1.1 200 OK\r\nDate: not a date\r\nDate: Sat, 28 Nov 2026 02:30:17 GMT\r\ncontent-length: 0\r\n\r\n');
    expect(feed(badFirst, []).responses[0]?.dateMs).toBe(Date.parse('2026-11-28T02:30:17Z'));
  });
});
