/**
 * `@unkey/ratelimit` (the official rate-limit client, unchanged) pointed at the simulator with
 * `baseUrl`, against a namespace created through /_sim/namespaces.create.
 *
 * GOTCHA: @unkey/ratelimit caches a denial client-side and keeps answering it, without a request,
 * until `reset` has passed by the REAL `Date.now()` — while `reset` comes from the simulator's
 * clock. So this file starts the simulator at the real time (startMs = Date.now(), not a future
 * date) and gives every case its own identifier and its own Ratelimit instance (own cache). The
 * one test that moves the simulator clock shows the gotcha on purpose.
 *
 * @unkey/ratelimit 2.1.4 bundles its own @unkey/api (2.2.0), so its errors are instances of that
 * copy's classes: they are recognised here by name and statusCode, not by instanceof.
 * 429: keysim cannot produce a 429 yet (the fault surface comes later); nothing here fakes one.
 */
import type { Unkey } from '@unkey/api';
import { Overrides, Ratelimit, type RatelimitConfig } from '@unkey/ratelimit';
import { beforeEach, describe, expect, it } from 'vitest';
import { admin, sdk, useSimulator } from '../helpers/sdk.js';

const NAMESPACE = 'api.calls';
const MINUTE = 60_000;

let unkey: Unkey;
let startMs: number;
let n = 0;

/** A fresh identifier per call site, so no client-side cache entry is ever shared by two cases. */
const fresh = (label: string) => `${label}-${++n}`;

const sim = useSimulator(() => {
  startMs = Date.now();
  return { startMs };
});
beforeEach(async () => {
  ({ unkey } = sdk(sim()));
  await admin(sim(), 'namespaces.create', { name: NAMESPACE });
});

function limiter(overrides: Partial<RatelimitConfig> = {}): Ratelimit {
  return new Ratelimit({ rootKey: sim().rootKey, namespace: NAMESPACE, limit: 3, duration: '1m', baseUrl: sim().url, ...overrides });
}

const windowEnd = (now: number, duration: number) => (Math.floor(now / duration) + 1) * duration;

/** The name and status of an error from the bundled SDK copy. */
function described(error: unknown): { name: string; statusCode: unknown; body: string } {
  if (!(error instanceof Error)) throw new Error(`not an Error: ${String(error)}`);
  const { statusCode, body } = error as Error & { statusCode?: unknown; body?: unknown };
  return { name: error.name, statusCode, body: typeof body === 'string' ? body : '' };
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    const value = await promise;
    throw new Error(`expected a rejection, got ${JSON.stringify(value)}`);
  } catch (error) {
    return error;
  }
}

