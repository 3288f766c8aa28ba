/**
 * Snapshots are byte-for-byte what they were before keys held their hash as 32 bytes and their
 * refill in their owner (src/engine/key-digest.ts, key-owners.ts): the same calls write the same
 * text as the earlier engine wrote into test/fixtures/snapshot-keys.json (make-snapshot-keys.ts),
 * with the engine's own SHA-256 and with node:crypto's as the server passes it; that file
 * restores and is written back unchanged; and a hash that is no SHA-256 survives a restore.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Engine, type EngineSnapshot, ManualClock } from '../../src/engine/index.js';
import { type KeysFixture, buildKeysFixture } from '../fixtures/make-snapshot-keys.js';
import { unwrap } from '../helpers/engine.js';

// node:crypto, as the server passes it to the engine (src/http/simulator.ts).
const nodeSha256 = (text: string) => createHash('sha256').update(text).digest('base64url');
const nodeSha256Digest = (text: string) => createHash('sha256').update(text).digest('binary');

const fixtureText = readFileSync(new URL('../fixtures/snapshot-keys.json', import.meta.url), 'utf8');
const fixture = JSON.parse(fixtureText) as KeysFixture & { snapshot: EngineSnapshot };

function restoredFixture(options: { sha256?: (text: string) => string; sha256Digest?: (text: string) => string } = {}): Engine {
  const engine = new Engine({ clock: new ManualClock(fixture.snapshot.takenAtMs), seed: fixture.snapshot.seed, ...options });
  unwrap(engine.restore(structuredClone(fixture.snapshot)));
  return engine;
}

describe('snapshots written byte for byte as before the key digest', () => {
  it('the same calls write the text the earlier engine wrote (its own SHA-256, and node:crypto as the server passes it)', () => {
    expect(`${JSON.stringify(buildKeysFixture(), null, 1)}\n`).toBe(fixtureText);
    expect(`${JSON.stringify(buildKeysFixture(nodeSha256Digest), null, 1)}\n`).toBe(fixtureText);
  });

  it('the earlier snapshot restores, is written back unchanged, and its keys verify by their plaintext', () => {
    for (const engine of [
      restoredFixture(),
      restoredFixture({ sha256: nodeSha256, sha256Digest: nodeSha256Digest }),
      restoredFixture({ sha256: nodeSha256 }),
    ]) {
      expect(JSON.stringify(engine.snapshot())).toBe(JSON.stringify(fixture.snapshot));
      const codes = fixture.plaintexts.map((key) => unwrap(engine.keys.verifyKey(undefined, { key, credits: { cost: 0 } })).code);
      // The eighth key was deleted before the snapshot.
      expect(codes).toEqual(['VALID', 'VALID', 'VALID', 'VALID', 'VALID', 'VALID', 'VALID', 'NOT_FOUND', 'VALID']);
    }
  });

  it('a key whose hash is no base64url SHA-256 restores, is written back as it was, and matches no key', () => {
    const snapshot = structuredClone(fixture.snapshot);
    const plaintext = fixture.plaintexts[0]!;
    const hex = createHash('sha256').update(plaintext).digest('hex');
    const original = snapshot.keys[0]!.hash;
    // The same digest in hex, and the base64url with its unused last bits set: other texts.
    snapshot.keys[0]!.hash = hex;
    snapshot.keys[1]!.hash = `${original.slice(0, 42)}${original[42] === 'B' ? 'C' : 'B'}`;
    const engine = new Engine({ clock: new ManualClock(snapshot.takenAtMs), seed: snapshot.seed });
    unwrap(engine.restore(structuredClone(snapshot)));
    expect(JSON.stringify(engine.snapshot())).toBe(JSON.stringify(snapshot));
    expect(unwrap(engine.keys.verifyKey(undefined, { key: plaintext })).code).toBe('NOT_FOUND');
    // Two keys of one hash are refused, whatever form the hash has.
    snapshot.keys[2]!.hash = hex;
    const refused = new Engine({ clock: new ManualClock(snapshot.takenAtMs), seed: snapshot.seed }).restore(snapshot);
    expect(refused.ok).toBe(false);
    if (!refused.ok) expect(refused.error.detail).toMatch(/keys\[2\] has the same hash as keys\[0\]/);
  });
});
