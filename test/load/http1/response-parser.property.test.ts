/**
 * Property: however the bytes of a stream of responses are cut into pieces (as TCP may deliver
 * them), the parser finds the same responses — statuses, bodies and connection flags — as from
 * the stream in one piece, and the ones that were written. Also when each piece is lent in one
 * reused read buffer that is scribbled over after every push (the connection's shared buffer).
 */
import fc from 'fast-check';
import { test } from 'vitest';
import { type ParsedResponse, ResponseParser } from '../../../src/load/http1/response-parser.js';
import { assertProperty } from '../../helpers/property.js';

interface Written {
  status: number;
  body: string;
  framing: 'length' | 'chunked' | 'none';
  /** Where the chunked body is cut into chunks (fractions of its length). */
  cuts: number[];
  /** Header names in this case. */
  upper: boolean;
  interim: boolean;
}

const response: fc.Arbitrary<Written> = fc
  .record({
    status: fc.constantFrom(200, 201, 204, 304, 400, 401, 404, 429, 500, 503),
    body: fc.string({ unit: 'grapheme', maxLength: 60 }),
    framing: fc.constantFrom('length' as const, 'chunked' as const),
    cuts: fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 4 }),
    upper: fc.boolean(),
    interim: fc.boolean(),
  })
  .map((r) => (r.status === 204 || r.status === 304 ? { ...r, body: '', framing: 'none' as const } : r));

function serialize(r: Written): Buffer {
  const name = (n: string) => (r.upper ? n.toUpperCase() : n);
  const body = Buffer.from(r.body, 'utf8');
  const parts: Buffer[] = [];
  if (r.interim) parts.push(Buffer.from('HTTP/1.1 100 Continue\r\n\r\n'));
  let head = `HTTP/1.1 ${r.status} Whatever\r\n${name('content-type')}: application/json\r\n`;
  if (r.framing === 'length') head += `${name('content-length')}: ${body.length}\r\n`;
  if (r.framing === 'chunked') head += `${name('transfer-encoding')}: chunked\r\n`;
  parts.push(Buffer.from(`${head}\r\n`));
  if (r.framing === 'length') parts.push(body);
  if (r.framing === 'chunked') {
    const points = [...new Set(r.cuts.map((c) => Math.floor(c * body.length)))].filter((p) => p > 0 && p < body.length).sort((a, b) => a - b);
    let at = 0;
    for (const p of [...points, body.length]) {
      if (p > at) parts.push(Buffer.from(`${(p - at).toString(16)}\r\n`), body.subarray(at, p), Buffer.from('\r\n'));
      at = p;
    }
    parts.push(Buffer.from('0\r\n\r\n'));
  }
  return Buffer.concat(parts);
}

function parse(stream: Buffer, cuts: readonly number[], borrowed = false): Array<{ status: number; body: string }> {
  const seen: Array<{ status: number; body: string }> = [];
  const parser = new ResponseParser((r: ParsedResponse) => {
    seen.push({ status: r.status, body: r.body.toString('utf8') });
    return true;
  });
  const lent = Buffer.alloc(stream.length);
  let at = 0;
  for (const cut of [...cuts, stream.length]) {
    if (borrowed) {
      stream.copy(lent, 0, at, cut);
      parser.push(lent.subarray(0, cut - at), true);
      // What the parser did not copy is gone: the next read overwrites the buffer.
      lent.fill(0x58);
    } else {
      parser.push(stream.subarray(at, cut));
    }
    at = cut;
  }
  return seen;
}

test('any split of a stream of responses parses the same as the whole stream', () => {
  assertProperty(
    fc.property(
      fc.array(response, { minLength: 1, maxLength: 6 }),
      fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 12 }),
      (written, fractions) => {
        const stream = Buffer.concat(written.map(serialize));
        const cuts = [...new Set(fractions.map((f) => Math.floor(f * stream.length)))].filter((c) => c > 0 && c < stream.length).sort((a, b) => a - b);
        const expected = written.map((w) => ({ status: w.status, body: w.body }));
        const whole = parse(stream, []);
        const split = parse(stream, cuts);
        const lent = parse(stream, cuts, true);
        if (JSON.stringify(whole) !== JSON.stringify(expected)) throw new Error(`whole stream: ${JSON.stringify(whole)} ≠ written ${JSON.stringify(expected)}`);
        if (JSON.stringify(split) !== JSON.stringify(expected))
          throw new Error(`split at ${cuts.join(',')}: ${JSON.stringify(split)} ≠ written ${JSON.stringify(expected)}`);
        if (JSON.stringify(lent) !== JSON.stringify(expected))
          throw new Error(`split at ${cuts.join(',')}, lent buffer: ${JSON.stringify(lent)} ≠ written ${JSON.stringify(expected)}`);
      },
    ),
    { numRuns: 300 },
  );
});