describe('Ratelimit.limit against the simulator', () => {
  it('admits exactly `limit` requests in the window, then denies', async () => {
    const rl = limiter();
    const id = fresh('user');
    const reset = windowEnd(sim().clock.now(), MINUTE);
    for (let i = 1; i <= 3; i++) {
      expect(await rl.limit(id)).toEqual({ success: true, limit: 3, remaining: 3 - i, reset });
    }
    expect(await rl.limit(id)).toEqual({ success: false, limit: 3, remaining: 0, reset });
    // another identifier is unaffected
    expect(await rl.limit(fresh('other'))).toMatchObject({ success: true, remaining: 2 });
  });

  it('the cost option takes that many tokens; a request that does not fit is denied', async () => {
    const rl = limiter({ limit: 10 });
    const id = fresh('cost');
    expect(await rl.limit(id, { cost: 4 })).toMatchObject({ success: true, limit: 10, remaining: 6 });
    expect(await rl.limit(id, { cost: 0 })).toMatchObject({ success: true, remaining: 6 });
    expect(await rl.limit(id, { cost: 6 })).toMatchObject({ success: true, remaining: 0 });
    expect(await rl.limit(id, { cost: 1 })).toMatchObject({ success: false, remaining: 0 });

    const big = fresh('big');
    expect(await rl.limit(big, { cost: 11 })).toMatchObject({ success: false, limit: 10, remaining: 0 });
    // The denied 11 consumed nothing: seen by a second client (its own cache) with the same limit.
    expect(await limiter({ limit: 10 }).limit(big, { cost: 10 })).toMatchObject({ success: true, remaining: 0 });
  });

  it('a per-call limit (opts.limit) replaces the configured one', async () => {
    const rl = limiter({ limit: 100, duration: MINUTE });
    const id = fresh('per-call');
    expect(await rl.limit(id, { limit: { limit: 1, duration: '10s' } })).toMatchObject({
      success: true,
      limit: 1,
      remaining: 0,
      reset: windowEnd(sim().clock.now(), 10_000),
    });
    expect(await rl.limit(id, { limit: { limit: 1, duration: '10s' } })).toMatchObject({ success: false, limit: 1 });
  });

  it('an override set through @unkey/api (ratelimit.setOverride) changes the effective limit', async () => {
    const vip = fresh('vip');
    const set = await unkey.ratelimit.setOverride({ namespace: NAMESPACE, identifier: vip, limit: 5, duration: MINUTE });
    const overrideId = set.data.overrideId;
    const rl = limiter({ limit: 1 });
    const reset = windowEnd(sim().clock.now(), MINUTE);
    for (let i = 1; i <= 5; i++) {
      expect(await rl.limit(vip)).toEqual({ success: true, limit: 5, remaining: 5 - i, reset, overrideId });
    }
    expect(await rl.limit(vip)).toMatchObject({ success: false, limit: 5, overrideId });

    // A wildcard override (limit 0 blocks everything that matches).
    const blocked = await unkey.ratelimit.setOverride({ namespace: NAMESPACE, identifier: 'banned_*', limit: 0, duration: MINUTE });
    expect(await limiter({ limit: 100 }).limit(fresh('banned_'))).toMatchObject({ success: false, limit: 0, overrideId: blocked.data.overrideId });
    // Without a match the configured limit applies.
    const plain = await rl.limit(fresh('plain'));
    expect(plain).toMatchObject({ success: true, limit: 1, remaining: 0 });
    expect(plain.overrideId).toBeUndefined();
  });

  it('caches a denial client-side until the real clock reaches reset (the simulator clock does not count)', async () => {
    // Put the simulator at the start of a one-minute window so that reset is a full minute ahead of
    // the real time: the cached denial then certainly outlives this test.
    const windowStart = windowEnd(sim().clock.now(), MINUTE);
    await admin(sim(), 'clock.set', { to: windowStart });
    const cache = new Map();
    const rl = limiter({ limit: 1, cache });
    const id = fresh('cached');
    expect(await rl.limit(id)).toMatchObject({ success: true });
    const denied = await rl.limit(id);
    expect(denied).toMatchObject({ success: false, reset: windowStart + MINUTE });
    expect([...cache.keys()]).toEqual([`${NAMESPACE}:${id}:1:${MINUTE}`]);

    // Two windows later on the simulator clock the server admits again ...
    await admin(sim(), 'clock.advance', { byMs: 2 * MINUTE });
    const reset = windowStart + 3 * MINUTE;
    expect(await limiter({ limit: 1 }).limit(id)).toEqual({ success: true, limit: 1, remaining: 0, reset });
    // ... but the first client still answers its cached denial without asking.
    expect(await rl.limit(id)).toEqual(denied);
    // Clearing its cache makes it ask: the window now holds the other client's request.
    cache.clear();
    expect(await rl.limit(id)).toEqual({ success: false, limit: 1, remaining: 0, reset });
  });

  it('errors: unknown namespace (404), deleted namespace (410), unknown root key (401) reject with the SDK error', async () => {
    const unknownNs = described(await rejection(limiter({ namespace: 'no.such.namespace' }).limit(fresh('x'))));
    expect(unknownNs).toMatchObject({ name: 'NotFoundErrorResponse', statusCode: 404 });
    expect(unknownNs.body).toContain('ratelimit_namespace_not_found');

    const badKey = described(await rejection(limiter({ rootKey: 'unkey_not_a_root_key' }).limit(fresh('x'))));
    expect(badKey).toMatchObject({ name: 'UnauthorizedErrorResponse', statusCode: 401 });

    const rl = limiter();
    expect(await rl.limit(fresh('before'))).toMatchObject({ success: true });
    await admin(sim(), 'namespaces.delete', { namespace: NAMESPACE });
    const gone = described(await rejection(rl.limit(fresh('after'))));
    expect(gone).toMatchObject({ name: 'GoneErrorResponse', statusCode: 410 });
    expect(gone.body).toContain('ratelimit_namespace_gone');
  });

  it('errors go to onError when given, and fail fast (no retry, no timeout fallback)', async () => {
    const seen: Array<{ message: string; identifier: string }> = [];
    const rl = limiter({
      namespace: 'no.such.namespace',
      timeout: { ms: 4_000, fallback: { success: true, limit: -1, remaining: -1, reset: 0 } },
      onError: (err, identifier) => {
        seen.push({ message: err.message, identifier });
        return { success: false, limit: 0, remaining: 0, reset: 1 };
      },
    });
    const id = fresh('err');
    const t0 = performance.now();
    expect(await rl.limit(id)).toEqual({ success: false, limit: 0, remaining: 0, reset: 1 });
    expect(performance.now() - t0).toBeLessThan(2_000);
    expect(seen).toHaveLength(1);
    expect(seen[0]?.identifier).toBe(id);
    expect(seen[0]?.message).toContain('could not be found');
  });
});

