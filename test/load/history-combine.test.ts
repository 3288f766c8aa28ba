/**
 * Combining the histories of one run's set-up and segments (history-combine.ts): a key spent by
 * two segments obeys its bounds on the union of their calls, histories of different runs are
 * refused, and the combined events keep where they came from.
 */
import { describe, expect, test } from 'vitest';
import { judgeInvariants } from '../../src/load/invariants/judge.js';
import { invariantsSection } from '../../src/load/invariants/invariants-section.js';
import {
  HISTORY_FORMAT,
  HISTORY_VERSION,
  HistoryCombineError,
  type HistoryEvent,
  type HistoryHeader,
  type HistoryPart,
  combineHistories,
} from '../../src/load/history/history.js';

const T0 = Date.UTC(2027, 0, 15, 12);
const TAG = 'keysim-20270115T120000-1';

function header(run: NonNullable<HistoryHeader['run']>, host = 'loadbox'): HistoryHeader {
  return { format: HISTORY_FORMAT, version: HISTORY_VERSION, startedAt: new Date(T0).toISOString(), run, host };
}
const setUpHeader = (tag = TAG) => header({ scenario: 'drain', seed: 1, target: 'simulator', tag, setUp: 'setup-only' });
const segmentHeader = (index: number, count = 2, more: Partial<NonNullable<HistoryHeader['run']>> = {}, host?: string) =>
  header({ scenario: 'drain', seed: 1, target: 'simulator', tag: TAG, setUp: 'shared', segment: { index, count }, ...more }, host);

const create = (seq: number, at: number, keyId: string, credits: number): HistoryEvent => ({
  seq,
  op: 'keys.createKey',
  invokeMs: T0 + at,
  completeMs: T0 + at + 1,
  request: { credits: { remaining: credits } },
  outcome: { status: 200, keyId },
});
/** A VALID verification of cost 1 that reports no balance (only the over-spend bound judges it). */
const valid = (seq: number, at: number, keyId: string): HistoryEvent => ({
  seq,
  op: 'keys.verifyKey',
  invokeMs: T0 + at,
  completeMs: T0 + at + 1,
  request: { keyId },
  outcome: { status: 200, code: 'VALID', valid: true, keyId },
});

const part = (name: string, h: HistoryHeader, events: HistoryEvent[], truncated = false): HistoryPart => ({ name, header: h, events, truncated });

/** A key of 3 credits made by the set-up; each segment is granted 2 of them, one after the other. */
function overSpentAcrossSegments(): HistoryPart[] {
  return [
    part('setup', setUpHeader(), [create(0, 0, 'key_shared', 3)]),
    part('seg0', segmentHeader(0), [valid(0, 10, 'key_shared'), valid(1, 30, 'key_shared')]),
    part('seg1', segmentHeader(1), [valid(0, 20, 'key_shared'), valid(1, 40, 'key_shared')]),
  ];
}

