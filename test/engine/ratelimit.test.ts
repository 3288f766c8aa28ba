/**
 * Rate-limit namespaces, ratelimit.limit, overrides, multiLimit, permissions, compat and
 * validation (docs/service-model.md#authentication-and-permissions and #rate-limits).
 */
import { describe, expect, it } from 'vitest';
import type { LimitInput, Result } from '../../src/engine/index.js';
import { errorCode, makeEngine, unwrap } from '../helpers/engine.js';

const MINUTE = 60_000;

function setup(options: { compat?: 'interface' | 'production' } = {}) {
  const fx = makeEngine(options);
  const ns = unwrap(fx.engine.admin.createNamespace(fx.workspaceId, 'api-calls'));
  const limit = (input: Partial<LimitInput> = {}, rootKey: string = fx.rootKey) =>
    fx.engine.ratelimit.limit(rootKey, { namespace: 'api-calls', identifier: 'user_1', limit: 3, duration: MINUTE, ...input });
  const windowEnd = (durationMs = MINUTE) => (Math.floor(fx.clock.now() / durationMs) + 1) * durationMs;
  return { ...fx, namespaceId: ns.namespaceId, limit, windowEnd };
}

/** The first field error of a 400. */
function firstLocation(result: Result<unknown>): string | undefined {
  expect(errorCode(result)).toBe('err:service:application:invalid_input');
  if (result.ok) return undefined;
  return result.error.errors?.[0]?.location;
}