describe('Overrides (from @unkey/ratelimit) against the simulator', () => {
  it('set, get, list (paginated until the cursor is absent) and delete', async () => {
    const overrides = new Overrides({ rootKey: sim().rootKey, baseUrl: sim().url });
    const ids = new Map<string, string>();
    for (let i = 0; i < 7; i++) {
      const res = await overrides.setOverride({ namespace: NAMESPACE, identifier: `tenant_${i}`, limit: 10 + i, duration: MINUTE });
      expect(res.data.overrideId).toMatch(/^rlor_/);
      ids.set(res.data.overrideId, `tenant_${i}`);
    }
    const got = await overrides.getOverride({ namespace: NAMESPACE, identifier: 'tenant_3' });
    expect(got.data).toMatchObject({ identifier: 'tenant_3', limit: 13, duration: MINUTE });
    expect(ids.get(got.data.overrideId)).toBe('tenant_3');

    const seen = new Map<string, string>();
    const sizes: number[] = [];
    let cursor: string | undefined;
    for (let guard = 0; ; guard++) {
      expect(guard, 'pagination did not terminate').toBeLessThan(10);
      const page = await overrides.listOverrides(cursor === undefined ? { namespace: NAMESPACE, limit: 3 } : { namespace: NAMESPACE, limit: 3, cursor });
      sizes.push(page.data.length);
      for (const o of page.data) seen.set(o.overrideId, o.identifier);
      // (optional in the bundled SDK's types; the simulator always sends it on lists)
      const pagination = page.pagination;
      if (pagination === undefined) throw new Error('listOverrides answered without pagination');
      if (!pagination.hasMore) {
        expect(pagination.cursor).toBeUndefined();
        break;
      }
      cursor = pagination.cursor;
      expect(cursor).toEqual(expect.any(String));
    }
    expect(sizes).toEqual([3, 3, 1]);
    expect(seen).toEqual(ids);

    // The override set through this class governs Ratelimit.limit.
    const tenant0 = [...ids].find(([, identifier]) => identifier === 'tenant_0')?.[0];
    expect(tenant0).toMatch(/^rlor_/);
    expect(await limiter({ limit: 1 }).limit('tenant_0')).toMatchObject({ success: true, limit: 10, remaining: 9, overrideId: tenant0 });

    const deleted = await overrides.deleteOverride({ namespace: NAMESPACE, identifier: 'tenant_3' });
    expect(deleted.data).toEqual({});
    const err = described(await rejection(overrides.getOverride({ namespace: NAMESPACE, identifier: 'tenant_3' })));
    expect(err).toMatchObject({ name: 'NotFoundErrorResponse', statusCode: 404 });
    expect(err.body).toContain('ratelimit_override_not_found');
  });
});