describe('combineHistories', () => {
  test('a key over-spent across two segments is found only by the cross-segment check', () => {
    const [setUp, seg0, seg1] = overSpentAcrossSegments() as [HistoryPart, HistoryPart, HistoryPart];
    // Each segment with the set-up is clean: 2 grants on 3 credits.
    for (const seg of [seg0, seg1]) expect(judgeInvariants([...setUp.events, ...seg.events]).passed).toBe(true);
    const combined = combineHistories([setUp, seg0, seg1]);
    const report = judgeInvariants(combined.events, { wallSkewMs: combined.wallSkewMs });
    expect(report.passed).toBe(false);
    const violation = report.violations.find((v) => v.invariant === 'credits.no-over-spend');
    expect(violation?.subject).toBe('key_shared');
    // The witness names the operations by their segment and own number.
    expect(violation?.witness.map((e) => e.origin)).toContain('segment 1/2 #1');
    expect(violation?.witness.map((e) => e.origin)).toContain('set-up #0');
  });

  test("the report's witness rows name each operation by the history that recorded it", () => {
    const combined = combineHistories(overSpentAcrossSegments());
    const section = invariantsSection(judgeInvariants(combined.events), { operations: combined.events.length });
    const rows = section.violations.find((v) => v.invariant === 'credits.no-over-spend')?.witness ?? [];
    expect(rows.map((r) => r.origin)).toEqual(expect.arrayContaining(['set-up #0', 'segment 1/2 #1']));
    expect(rows.find((r) => r.origin === 'segment 1/2 #1')?.seq).toBe(4);
  });

  test('the combined events are renumbered uniquely in invoke order and keep their origin; one machine widens nothing', () => {
    const combined = combineHistories(overSpentAcrossSegments());
    expect(combined.events.map((e) => e.seq)).toEqual([0, 1, 2, 3, 4]);
    expect(combined.events.map((e) => e.origin)).toEqual(['set-up #0', 'segment 0/2 #0', 'segment 1/2 #0', 'segment 0/2 #1', 'segment 1/2 #1']);
    expect(combined.hostSkewMs).toBe(0);
    expect(combined.events[1]?.invokeMs).toBe(T0 + 10);
    expect(combined.header.combined).toEqual(['set-up', 'segment 0/2', 'segment 1/2']);
    // Given in another order, the same combination.
    const [setUp, seg0, seg1] = overSpentAcrossSegments() as [HistoryPart, HistoryPart, HistoryPart];
    expect(combineHistories([seg1, setUp, seg0]).events.map((e) => e.origin)).toEqual(combined.events.map((e) => e.origin));
    expect(combined.header.run?.tag).toBe(TAG);
  });

  test('histories of several machines are widened by the bound on their clocks: grants that may overlap are no longer proved sequential', () => {
    const parts = overSpentAcrossSegments();
    const onTwo = parts.map((p, i) => (i === 2 ? { ...p, header: { ...p.header, host: 'other' } } : p));
    const widened = combineHistories(onTwo, { hostSkewMs: 50 });
    expect(widened.hostSkewMs).toBe(50);
    expect(widened.events[0]?.invokeMs).toBe(T0 - 50);
    expect(widened.notes.join(' ')).toMatch(/widened by 50 ms/);
    // Widened by 50 ms, a grant may have come before the key existed: no order is proved wrong.
    expect(judgeInvariants(widened.events, { wallSkewMs: widened.wallSkewMs }).passed).toBe(true);
    // Clocks within 2 ms: every grant is still surely after the creation, and 4 on 3 credits is an over-spend.
    const close = combineHistories(onTwo, { hostSkewMs: 2 });
    expect(judgeInvariants(close.events, { wallSkewMs: close.wallSkewMs }).passed).toBe(false);
    expect(combineHistories(onTwo).hostSkewMs).toBe(1_000);
  });

  test('a segment cut short cuts every history at the earliest instant a lost operation may have been sent', () => {
    const [setUp, seg0, seg1] = overSpentAcrossSegments() as [HistoryPart, HistoryPart, HistoryPart];
    // seg1 lost its operation #1 (sent after #2 at 25 ms, which the file kept)… so nothing after 25 ms is judged.
    const cut = { ...seg1, events: [valid(0, 20, 'key_shared'), valid(2, 25, 'key_shared')], truncated: true };
    const combined = combineHistories([setUp, seg0, cut]);
    expect(combined.truncated).toMatchObject({ parts: ['seg1'], read: 5 });
    expect(combined.events.every((e) => e.completeMs < T0 + 20)).toBe(true);
  });

  test.each([
    [
      'another seed',
      () => [overSpentAcrossSegments()[0], part('seg0', segmentHeader(0, 2, { seed: 2 }), []), overSpentAcrossSegments()[2]],
      /records another run \(drain seed 2/,
    ],
    [
      'another set-up (tag)',
      () => [part('setup', setUpHeader('keysim-20270115T130000-1'), []), ...overSpentAcrossSegments().slice(1)],
      /belongs to the set-up tagged .* their fixtures differ/,
    ],
    ['one segment twice', () => [...overSpentAcrossSegments(), part('again', segmentHeader(1), [])], /segment 1\/2 is given twice \(seg1 and again\)/],
    ['a missing segment', () => overSpentAcrossSegments().slice(0, 2), /segments 1\/2 of the plan are missing/],
    ['two cuts of the plan', () => [part('a', segmentHeader(0, 2), []), part('b', segmentHeader(1, 3), [])], /two cuts of the plan/],
    [
      'a whole run beside segments',
      () => [...overSpentAcrossSegments(), part('whole', header({ scenario: 'drain', seed: 1, target: 'simulator', tag: TAG, setUp: 'own' }), [])],
      /whole is the history of a whole run/,
    ],
    [
      'a history that does not say its run',
      () => [part('old', { format: HISTORY_FORMAT, version: HISTORY_VERSION }, []), ...overSpentAcrossSegments()],
      /old does not say which run it records/,
    ],
    [
      'own and shared set-ups mixed',
      () => [part('a', segmentHeader(0, 2, { setUp: 'own' }), []), part('b', segmentHeader(1), [])],
      /ran its own setup while b used a shared one/,
    ],
  ] as const)('refuses %s', (_what, parts, message) => {
    expect(() => combineHistories(parts() as HistoryPart[])).toThrow(HistoryCombineError);
    expect(() => combineHistories(parts() as HistoryPart[])).toThrow(message);
  });

  test('segments that each ran their own setup combine (a rate limit or identity they share is judged on the union)', () => {
    const own = (i: number) =>
      part(`seg${i}`, segmentHeader(i, 2, { setUp: 'own', tag: `keysim-own-${i}` }), [create(0, i, `key_${i}`, 1), valid(1, 10 + i, `key_${i}`)]);
    const combined = combineHistories([own(0), own(1)]);
    expect(combined.events).toHaveLength(4);
    expect(combined.header.run?.tag).toBeUndefined();
    expect(judgeInvariants(combined.events).passed).toBe(true);
  });
});
