/**
 * A snapshot read from its text in pieces, one record at a time (SnapshotReader), restores
 * exactly what the whole-text restore (JSON.parse, then engine.restore) restores, and refuses
 * exactly what it refuses, with the same problem — whatever the pieces, whatever the damage.
 */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { Engine, type EngineSnapshot, ManualClock, type Result } from '../../src/engine/index.js';
import { unwrap } from '../helpers/engine.js';
import { assertProperty } from '../helpers/property.js';

const START_MS = Date.UTC(2028, 0, 30, 18);
const DAY = 86_400_000;

const tricky = fc.string({ unit: fc.constantFrom('a', '"', '\\', '\n', 'é', '😀', '{', ']', ',', ':', ' '), maxLength: 12 });
const meta = fc.dictionary(
  tricky,
  fc.oneof(tricky, fc.integer(), fc.array(fc.oneof(tricky, fc.double({ noNaN: true, noDefaultInfinity: true })), { maxLength: 3 })),
  { maxKeys: 4 },
);
const keyInput = fc.record(
  {
    meta,
    name: fc.string({ minLength: 1, maxLength: 8 }),
    credits: fc.record(
      {
        remaining: fc.integer({ min: 0, max: 50 }),
        refill: fc.option(fc.constantFrom({ interval: 'monthly' as const, amount: 9 }, { interval: 'daily' as const, amount: 3 }), { nil: undefined }),
      },
      { requiredKeys: ['remaining'] },
    ),
    ratelimits: fc.constantFrom([], [{ name: 'rl', limit: 3, duration: 60_000, autoApply: true }]),
    externalId: fc.constantFrom('acme', 'user_1'),
    roles: fc.constantFrom([], ['admin']),
    recoverable: fc.boolean(),
  },
  { requiredKeys: [] },
);
const world = fc.record({
  seed: fc.nat(1000),
  keys: fc.array(keyInput, { maxLength: 6 }),
  limits: fc.array(fc.constantFrom('u1', 'u2'), { maxLength: 3 }),
  namespace: fc.boolean(),
});

function makeSnapshot(w: { seed: number; keys: Array<Record<string, unknown>>; limits: string[]; namespace: boolean }): EngineSnapshot {
  const clock = new ManualClock(START_MS);
  const engine = new Engine({ clock, seed: w.seed });
  const ws = unwrap(engine.admin.createWorkspace({ name: 'w' }));
  const api = unwrap(engine.apis.createApi(ws.rootKey, { name: 'api' }));
  unwrap(engine.admin.configureVault(ws.workspaceId, true));
  unwrap(engine.admin.configureApi(ws.workspaceId, { apiId: api.apiId, encryption: true }));
  unwrap(engine.admin.createNamespace(ws.workspaceId, 'api'));
  if (w.namespace) unwrap(engine.admin.createNamespace(ws.workspaceId, 'jobs'));
  for (const input of w.keys) unwrap(engine.keys.createKey(ws.rootKey, { apiId: api.apiId, ...input } as Parameters<Engine['keys']['createKey']>[1]));
  for (const identifier of w.limits) unwrap(engine.ratelimit.limit(ws.rootKey, { namespace: 'api', identifier, limit: 5, duration: 60_000 }));
  if (w.namespace) unwrap(engine.ratelimit.setOverride(ws.rootKey, { namespace: 'api', identifier: 'vip_*', limit: 9, duration: 60_000 }));
  clock.advance(3 * DAY);
  return engine.snapshot();
}

const fresh = () => new Engine({ clock: new ManualClock(START_MS), seed: 7 });

/** The whole-text restore: what it answers, and the state it leaves. */
function wholeRestore(text: string): { result: Result<unknown>; after: EngineSnapshot } {
  const engine = fresh();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { result: { ok: false, error: { code: 'err:service:application:invalid_input', detail: 'syntax' } }, after: engine.snapshot() };
  }
  const record = parsed as Record<string, unknown> | null;
  // As a snapshot file is read: the snapshot, the answer of /_sim/snapshot, or a restore body.
  const snapshot =
    typeof record === 'object' && record !== null && record.format === undefined && typeof record.data === 'object' && record.data !== null
      ? record.data
      : typeof record === 'object' && record !== null && record.format === undefined && typeof record.snapshot === 'object' && record.snapshot !== null
        ? record.snapshot
        : parsed;
  const result = engine.restore(snapshot);
  return { result, after: engine.snapshot() };
}

/** The restore read in pieces of the given sizes (cycled). */
function pieceRestore(text: string, sizes: readonly number[]): { result: Result<unknown>; after: EngineSnapshot } {
  const engine = fresh();
  const reader = engine.snapshotReader();
  let at = 0;
  let n = 0;
  while (at < text.length) {
    const size = sizes[n++ % sizes.length] ?? 1;
    if (reader.write(text.slice(at, at + size)) !== undefined) break;
    at += size;
  }
  const checked = reader.end();
  const result: Result<unknown> = checked.ok ? { ok: true, value: engine.restoreChecked(checked.value) } : checked;
  return { result, after: engine.snapshot() };
}