describe('namespaces', () => {
  it('creates a namespace with an rlns_ id; creating the same name again returns it', () => {
    const fx = setup();
    expect(fx.namespaceId).toMatch(/^rlns_/);
    expect(unwrap(fx.engine.admin.createNamespace(fx.workspaceId, 'api-calls'))).toEqual({ namespaceId: fx.namespaceId, created: false });
    const other = unwrap(fx.engine.admin.createNamespace(fx.workspaceId, 'other'));
    expect(other.created).toBe(true);
    expect(other.namespaceId).not.toBe(fx.namespaceId);
  });

  it('is found by name and by rlns_ id, which share one counter', () => {
    const fx = setup();
    expect(unwrap(fx.limit({ namespace: 'api-calls' })).remaining).toBe(2);
    expect(unwrap(fx.limit({ namespace: fx.namespaceId })).remaining).toBe(1);
    expect(unwrap(fx.limit({ namespace: 'api-calls' })).remaining).toBe(0);
    expect(unwrap(fx.limit({ namespace: fx.namespaceId })).success).toBe(false);
  });

  it('an unknown name or id → 404 ratelimit_namespace_not_found', () => {
    const fx = setup();
    expect(errorCode(fx.limit({ namespace: 'nope' }))).toBe('err:service:data:ratelimit_namespace_not_found');
    expect(errorCode(fx.limit({ namespace: 'rlns_doesNotExist' }))).toBe('err:service:data:ratelimit_namespace_not_found');
    // Names are case-sensitive here: a differently cased name is another (unknown) namespace.
    expect(errorCode(fx.limit({ namespace: 'API-CALLS' }))).toBe('err:service:data:ratelimit_namespace_not_found');
    // Nothing was created by asking.
    expect(errorCode(fx.limit({ namespace: 'nope' }))).toBe('err:service:data:ratelimit_namespace_not_found');
  });

  it('a deleted namespace → 410 ratelimit_namespace_gone, by name and by id', () => {
    const fx = setup();
    unwrap(fx.limit());
    expect(unwrap(fx.engine.admin.deleteNamespace(fx.workspaceId, 'api-calls'))).toEqual({ namespaceId: fx.namespaceId });
    expect(errorCode(fx.limit({ namespace: 'api-calls' }))).toBe('err:service:data:ratelimit_namespace_gone');
    expect(errorCode(fx.limit({ namespace: fx.namespaceId }))).toBe('err:service:data:ratelimit_namespace_gone');
    expect(errorCode(fx.engine.ratelimit.listOverrides(fx.rootKey, { namespace: fx.namespaceId }))).toBe('err:service:data:ratelimit_namespace_gone');
  });

  it('a namespace deleted by id is gone too', () => {
    const fx = setup();
    unwrap(fx.engine.admin.deleteNamespace(fx.workspaceId, fx.namespaceId));
    expect(errorCode(fx.limit({ namespace: fx.namespaceId }))).toBe('err:service:data:ratelimit_namespace_gone');
    expect(errorCode(fx.limit({ namespace: 'api-calls' }))).toBe('err:service:data:ratelimit_namespace_gone');
  });

  it('a namespace of another workspace is unknown, by name and by id', () => {
    const fx = setup();
    const ws2 = unwrap(fx.engine.admin.createWorkspace({ name: 'other' }));
    expect(errorCode(fx.limit({ namespace: 'api-calls' }, ws2.rootKey))).toBe('err:service:data:ratelimit_namespace_not_found');
    expect(errorCode(fx.limit({ namespace: fx.namespaceId }, ws2.rootKey))).toBe('err:service:data:ratelimit_namespace_not_found');
    expect(errorCode(fx.engine.admin.deleteNamespace(ws2.workspaceId, fx.namespaceId))).toBe('err:service:data:ratelimit_namespace_not_found');
    expect(errorCode(fx.engine.ratelimit.setOverride(ws2.rootKey, { namespace: fx.namespaceId, identifier: 'x', limit: 1, duration: MINUTE }))).toBe(
      'err:service:data:ratelimit_namespace_not_found',
    );
  });

  it('two workspaces may use the same name; their counters are apart', () => {
    const fx = setup();
    const ws2 = unwrap(fx.engine.admin.createWorkspace({ name: 'other' }));
    const ns2 = unwrap(fx.engine.admin.createNamespace(ws2.workspaceId, 'api-calls'));
    expect(ns2.created).toBe(true);
    expect(ns2.namespaceId).not.toBe(fx.namespaceId);
    for (let i = 0; i < 3; i++) unwrap(fx.limit());
    expect(unwrap(fx.limit()).success).toBe(false);
    expect(unwrap(fx.limit({}, ws2.rootKey))).toMatchObject({ success: true, remaining: 2 });
  });

  it('a deleted name can be created again, as a new namespace with fresh counters', () => {
    const fx = setup();
    for (let i = 0; i < 3; i++) unwrap(fx.limit());
    unwrap(fx.engine.admin.deleteNamespace(fx.workspaceId, 'api-calls'));
    const again = unwrap(fx.engine.admin.createNamespace(fx.workspaceId, 'api-calls'));
    expect(again.created).toBe(true);
    expect(again.namespaceId).not.toBe(fx.namespaceId);
    expect(unwrap(fx.limit())).toMatchObject({ success: true, remaining: 2 });
    expect(errorCode(fx.limit({ namespace: fx.namespaceId }))).toBe('err:service:data:ratelimit_namespace_gone');
  });

  it('the namespace last found by name is remembered per state: after a restore the name finds the restored namespace', () => {
    const fx = setup();
    unwrap(fx.limit());
    const snapshot = fx.engine.snapshot();
    unwrap(fx.engine.admin.deleteNamespace(fx.workspaceId, 'api-calls'));
    const again = unwrap(fx.engine.admin.createNamespace(fx.workspaceId, 'api-calls'));
    // Found by name in the current state: the new namespace, fresh counters.
    expect(unwrap(fx.limit())).toMatchObject({ success: true, remaining: 2 });
    unwrap(fx.engine.restore(snapshot));
    // The restored state's own namespace of that name (one use before the snapshot), not the one just created.
    expect(unwrap(fx.limit())).toMatchObject({ success: true, remaining: 1 });
    expect(unwrap(fx.limit({ namespace: fx.namespaceId }))).toMatchObject({ success: true, remaining: 0 });
    expect(again.namespaceId).not.toBe(fx.namespaceId);
  });

  // The remembered namespace matches on workspace id and name: a reset regenerates the same
  // workspace id from the seed, so a memo that outlived the state would find a namespace that
  // no longer exists.
  it('after a reset, a name remembered before it is unknown, though the seed gives the workspace the same id', () => {
    const fx = setup();
    unwrap(fx.limit());
    fx.engine.reset();
    const ws = unwrap(fx.engine.admin.createWorkspace({ name: 'test' }));
    expect(ws.workspaceId).toBe(fx.workspaceId);
    expect(errorCode(fx.limit({}, ws.rootKey))).toBe('err:service:data:ratelimit_namespace_not_found');
    const again = unwrap(fx.engine.admin.createNamespace(ws.workspaceId, 'api-calls'));
    expect(again.created).toBe(true);
    expect(unwrap(fx.limit({}, ws.rootKey))).toMatchObject({ success: true, remaining: 2 });
  });

  it('two engines in one process, same seed and names: each finds its own namespace', () => {
    const a = setup();
    const b = setup();
    expect(b.workspaceId).toBe(a.workspaceId);
    for (let i = 0; i < 3; i++) unwrap(a.limit());
    expect(unwrap(a.limit()).success).toBe(false);
    expect(unwrap(b.limit())).toMatchObject({ success: true, remaining: 2 });
    unwrap(b.engine.admin.deleteNamespace(b.workspaceId, 'api-calls'));
    expect(errorCode(b.limit())).toBe('err:service:data:ratelimit_namespace_gone');
    expect(unwrap(a.limit({ cost: 0 }))).toMatchObject({ success: true, remaining: 0 });
  });
});

