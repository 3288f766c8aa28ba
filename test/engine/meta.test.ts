/** Stored metadata is bounded per record, per list page and in all (meta.ts). */
import { describe, expect, it } from 'vitest';
import { type JsonObject, MAX_META_BYTES, MAX_META_DEPTH, MAX_META_PROPERTIES, MAX_TOTAL_META_BYTES } from '../../src/engine/index.js';
import { errorCode, makeEngine, unwrap } from '../helpers/engine.js';

/** An object whose JSON is exactly `bytes` bytes: {"b":"xxx…"}. */
function metaOfSize(bytes: number): JsonObject {
  return { b: 'x'.repeat(bytes - 8) };
}

function nested(depth: number): JsonObject {
  let value: JsonObject = { leaf: true };
  for (let level = 1; level < depth; level++) value = { next: value };
  return value;
}

describe('metadata bounds', () => {
  it('60 identities with 9.5 MB of meta each broke listIdentities and the snapshot: one record holds at most 1 MiB', () => {
    const fx = makeEngine();
    const big = fx.engine.identities.createIdentity(fx.rootKey, { externalId: 'big', meta: metaOfSize(9_500_000) });
    expect(errorCode(big)).toBe('err:service:application:invalid_input');
    if (!big.ok) {
      expect(big.error.errors?.[0]?.location).toBe('body.meta');
      expect(big.error.detail).toContain(`at most ${MAX_META_BYTES}`);
      expect(big.error.detail.length).toBeLessThan(300);
    }
    unwrap(fx.engine.identities.createIdentity(fx.rootKey, { externalId: 'at-limit', meta: metaOfSize(MAX_META_BYTES) }));
    expect(errorCode(fx.engine.identities.createIdentity(fx.rootKey, { externalId: 'over', meta: metaOfSize(MAX_META_BYTES + 1) }))).toBe(
      'err:service:application:invalid_input',
    );
    // Keys too, on create and on update; a refused update keeps the old metadata.
    const key = unwrap(fx.engine.keys.createKey(fx.rootKey, { apiId: fx.apiId, meta: { plan: 'pro' } }));
    expect(errorCode(fx.engine.keys.createKey(fx.rootKey, { apiId: fx.apiId, meta: metaOfSize(MAX_META_BYTES + 1) }))).toBe(
      'err:service:application:invalid_input',
    );
    expect(errorCode(fx.engine.keys.updateKey(fx.rootKey, { keyId: key.keyId, meta: metaOfSize(MAX_META_BYTES + 1) }))).toBe(
      'err:service:application:invalid_input',
    );
    expect(unwrap(fx.engine.keys.getKey(fx.rootKey, { keyId: key.keyId })).meta).toEqual({ plan: 'pro' });
  });

  it('depth and top-level properties are bounded alike', () => {
    const fx = makeEngine();
    unwrap(fx.engine.keys.createKey(fx.rootKey, { apiId: fx.apiId, meta: nested(MAX_META_DEPTH) }));
    expect(errorCode(fx.engine.keys.createKey(fx.rootKey, { apiId: fx.apiId, meta: nested(MAX_META_DEPTH + 1) }))).toBe(
      'err:service:application:invalid_input',
    );
    const wide = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`p${i}`, i]));
    unwrap(fx.engine.identities.createIdentity(fx.rootKey, { externalId: 'wide', meta: wide(MAX_META_PROPERTIES) }));
    expect(errorCode(fx.engine.identities.createIdentity(fx.rootKey, { externalId: 'wider', meta: wide(MAX_META_PROPERTIES + 1) }))).toBe(
      'err:service:application:invalid_input',
    );
  });

  it('the simulator holds a bounded amount of metadata in all; deleting and replacing frees it', () => {
    const fx = makeEngine();
    const meta = metaOfSize(MAX_META_BYTES);
    const fit = Math.floor(MAX_TOTAL_META_BYTES / MAX_META_BYTES);
    for (let i = 0; i < fit; i++) unwrap(fx.engine.identities.createIdentity(fx.rootKey, { externalId: `full-${i}`, meta }));
    const refused = fx.engine.identities.createIdentity(fx.rootKey, { externalId: 'one-more', meta });
    expect(errorCode(refused)).toBe('err:service:application:invalid_input');
    if (!refused.ok) expect(refused.error.detail).toContain(String(MAX_TOTAL_META_BYTES));
    // A refused creation created nothing.
    expect(fx.engine.identities.getIdentity(fx.rootKey, { identity: 'one-more' }).ok).toBe(false);
    unwrap(fx.engine.identities.deleteIdentity(fx.rootKey, { identity: 'full-0' }));
    unwrap(fx.engine.identities.createIdentity(fx.rootKey, { externalId: 'one-more', meta }));
    // Replacing metadata books the difference, not the sum.
    unwrap(fx.engine.identities.updateIdentity(fx.rootKey, { identity: 'full-1', meta: { small: 1 } }));
    unwrap(fx.engine.identities.updateIdentity(fx.rootKey, { identity: 'full-1', meta }));
    expect(errorCode(fx.engine.keys.createKey(fx.rootKey, { apiId: fx.apiId, meta }))).toBe('err:service:application:invalid_input');
  });

  it('a list page ends early once its metadata passes 8 MiB; the cursor reaches every record', () => {
    const fx = makeEngine();
    const meta = metaOfSize(MAX_META_BYTES);
    for (let i = 0; i < 20; i++) unwrap(fx.engine.identities.createIdentity(fx.rootKey, { externalId: `u${i}`, meta }));
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = unwrap(fx.engine.identities.listIdentities(fx.rootKey, cursor === undefined ? { limit: 100 } : { limit: 100, cursor }));
      expect(page.identities.length).toBeLessThanOrEqual(8);
      expect(page.total).toBe(20);
      seen.push(...page.identities.map((i) => i.externalId));
      cursor = page.cursor;
      pages++;
    } while (cursor !== undefined && pages < 10);
    expect(new Set(seen).size).toBe(20);
  });
});
