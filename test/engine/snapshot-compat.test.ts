/**
 * A snapshot written by an earlier keysim (test/fixtures/snapshot-v1.json, written before keys got
 * their compact in-memory form; see make-snapshot-v1.ts) still restores, behaves, and is written
 * back unchanged.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Engine, ManualClock, type EngineSnapshot } from '../../src/engine/index.js';
import { unwrap } from '../helpers/engine.js';

interface Fixture {
  plaintexts: Record<'plain' | 'monthly' | 'daily' | 'full' | 'disabled', string>;
  keyIds: Record<'plain' | 'monthly' | 'daily' | 'full' | 'disabled', string>;
  rootKey: string;
  snapshot: EngineSnapshot;
}

const fixture = JSON.parse(readFileSync(new URL('../fixtures/snapshot-v1.json', import.meta.url), 'utf8')) as Fixture;

function restored(): { engine: Engine; clock: ManualClock } {
  const clock = new ManualClock(fixture.snapshot.takenAtMs);
  const engine = new Engine({ clock, seed: fixture.snapshot.seed });
  unwrap(engine.restore(structuredClone(fixture.snapshot)));
  return { engine, clock };
}

describe('a version-1 snapshot written before the compact key form', () => {
  it('restores and is written back exactly as it was read', () => {
    const { engine } = restored();
    expect(engine.stats()).toMatchObject({ keys: 5, identities: 2, namespaces: 1, overrides: 1 });
    expect(JSON.stringify(engine.snapshot())).toBe(JSON.stringify(fixture.snapshot));
  });

  it('its keys answer as they did: credits, refill, metadata, permissions, rate limits, identity, recovery', () => {
    const { engine, clock } = restored();
    const { rootKey, keyIds, plaintexts } = fixture;
    expect(unwrap(engine.keys.getKey(rootKey, { keyId: keyIds.monthly })).credits).toEqual({
      remaining: 993,
      refill: { interval: 'monthly', amount: 1000, refillDay: 31 },
    });
    const full = unwrap(engine.keys.getKey(rootKey, { keyId: keyIds.full, decrypt: true }));
    expect(full).toMatchObject({
      name: 'full key',
      meta: { plan: 'pro', nested: { list: [1, 'two', null, true] } },
      permissions: ['documents.read', 'documents.write'],
      roles: ['admin'],
      expires: Date.UTC(2028, 0, 1),
      // 42, less the one credit its verification in the fixture used.
      credits: { remaining: 41 },
      identity: { externalId: 'acme' },
      plaintext: plaintexts.full,
    });
    expect(full.ratelimits?.map((r) => r.name)).toEqual(['requests', 'tokens']);
    expect(unwrap(engine.keys.verifyKey(undefined, { key: plaintexts.disabled })).code).toBe('DISABLED');
    expect(unwrap(engine.keys.verifyKey(undefined, { key: plaintexts.plain })).valid).toBe(true);
    // The daily key was refilled at the snapshot's midnight; the next one comes a day later.
    expect(unwrap(engine.keys.verifyKey(undefined, { key: plaintexts.daily })).credits).toBe(4);
    clock.advance(86_400_000);
    expect(unwrap(engine.keys.verifyKey(undefined, { key: plaintexts.daily })).credits).toBe(4);
    // Monthly on day 31: January 31st, 00:00 UTC.
    clock.set(Date.UTC(2027, 0, 31));
    expect(unwrap(engine.keys.verifyKey(undefined, { key: plaintexts.monthly })).credits).toBe(999);
  });
});