describe('ratelimit.limit', () => {
  it('answers { limit, remaining, reset, success } and no overrideId when none matched', () => {
    const fx = setup();
    const reset = fx.windowEnd();
    const first = unwrap(fx.limit());
    expect(first).toEqual({ limit: 3, remaining: 2, reset, success: true });
    expect(first).not.toHaveProperty('overrideId');
    expect(unwrap(fx.limit())).toEqual({ limit: 3, remaining: 1, reset, success: true });
    expect(unwrap(fx.limit())).toEqual({ limit: 3, remaining: 0, reset, success: true });
    expect(unwrap(fx.limit())).toEqual({ limit: 3, remaining: 0, reset, success: false });
  });

  it('reset is the unix-ms end of the current window', () => {
    const fx = setup();
    fx.clock.advance(12_345);
    expect(unwrap(fx.limit()).reset).toBe(fx.windowEnd());
    expect(unwrap(fx.limit({ duration: 7_000, identifier: 'u7' })).reset).toBe((Math.floor(fx.clock.now() / 7_000) + 1) * 7_000);
    fx.clock.set(fx.windowEnd());
    expect(unwrap(fx.limit()).reset).toBe(fx.clock.now() + MINUTE);
  });

  it('a cost consumes that many; a denial consumes nothing', () => {
    const fx = setup();
    expect(unwrap(fx.limit({ limit: 10, cost: 4 }))).toMatchObject({ success: true, remaining: 6 });
    expect(unwrap(fx.limit({ limit: 10, cost: 7 }))).toMatchObject({ success: false, remaining: 0 });
    expect(unwrap(fx.limit({ limit: 10, cost: 6 }))).toMatchObject({ success: true, remaining: 0 });
  });

  it('cost 0 passes on a full window and consumes nothing', () => {
    const fx = setup();
    expect(unwrap(fx.limit({ cost: 0 }))).toMatchObject({ success: true, remaining: 3 });
    unwrap(fx.limit({ cost: 3 }));
    expect(unwrap(fx.limit({ cost: 0 }))).toMatchObject({ success: true, remaining: 0 });
    expect(unwrap(fx.limit({ cost: 1 })).success).toBe(false);
  });

  it('follows the sliding window: 25 % into the next window 75 % of the previous one still counts', () => {
    const fx = setup();
    unwrap(fx.limit({ limit: 10, cost: 10 }));
    fx.clock.set(fx.windowEnd() + 15_000);
    // used = floor(10 · 0.75) = 7
    expect(unwrap(fx.limit({ limit: 10, cost: 0 })).remaining).toBe(3);
    expect(unwrap(fx.limit({ limit: 10, cost: 4 })).success).toBe(false);
    expect(unwrap(fx.limit({ limit: 10, cost: 3 }))).toMatchObject({ success: true, remaining: 0 });
    fx.clock.advance(2 * MINUTE);
    expect(unwrap(fx.limit({ limit: 10, cost: 10 })).success).toBe(true);
  });

  it('counts per identifier, per duration and per namespace', () => {
    const fx = setup();
    unwrap(fx.engine.admin.createNamespace(fx.workspaceId, 'other'));
    unwrap(fx.limit({ cost: 3 }));
    expect(unwrap(fx.limit()).success).toBe(false);
    expect(unwrap(fx.limit({ identifier: 'user_2' })).remaining).toBe(2);
    expect(unwrap(fx.limit({ duration: 2 * MINUTE })).remaining).toBe(2);
    expect(unwrap(fx.limit({ namespace: 'other' })).remaining).toBe(2);
  });
});