function expectSame(text: string, sizes: readonly number[]): void {
  const whole = wholeRestore(text);
  const pieces = pieceRestore(text, sizes);
  expect(pieces.after).toEqual(whole.after);
  expect(pieces.result.ok).toBe(whole.result.ok);
  if (!whole.result.ok && !pieces.result.ok) {
    if (whole.result.error.detail === 'syntax') expect(pieces.result.error.detail).toMatch(/^The snapshot is not valid JSON: /);
    else expect(pieces.result.error).toEqual(whole.result.error);
  }
}

const sizes = fc.array(fc.integer({ min: 1, max: 200 }), { minLength: 1, maxLength: 5 });
const layout = fc.constantFrom('bare', 'pretty', 'data', 'body');
function textOf(snapshot: unknown, how: string): string {
  if (how === 'pretty') return JSON.stringify(snapshot, null, 2);
  if (how === 'data') return JSON.stringify({ meta: { requestId: 'req_1' }, data: snapshot });
  if (how === 'body') return JSON.stringify({ snapshot });
  return JSON.stringify(snapshot);
}

describe('SnapshotReader: a snapshot read one record at a time', () => {
  test('any cut of any snapshot restores the same state as the whole text', () =>
    assertProperty(
      fc.property(world, sizes, layout, (w, cut, how) => {
        const snapshot = makeSnapshot(w);
        const text = textOf(snapshot, how);
        expectSame(text, cut);
        // The fresh engine keeps its own seed and clock; everything else is the snapshot's.
        const { seed: _s, takenAtMs: _t, ...restored } = pieceRestore(text, cut).after;
        const { seed: _s2, takenAtMs: _t2, ...original } = snapshot;
        expect(restored).toEqual(original);
      }),
      { numRuns: 60 },
    ));

  test('a field of a record set to a wrong value is refused with the same problem, the state untouched', () =>
    assertProperty(
      fc.property(
        world,
        fc.constantFrom('keys', 'rootKeys', 'apis', 'identities', 'windows', 'workspaces'),
        fc.nat(),
        fc.nat(),
        fc.jsonValue({ maxDepth: 2 }),
        sizes,
        (w, list, pick, fieldPick, wrong, cut) => {
          const snapshot = JSON.parse(JSON.stringify(makeSnapshot(w))) as Record<string, unknown>;
          const records = snapshot[list] as unknown[];
          if (records.length === 0) return;
          const index = pick % records.length;
          const record = records[index];
          if (Array.isArray(record)) record[1] = wrong;
          else {
            const fields = Object.keys(record as object);
            (record as Record<string, unknown>)[fields[fieldPick % fields.length] as string] = wrong;
          }
          expectSame(JSON.stringify(snapshot), cut);
        },
      ),
      { numRuns: 150 },
    ));

  test('header fields and lists missing, repeated, or of the wrong type give the same answer', () =>
    assertProperty(
      fc.property(
        world,
        fc.constantFrom('format', 'version', 'compat', 'seed', 'randomState', 'takenAtMs', 'keys', 'windows', 'rootKeys'),
        fc.option(fc.jsonValue({ maxDepth: 1 }), { nil: undefined }),
        fc.boolean(),
        sizes,
        (w, field, value, repeat, cut) => {
          const snapshot = makeSnapshot(w) as unknown as Record<string, unknown>;
          const text = JSON.stringify({ ...snapshot, [field]: value });
          // A repeated name: JSON.parse keeps the last value, and so must the reader.
          const repeated = repeat ? `${text.slice(0, -1)},${JSON.stringify(field)}:${JSON.stringify(snapshot[field])}}` : text;
          expectSame(repeated, cut);
        },
      ),
      { numRuns: 150 },
    ));

  test('cut short at every position: refused, the state untouched', () => {
    const text = textOf(
      makeSnapshot({
        seed: 3,
        keys: [{ meta: { 'q"\\': 'é😀' }, credits: { remaining: 2, refill: { interval: 'daily', amount: 3 } } }, {}],
        limits: ['u1'],
        namespace: true,
      }),
      'body',
    );
    const untouched = fresh().snapshot();
    for (let end = 0; end < text.length; end++) {
      const cut = pieceRestore(text.slice(0, end), [37]);
      expect(cut.result.ok).toBe(false);
      expect(cut.after).toEqual(untouched);
    }
  });

  test('damaged at every position: the same answer as the whole text', () => {
    const text = textOf(makeSnapshot({ seed: 4, keys: [{ meta: { a: 'b\\"' }, externalId: 'acme' }], limits: [], namespace: false }), 'bare');
    for (let at = 0; at < text.length; at++) {
      for (const put of ['x', '"', '}', '1', '\\']) expectSame(`${text.slice(0, at)}${put}${text.slice(at + 1)}`, [(at % 13) + 1]);
    }
  });
});
