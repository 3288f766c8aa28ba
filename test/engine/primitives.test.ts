import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BASE58_ALPHABET, Random, base58Encode, sha256Base64Url, sha256Hex } from '../../src/engine/index.js';
import { assertProperty } from '../helpers/property.js';

describe('sha256Hex', () => {
  it('matches the FIPS 180-4 test vectors', () => {
    expect(sha256Hex('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(sha256Hex('abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq')).toBe('248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1');
  });

  it('agrees with node:crypto on any string, across block boundaries and non-ASCII text', () => {
    assertProperty(
      fc.property(fc.oneof(fc.string({ maxLength: 200 }), fc.string({ unit: 'grapheme', maxLength: 80 })), (text) => {
        expect(sha256Hex(text)).toBe(createHash('sha256').update(text, 'utf8').digest('hex'));
      }),
      { numRuns: 500 },
    );
    for (const length of [55, 56, 63, 64, 119, 120, 128, 1000]) {
      const text = 'k'.repeat(length);
      expect(sha256Hex(text)).toBe(createHash('sha256').update(text).digest('hex'));
    }
  });
});

describe('sha256Base64Url', () => {
  it('agrees with node:crypto base64url digests on any string', () => {
    expect(sha256Base64Url('abc')).toBe('ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0');
    assertProperty(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 150 }), (text) => {
        expect(sha256Base64Url(text)).toBe(createHash('sha256').update(text, 'utf8').digest('base64url'));
      }),
      { numRuns: 300 },
    );
  });
});

describe('base58Encode', () => {
  it('encodes known values', () => {
    expect(base58Encode(new Uint8Array([]))).toBe('');
    expect(base58Encode(new Uint8Array([0]))).toBe('1');
    expect(base58Encode(new Uint8Array([0, 0, 1]))).toBe('112');
    expect(base58Encode(new TextEncoder().encode('Hello World!'))).toBe('2NEpo7TZRRrLZSi2U');
  });

  it('round-trips through an independent decoder and uses only the Bitcoin alphabet', () => {
    const decode = (text: string): Uint8Array => {
      let n = 0n;
      for (const ch of text) n = n * 58n + BigInt(BASE58_ALPHABET.indexOf(ch));
      const bytes: number[] = [];
      while (n > 0n) {
        bytes.unshift(Number(n & 0xffn));
        n >>= 8n;
      }
      const zeros = /^1*/.exec(text)?.[0].length ?? 0;
      return new Uint8Array([...new Array<number>(zeros).fill(0), ...bytes]);
    };
    assertProperty(
      fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
        const text = base58Encode(bytes);
        expect(text).toMatch(/^[1-9A-HJ-NP-Za-km-z]*$/);
        expect([...decode(text)]).toEqual([...bytes]);
      }),
    );
  });
});

describe('Random', () => {
  it('reproduces the same sequence from the same seed, and differs across seeds', () => {
    const a = new Random(42);
    const b = new Random(42);
    const c = new Random(43);
    const seqA = Array.from({ length: 20 }, () => a.nextUint32());
    expect(Array.from({ length: 20 }, () => b.nextUint32())).toEqual(seqA);
    expect(Array.from({ length: 20 }, () => c.nextUint32())).not.toEqual(seqA);
  });

  it('continues from a saved state and restarts on reseed', () => {
    const r = new Random(7);
    r.bytes(13);
    const state = r.getState();
    const next = r.bytes(32);
    const other = new Random(1);
    other.setState(state);
    expect([...other.bytes(32)]).toEqual([...next]);
    r.reseed(7);
    expect([...r.bytes(13)]).toEqual([...new Random(7).bytes(13)]);
  });

  it('int stays in range and covers it', () => {
    const r = new Random(3);
    const seen = new Set<number>();
    for (let i = 0; i < 2_000; i++) {
      const x = r.int(7);
      expect(x).toBeGreaterThanOrEqual(0);
      expect(x).toBeLessThan(7);
      seen.add(x);
    }
    expect(seen.size).toBe(7);
    expect(() => r.int(0)).toThrow(RangeError);
  });

  it('produces roughly uniform bytes', () => {
    const counts = new Array<number>(256).fill(0);
    const bytes = new Random(11).bytes(256 * 400);
    for (const b of bytes) counts[b] = (counts[b] ?? 0) + 1;
    // Expected 400 each; a broken generator (constant, or stuck bits) is far outside this band.
    expect(Math.min(...counts)).toBeGreaterThan(300);
    expect(Math.max(...counts)).toBeLessThan(500);
  });
});