describe('overrides', () => {
  it('setOverride returns an rlor_ id; setting the same identifier again updates it and keeps the id', () => {
    const fx = setup();
    const { overrideId } = unwrap(fx.engine.ratelimit.setOverride(fx.rootKey, { namespace: 'api-calls', identifier: 'user_1', limit: 5, duration: MINUTE }));
    expect(overrideId).toMatch(/^rlor_/);
    const again = unwrap(fx.engine.ratelimit.setOverride(fx.rootKey, { namespace: fx.namespaceId, identifier: 'user_1', limit: 8, duration: 2 * MINUTE }));
    expect(again.overrideId).toBe(overrideId);
    expect(unwrap(fx.engine.ratelimit.getOverride(fx.rootKey, { namespace: 'api-calls', identifier: 'user_1' }))).toEqual({
      overrideId,
      identifier: 'user_1',
      limit: 8,
      duration: 2 * MINUTE,
    });
    const listed = unwrap(fx.engine.ratelimit.listOverrides(fx.rootKey, { namespaceName: 'api-calls' }));
    expect(listed.overrides).toEqual([{ overrideId, identifier: 'user_1', limit: 8, duration: 2 * MINUTE }]);
    expect(unwrap(fx.limit())).toMatchObject({ limit: 8, remaining: 7, overrideId });
  });

  it('getOverride / deleteOverride of an unknown identifier → 404 ratelimit_override_not_found', () => {
    const fx = setup();
    const ref = { namespace: 'api-calls', identifier: 'ghost' };
    expect(errorCode(fx.engine.ratelimit.getOverride(fx.rootKey, ref))).toBe('err:service:data:ratelimit_override_not_found');
    expect(errorCode(fx.engine.ratelimit.deleteOverride(fx.rootKey, ref))).toBe('err:service:data:ratelimit_override_not_found');
  });

  it('deleteOverride removes it: the request\u2019s own limit applies again', () => {
    const fx = setup();
    unwrap(fx.engine.ratelimit.setOverride(fx.rootKey, { namespace: 'api-calls', identifier: 'user_1', limit: 50, duration: MINUTE }));
    expect(unwrap(fx.limit()).limit).toBe(50);
    expect(unwrap(fx.engine.ratelimit.deleteOverride(fx.rootKey, { namespace: 'api-calls', identifier: 'user_1' }))).toEqual({});
    const after = unwrap(fx.limit());
    expect(after.limit).toBe(3);
    expect(after).not.toHaveProperty('overrideId');
    expect(errorCode(fx.engine.ratelimit.getOverride(fx.rootKey, { namespace: 'api-calls', identifier: 'user_1' }))).toBe(
      'err:service:data:ratelimit_override_not_found',
    );
    expect(unwrap(fx.engine.ratelimit.listOverrides(fx.rootKey, { namespace: 'api-calls' })).overrides).toEqual([]);
  });

  it('listOverrides pages with limit + cursor; the cursor is absent on the last page', () => {
    const fx = setup();
    const ids = new Set<string>();
    for (let i = 0; i < 5; i++) {
      ids.add(unwrap(fx.engine.ratelimit.setOverride(fx.rootKey, { namespace: 'api-calls', identifier: `id_${i}`, limit: i, duration: MINUTE })).overrideId);
    }
    expect(ids.size).toBe(5);
    const seen: string[] = [];
    const sizes: number[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 10; page++) {
      const result = unwrap(
        fx.engine.ratelimit.listOverrides(
          fx.rootKey,
          cursor === undefined ? { namespace: 'api-calls', limit: 2 } : { namespace: 'api-calls', limit: 2, cursor },
        ),
      );
      sizes.push(result.overrides.length);
      seen.push(...result.overrides.map((o) => o.overrideId));
      if (result.cursor === undefined) {
        expect(result).not.toHaveProperty('cursor');
        break;
      }
      expect(result.cursor).not.toBe('');
      cursor = result.cursor;
    }
    expect(sizes).toEqual([2, 2, 1]);
    expect(new Set(seen)).toEqual(ids);
    expect(seen).toHaveLength(5);
    // Exactly one full page: no cursor.
    const all = unwrap(fx.engine.ratelimit.listOverrides(fx.rootKey, { namespaceName: 'api-calls', limit: 5 }));
    expect(all.overrides).toHaveLength(5);
    expect(all).not.toHaveProperty('cursor');
  });

  it('listOverrides rejects a page size outside 1..100', () => {
    const fx = setup();
    expect(errorCode(fx.engine.ratelimit.listOverrides(fx.rootKey, { namespace: 'api-calls', limit: 0 }))).toBe('err:service:application:invalid_input');
    expect(errorCode(fx.engine.ratelimit.listOverrides(fx.rootKey, { namespace: 'api-calls', limit: 101 }))).toBe('err:service:application:invalid_input');
  });

  it('`*` matches any run of characters, and the whole identifier must match', () => {
    const fx = setup();
    const { overrideId } = unwrap(fx.engine.ratelimit.setOverride(fx.rootKey, { namespace: 'api-calls', identifier: 'user_*', limit: 1, duration: MINUTE }));
    expect(unwrap(fx.limit({ identifier: 'user_42', limit: 10 }))).toMatchObject({ limit: 1, overrideId });
    expect(unwrap(fx.limit({ identifier: 'user_abc.def', limit: 10 }))).toMatchObject({ limit: 1, overrideId });
    // Not a prefix of the identifier → no match (whole-string).
    const miss = unwrap(fx.limit({ identifier: 'xuser_42', limit: 10 }));
    expect(miss.limit).toBe(10);
    expect(miss).not.toHaveProperty('overrideId');
  });

  it('a wildcard in the middle matches whole strings only, and other characters are literal', () => {
    const fx = setup();
    unwrap(fx.engine.ratelimit.setOverride(fx.rootKey, { namespace: 'api-calls', identifier: 'a*z', limit: 1, duration: MINUTE }));
    unwrap(fx.engine.ratelimit.setOverride(fx.rootKey, { namespace: 'api-calls', identifier: 'v1.*', limit: 2, duration: MINUTE }));
    expect(unwrap(fx.limit({ identifier: 'abcz', limit: 10 })).limit).toBe(1);
    expect(unwrap(fx.limit({ identifier: 'az', limit: 10 })).limit).toBe(1);
    expect(unwrap(fx.limit({ identifier: 'abcza', limit: 10 })).limit).toBe(10);
    expect(unwrap(fx.limit({ identifier: 'xabcz', limit: 10 })).limit).toBe(10);
    expect(unwrap(fx.limit({ identifier: 'v1.users', limit: 10 })).limit).toBe(2);
    // "." is not a regex wildcard.
    expect(unwrap(fx.limit({ identifier: 'v1xusers', limit: 10 })).limit).toBe(10);
  });

  it('an exact identifier beats a wildcard, whichever was set first', () => {
    const fx = setup();
    const wildBefore = unwrap(fx.engine.ratelimit.setOverride(fx.rootKey, { namespace: 'api-calls', identifier: '*', limit: 1, duration: MINUTE }));
    const exact = unwrap(fx.engine.ratelimit.setOverride(fx.rootKey, { namespace: 'api-calls', identifier: 'user_vip', limit: 100, duration: MINUTE }));
    const wildAfter = unwrap(fx.engine.ratelimit.setOverride(fx.rootKey, { namespace: 'api-calls', identifier: 'user_*', limit: 2, duration: MINUTE }));
    expect(unwrap(fx.limit({ identifier: 'user_vip' }))).toMatchObject({ limit: 100, overrideId: exact.overrideId });
    expect(unwrap(fx.limit({ identifier: 'user_vip' }))).toMatchObject({ limit: 100, remaining: 98 });
    // The wildcards still apply to the others.
    expect([wildBefore.overrideId, wildAfter.overrideId]).toContain(unwrap(fx.limit({ identifier: 'user_other' })).overrideId);
    expect(unwrap(fx.limit({ identifier: 'someone' }))).toMatchObject({ limit: 1, overrideId: wildBefore.overrideId });
  });

  it('an override replaces both the limit and the duration of the request', () => {
    const fx = setup();
    const SHORT = 10_000;
    const { overrideId } = unwrap(fx.engine.ratelimit.setOverride(fx.rootKey, { namespace: 'api-calls', identifier: 'slow', limit: 2, duration: SHORT }));
    const first = unwrap(fx.limit({ identifier: 'slow', limit: 100, duration: MINUTE }));
    expect(first).toEqual({ limit: 2, remaining: 1, reset: fx.windowEnd(SHORT), success: true, overrideId });
    expect(unwrap(fx.limit({ identifier: 'slow', limit: 100, duration: MINUTE })).success).toBe(true);
    expect(unwrap(fx.limit({ identifier: 'slow', limit: 100, duration: MINUTE }))).toMatchObject({ success: false, remaining: 0, limit: 2 });
    // Two 10 s windows later the count is gone, although the request's 60 s window has not ended.
    const start = fx.clock.now();
    fx.clock.set((Math.floor(start / SHORT) + 2) * SHORT);
    expect(Math.floor(fx.clock.now() / MINUTE)).toBe(Math.floor(start / MINUTE));
    expect(unwrap(fx.limit({ identifier: 'slow', limit: 100, duration: MINUTE }))).toMatchObject({ success: true, remaining: 1 });
  });

  it('a limit-0 override blocks every cost ≥ 1, but cost 0 passes', () => {
    const fx = setup();
    const { overrideId } = unwrap(fx.engine.ratelimit.setOverride(fx.rootKey, { namespace: 'api-calls', identifier: 'banned', limit: 0, duration: MINUTE }));
    expect(unwrap(fx.limit({ identifier: 'banned', limit: 1000 }))).toMatchObject({ success: false, remaining: 0, limit: 0, overrideId });
    expect(unwrap(fx.limit({ identifier: 'banned', limit: 1000, cost: 5 })).success).toBe(false);
    expect(unwrap(fx.limit({ identifier: 'banned', limit: 1000, cost: 0 }))).toMatchObject({ success: true, remaining: 0, limit: 0, overrideId });
    fx.clock.advance(10 * MINUTE);
    expect(unwrap(fx.limit({ identifier: 'banned', limit: 1000 })).success).toBe(false);
  });

  it('an override applies only in its namespace', () => {
    const fx = setup();
    unwrap(fx.engine.admin.createNamespace(fx.workspaceId, 'other'));
    unwrap(fx.engine.ratelimit.setOverride(fx.rootKey, { namespace: 'api-calls', identifier: 'user_1', limit: 50, duration: MINUTE }));
    const other = unwrap(fx.limit({ namespace: 'other' }));
    expect(other.limit).toBe(3);
    expect(other).not.toHaveProperty('overrideId');
  });

  it('setOverride validates limit ≥ 0 and duration ≥ 1000', () => {
    const fx = setup();
    const set = (limit: number, duration: number) => fx.engine.ratelimit.setOverride(fx.rootKey, { namespace: 'api-calls', identifier: 'v', limit, duration });
    expect(firstLocation(set(-1, MINUTE))).toMatch(/limit$/);
    expect(firstLocation(set(1, 999))).toMatch(/duration$/);
    expect(unwrap(set(0, 1_000)).overrideId).toMatch(/^rlor_/);
  });
});

