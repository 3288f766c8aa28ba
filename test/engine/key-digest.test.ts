/**
 * A key's hash held as its 32 bytes (src/engine/key-digest.ts): the engine's own SHA-256 and
 * node:crypto give the same digests, and the in-memory form maps one to one to the text a
 * snapshot carries, whatever that text is.
 */
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { digestOfHash, hashOfDigest, sha256Base64Url, sha256Digest } from '../../src/engine/index.js';
import { assertProperty } from '../helpers/property.js';

const B64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const nodeDigest = (text: string) => createHash('sha256').update(text, 'utf8').digest('binary');
/** 43 characters of the url-safe alphabet: canonical encodings (a quarter of them) and others. */
const hashLike = fc.array(fc.constantFrom(...B64URL.split('')), { minLength: 43, maxLength: 43 }).map((chars) => chars.join(''));
const anyHash = fc.oneof(hashLike, fc.string({ unit: 'binary', minLength: 1, maxLength: 255 }), fc.string({ minLength: 31, maxLength: 33 }));

describe('sha256Digest', () => {
  it("agrees with node:crypto's digest('binary') (latin1) on any string, and is the base64url hash's bytes", () => {
    expect(sha256Digest('abc')).toBe(Buffer.from('ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0', 'base64url').toString('latin1'));
    assertProperty(
      fc.property(fc.oneof(fc.string({ maxLength: 200 }), fc.string({ unit: 'grapheme', maxLength: 80 })), (text) => {
        const digest = sha256Digest(text);
        expect(digest).toBe(nodeDigest(text));
        expect(digest).toHaveLength(32);
        expect(digestOfHash(sha256Base64Url(text))).toBe(digest);
        expect(hashOfDigest(digest)).toBe(sha256Base64Url(text));
      }),
      { numRuns: 300 },
    );
  });
});

describe('digestOfHash and hashOfDigest', () => {
  it('give back any hash text a snapshot may carry, canonical or not', () => {
    assertProperty(
      fc.property(anyHash, (hash) => {
        expect(hashOfDigest(digestOfHash(hash))).toBe(hash);
      }),
      { numRuns: 500 },
    );
  });

  it('never give two hash texts the same digest', () => {
    assertProperty(
      fc.property(anyHash, anyHash, (a, b) => {
        expect(digestOfHash(a) === digestOfHash(b)).toBe(a === b);
      }),
      { numRuns: 500 },
    );
    // The same bytes written with the unused last bits set, or with standard base64's characters,
    // are other texts: they keep digests of their own, and no key's digest.
    const hash = sha256Base64Url('k');
    const lastBitsSet = `${hash.slice(0, 42)}${B64URL[B64URL.indexOf(hash[42]!) | 1]}`;
    expect(digestOfHash(lastBitsSet)).not.toBe(digestOfHash(hash));
    expect(hashOfDigest(digestOfHash(lastBitsSet))).toBe(lastBitsSet);
    // 'abc' hashes to ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0: in standard base64, + and /.
    const standard = createHash('sha256').update('abc').digest('base64').replace(/=+$/, '');
    expect(standard).toMatch(/[+/]/);
    expect(digestOfHash(standard)).not.toBe(nodeDigest('abc'));
    expect(hashOfDigest(digestOfHash(standard))).toBe(standard);
    // A 32-character text that is not a hash is not taken for a digest.
    const text32 = 'x'.repeat(32);
    expect(hashOfDigest(digestOfHash(text32))).toBe(text32);
    expect(digestOfHash(text32)).not.toBe(text32);
  });

  it('a canonical hash becomes 32 one-byte characters; any other text a marked copy', () => {
    const digest = digestOfHash(sha256Base64Url('key'));
    expect(digest).toHaveLength(32);
    expect([...digest].every((ch) => ch.charCodeAt(0) < 256)).toBe(true);
    expect(digestOfHash('h1')).toBe('\u0100h1');
  });
});