describe('ratelimit.multiLimit', () => {
  it('answers every limit and consumes them all when all pass', () => {
    const fx = setup();
    unwrap(fx.engine.admin.createNamespace(fx.workspaceId, 'other'));
    const result = unwrap(
      fx.engine.ratelimit.multiLimit(fx.rootKey, [
        { namespace: 'api-calls', identifier: 'a', limit: 2, duration: MINUTE },
        { namespace: 'other', identifier: 'b', limit: 5, duration: MINUTE, cost: 2 },
      ]),
    );
    expect(result).toEqual({
      passed: true,
      limits: [
        { namespace: 'api-calls', identifier: 'a', limit: 2, remaining: 1, reset: fx.windowEnd(), passed: true },
        { namespace: 'other', identifier: 'b', limit: 5, remaining: 3, reset: fx.windowEnd(), passed: true },
      ],
    });
    expect(unwrap(fx.limit({ identifier: 'a', limit: 2 })).remaining).toBe(0);
  });

  it('is all or nothing: one exceeded limit means none consumes', () => {
    const fx = setup();
    unwrap(fx.limit({ identifier: 'full', limit: 1 }));
    const result = unwrap(
      fx.engine.ratelimit.multiLimit(fx.rootKey, [
        { namespace: 'api-calls', identifier: 'free', limit: 5, duration: MINUTE },
        { namespace: 'api-calls', identifier: 'full', limit: 1, duration: MINUTE },
      ]),
    );
    expect(result.passed).toBe(false);
    expect(result.limits.map((l) => l.passed)).toEqual([true, false]);
    expect(result.limits[1]).toMatchObject({ remaining: 0 });
    // 'free' was not consumed.
    expect(unwrap(fx.limit({ identifier: 'free', limit: 5, cost: 0 })).remaining).toBe(5);
  });

  it('two entries on one counter add up; together over the limit, neither consumes', () => {
    const fx = setup();
    const twice = (cost: number) =>
      unwrap(
        fx.engine.ratelimit.multiLimit(fx.rootKey, [
          { namespace: 'api-calls', identifier: 'same', limit: 3, duration: MINUTE, cost },
          { namespace: 'api-calls', identifier: 'same', limit: 3, duration: MINUTE, cost },
        ]),
      );
    expect(twice(2).passed).toBe(false);
    expect(unwrap(fx.limit({ identifier: 'same', cost: 0 })).remaining).toBe(3);
    const ok = twice(1);
    expect(ok.passed).toBe(true);
    expect(ok.limits.map((l) => l.remaining)).toEqual([2, 1]);
    expect(unwrap(fx.limit({ identifier: 'same', cost: 0 })).remaining).toBe(1);
  });

  it('reports overrideId for entries an override matched', () => {
    const fx = setup();
    const { overrideId } = unwrap(fx.engine.ratelimit.setOverride(fx.rootKey, { namespace: 'api-calls', identifier: 'o*', limit: 7, duration: MINUTE }));
    const result = unwrap(
      fx.engine.ratelimit.multiLimit(fx.rootKey, [
        { namespace: 'api-calls', identifier: 'one', limit: 1, duration: MINUTE },
        { namespace: 'api-calls', identifier: 'two', limit: 1, duration: MINUTE },
      ]),
    );
    expect(result.limits[0]).toMatchObject({ overrideId, limit: 7 });
    expect(result.limits[1]).not.toHaveProperty('overrideId');
  });

  it('an unknown namespace in any entry fails the whole request and consumes nothing', () => {
    const fx = setup();
    const result = fx.engine.ratelimit.multiLimit(fx.rootKey, [
      { namespace: 'api-calls', identifier: 'a', limit: 2, duration: MINUTE },
      { namespace: 'missing', identifier: 'a', limit: 2, duration: MINUTE },
    ]);
    expect(errorCode(result)).toBe('err:service:data:ratelimit_namespace_not_found');
    expect(unwrap(fx.limit({ identifier: 'a', limit: 2, cost: 0 })).remaining).toBe(2);
  });
});

describe('permissions', () => {
  it('ratelimit.*.limit may limit any namespace of the workspace', () => {
    const fx = setup();
    const rk = unwrap(fx.engine.admin.createRootKey(fx.workspaceId, ['ratelimit.*.limit'])).rootKey;
    expect(unwrap(fx.limit({}, rk)).success).toBe(true);
  });

  it('without the limit permission → 403 insufficient_permissions, and nothing is consumed', () => {
    const fx = setup();
    const rk = unwrap(fx.engine.admin.createRootKey(fx.workspaceId, ['ratelimit.*.read_override', 'api.*.verify_key'])).rootKey;
    expect(errorCode(fx.limit({}, rk))).toBe('err:service:authorization:insufficient_permissions');
    expect(errorCode(fx.engine.ratelimit.multiLimit(rk, [{ namespace: 'api-calls', identifier: 'user_1', limit: 3, duration: MINUTE }]))).toBe(
      'err:service:authorization:insufficient_permissions',
    );
    expect(unwrap(fx.limit({ cost: 0 })).remaining).toBe(3);
  });

  it('ratelimit.<namespaceId>.limit works on that namespace only', () => {
    const fx = setup();
    unwrap(fx.engine.admin.createNamespace(fx.workspaceId, 'other'));
    const rk = unwrap(fx.engine.admin.createRootKey(fx.workspaceId, [`ratelimit.${fx.namespaceId}.limit`])).rootKey;
    expect(unwrap(fx.limit({ namespace: 'api-calls' }, rk)).success).toBe(true);
    expect(unwrap(fx.limit({ namespace: fx.namespaceId }, rk)).success).toBe(true);
    expect(errorCode(fx.limit({ namespace: 'other' }, rk))).toBe('err:service:authorization:insufficient_permissions');
  });

  it('override operations need set_override / read_override / delete_override', () => {
    const fx = setup();
    const ref = { namespace: 'api-calls', identifier: 'x' };
    const only = (p: string) => unwrap(fx.engine.admin.createRootKey(fx.workspaceId, [p])).rootKey;
    const limitOnly = only('ratelimit.*.limit');
    expect(errorCode(fx.engine.ratelimit.setOverride(limitOnly, { ...ref, limit: 1, duration: MINUTE }))).toBe(
      'err:service:authorization:insufficient_permissions',
    );
    const setter = only('ratelimit.*.set_override');
    unwrap(fx.engine.ratelimit.setOverride(setter, { ...ref, limit: 1, duration: MINUTE }));
    expect(errorCode(fx.engine.ratelimit.getOverride(setter, ref))).toBe('err:service:authorization:insufficient_permissions');
    expect(errorCode(fx.engine.ratelimit.listOverrides(setter, { namespace: 'api-calls' }))).toBe('err:service:authorization:insufficient_permissions');
    expect(errorCode(fx.engine.ratelimit.deleteOverride(setter, ref))).toBe('err:service:authorization:insufficient_permissions');
    const reader = only('ratelimit.*.read_override');
    expect(unwrap(fx.engine.ratelimit.getOverride(reader, ref)).limit).toBe(1);
    expect(unwrap(fx.engine.ratelimit.listOverrides(reader, { namespaceName: 'api-calls' })).overrides).toHaveLength(1);
    expect(errorCode(fx.engine.ratelimit.deleteOverride(reader, ref))).toBe('err:service:authorization:insufficient_permissions');
    unwrap(fx.engine.ratelimit.deleteOverride(only('ratelimit.*.delete_override'), ref));
    expect(errorCode(fx.engine.ratelimit.getOverride(reader, ref))).toBe('err:service:data:ratelimit_override_not_found');
  });

  it('no root key → 400 authentication:missing; an unknown one → 401 authentication:key_not_found', () => {
    const fx = setup();
    const input = { namespace: 'api-calls', identifier: 'user_1', limit: 3, duration: MINUTE };
    expect(errorCode(fx.engine.ratelimit.limit(undefined, input))).toBe('err:service:authentication:missing');
    expect(errorCode(fx.engine.ratelimit.limit('', input))).toBe('err:service:authentication:missing');
    expect(errorCode(fx.limit({}, 'root_notAKey'))).toBe('err:service:authentication:key_not_found');
  });
});

describe("compat 'production'", () => {
  it('creates an unknown namespace on first use by limit', () => {
    const fx = setup({ compat: 'production' });
    expect(unwrap(fx.limit({ namespace: 'fresh', limit: 2 }))).toMatchObject({ success: true, remaining: 1 });
    // The same namespace is used from then on: the counter continues.
    expect(unwrap(fx.limit({ namespace: 'fresh', limit: 2 }))).toMatchObject({ success: true, remaining: 0 });
    expect(unwrap(fx.limit({ namespace: 'fresh', limit: 2 })).success).toBe(false);
    const existing = unwrap(fx.engine.admin.createNamespace(fx.workspaceId, 'fresh'));
    expect(existing.created).toBe(false);
    expect(existing.namespaceId).toMatch(/^rlns_/);
    expect(unwrap(fx.limit({ namespace: existing.namespaceId, limit: 2 })).success).toBe(false);
  });

  it('the interface default does not create it', () => {
    const fx = setup();
    expect(errorCode(fx.limit({ namespace: 'fresh' }))).toBe('err:service:data:ratelimit_namespace_not_found');
    expect(unwrap(fx.engine.admin.createNamespace(fx.workspaceId, 'fresh')).created).toBe(true);
  });
});

describe('validation → 400 invalid_input naming the field', () => {
  it.each([
    ['limit 0', { limit: 0 }, /limit$/],
    ['limit 1.5', { limit: 1.5 }, /limit$/],
    ['duration 999', { duration: 999 }, /duration$/],
    ['duration 2 592 000 001', { duration: 2_592_000_001 }, /duration$/],
    ['cost −1', { cost: -1 }, /cost$/],
    ['empty identifier', { identifier: '' }, /identifier$/],
  ] as const)('%s', (_, input, location) => {
    const fx = setup();
    expect(firstLocation(fx.limit(input))).toMatch(location);
    // Nothing was consumed.
    expect(unwrap(fx.limit({ cost: 0 })).remaining).toBe(3);
  });

  it('accepts the bounds: limit 1, duration 1000 and 2 592 000 000, cost 0', () => {
    const fx = setup();
    expect(unwrap(fx.limit({ limit: 1, duration: 1_000 })).success).toBe(true);
    expect(unwrap(fx.limit({ limit: 1, duration: 2_592_000_000, identifier: 'long' })).reset).toBe(fx.windowEnd(2_592_000_000));
    expect(unwrap(fx.limit({ cost: 0, identifier: 'zero' })).success).toBe(true);
  });

  it('multiLimit names the offending entry\u2019s field', () => {
    const fx = setup();
    const result = fx.engine.ratelimit.multiLimit(fx.rootKey, [
      { namespace: 'api-calls', identifier: 'a', limit: 2, duration: MINUTE },
      { namespace: 'api-calls', identifier: 'a', limit: 2, duration: 10 },
    ]);
    expect(firstLocation(result)).toMatch(/duration$/);
    expect(errorCode(fx.engine.ratelimit.multiLimit(fx.rootKey, []))).toBe('err:service:application:invalid_input');
  });
});
