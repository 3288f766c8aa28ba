/**
 * One segment's own verdict (checks/segment-scope.ts, docs/checking.md#one-segments-own-verdict):
 * built from constructed histories of two segments whose calls interleave on one rate limit or
 * one key. Each segment alone would look like a violation; with the segment scope its own verdict
 * leaves those checks to the cross-segment verdict, which finds the union clean. A violation
 * inside one segment, on what it alone used, is still found by that segment alone.
 */
import { describe, expect, test } from 'vitest';
import { type InvariantReport, judgeInvariants } from '../../../src/load/invariants/judge.js';
import { invariantsSection } from '../../../src/load/invariants/invariants-section.js';
import {
  HISTORY_FORMAT,
  HISTORY_VERSION,
  type HistoryEvent,
  type HistoryHeader,
  type HistoryOutcome,
  type HistoryPart,
  type HistoryRequest,
  combineHistories,
} from '../../../src/load/history/history.js';
import type { Operation } from '../../../src/load/scenario/scenario.js';

/** 2027-01-15T12:00:00Z: aligned to a minute, the window used here. */
const T0 = Date.UTC(2027, 0, 15, 12);
const MINUTE = 60_000;
const TAG = 'keysim-20270115T120000-7';

/** One history's events, numbered from 0; `at` is a wall offset from T0, the service clock the same. */
class Segment {
  readonly events: HistoryEvent[] = [];

  add(op: Operation, at: number, request: HistoryRequest, outcome: HistoryOutcome): HistoryEvent {
    const event: HistoryEvent = {
      seq: this.events.length,
      op,
      invokeMs: T0 + at,
      completeMs: T0 + at + 2,
      serviceInvokeMs: T0 + at,
      serviceCompleteMs: T0 + at + 2,
      request,
      outcome,
    };
    this.events.push(event);
    return event;
  }

  /** ratelimit.limit on ns/`identifier`, 3 per minute, cost 1; `effective`: the limit the answer reports (an override's). */
  limit(at: number, identifier: string, success: boolean, effective?: { limit: number; overrideId: string }): HistoryEvent {
    return this.add(
      'ratelimit.limit',
      at,
      { namespace: 'ns', identifier, limit: 3, duration: MINUTE },
      {
        status: 200,
        limit: effective?.limit ?? 3,
        remaining: 0,
        reset: T0 + MINUTE,
        success,
        ...(effective === undefined ? {} : { overrideId: effective.overrideId }),
      },
    );
  }

  setOverride(at: number, identifier: string, limit: number): HistoryEvent {
    return this.add('ratelimit.setOverride', at, { namespace: 'ns', identifier, limit, duration: MINUTE }, { status: 200, overrideId: 'rlor_1' });
  }

  create(at: number, keyId: string, credits: number): HistoryEvent {
    return this.add('keys.createKey', at, { credits: { remaining: credits } }, { status: 200, keyId });
  }

  verify(at: number, keyId: string, code: 'VALID' | 'USAGE_EXCEEDED', cost = 1): HistoryEvent {
    return this.add('keys.verifyKey', at, { keyId, cost }, { status: 200, code, valid: code === 'VALID', keyId });
  }

  /** A verification with an inline limit of 2 per minute on the key: `exceeded` denies it. */
  verifyLimited(at: number, keyId: string, exceeded: boolean): HistoryEvent {
    return this.add(
      'keys.verifyKey',
      at,
      { keyId, ratelimits: [{ name: 'burst', limit: 2, duration: MINUTE }] },
      {
        status: 200,
        code: exceeded ? 'RATE_LIMITED' : 'VALID',
        valid: !exceeded,
        keyId,
        ratelimits: [{ id: 'rl_inline', name: 'burst', limit: 2, duration: MINUTE, reset: T0 + MINUTE, remaining: 0, exceeded }],
      },
    );
  }

  credits(at: number, keyId: string, operation: 'set' | 'increment', value: number): HistoryEvent {
    return this.add('keys.updateCredits', at, { keyId, operation, value }, { status: 200 });
  }
}

function header(run: NonNullable<HistoryHeader['run']>): HistoryHeader {
  return { format: HISTORY_FORMAT, version: HISTORY_VERSION, startedAt: new Date(T0).toISOString(), run, host: 'loadbox' };
}
const setUpPart = (events: HistoryEvent[]): HistoryPart => ({
  name: 'setup',
  header: header({ scenario: 's', seed: 7, target: 'simulator', tag: TAG, setUp: 'setup-only' }),
  events,
  truncated: false,
});
const segmentPart = (index: number, s: Segment, setUp: 'shared' | 'own' = 'shared'): HistoryPart => ({
  name: `seg${index}`,
  header: header({ scenario: 's', seed: 7, target: 'simulator', tag: TAG, setUp, segment: { index, count: 2 } }),
  events: s.events,
  truncated: false,
});

const ids = (report: InvariantReport) => report.violations.map((v) => `${v.invariant} ${v.subject}: ${v.message}`);
const verdictOf = (report: InvariantReport, id: string) => report.invariants.find((i) => i.id === id);

describe("a segment's own verdict", () => {
  test('a lone segment sharing a rate limit is not a false denial', () => {
    // Limit 3 per minute on ns/user-1: segment 0 is admitted twice, segment 1 once, then both are denied.
    const seg0 = new Segment();
    const seg1 = new Segment();
    seg0.limit(0, 'user-1', true);
    seg1.limit(5, 'user-1', true);
    seg0.limit(10, 'user-1', true);
    seg0.limit(20, 'user-1', false);
    seg1.limit(25, 'user-1', false);

    // The bug: without the segment's scope, each history alone shows a denial with room left.
    for (const seg of [seg0, seg1]) {
      const unscoped = judgeInvariants(seg.events);
      expect(unscoped.violations.map((v) => v.invariant)).toContain('ratelimit.no-false-denial');
    }
    // A segment's own verdict leaves the denials to the verdict across segments, and says so.
    for (const seg of [seg0, seg1]) {
      const own = judgeInvariants(seg.events, { segment: {} });
      expect(ids(own)).toEqual([]);
      expect(own.passed).toBe(true);
      expect(verdictOf(own, 'ratelimit.no-false-denial')).toMatchObject({ checked: 0, notJudged: 1 });
      expect(verdictOf(own, 'ratelimit.no-over-admission')?.checked).toBeGreaterThan(0);
      expect(own.notes.join('\n')).toMatch(
        /Not judged in one segment \(judged across segments by keysim merge \/ keysim check\): ratelimit\.no-false-denial \(1 denials\)/,
      );
      const section = invariantsSection(own, { operations: seg.events.length });
      expect(section.verdict).toBe('clean');
      expect(section.invariants.find((i) => i.id === 'ratelimit.no-false-denial')?.notJudged).toBe(1);
    }
    // Across segments: three admissions fill the window, both denials are right.
    const combined = combineHistories([segmentPart(0, seg0, 'own'), segmentPart(1, seg1, 'own')]);
    const across = judgeInvariants(combined.events, { wallSkewMs: combined.wallSkewMs });
    expect(ids(across)).toEqual([]);
    expect(verdictOf(across, 'ratelimit.no-false-denial')?.checked).toBe(2);

    // And a real false denial across segments is still found there: drop segment 1's admission.
    const seg1Denied = new Segment();
    seg1Denied.limit(25, 'user-1', false);
    const wrong = combineHistories([segmentPart(0, seg0, 'own'), segmentPart(1, seg1Denied, 'own')]);
    const wrongVerdict = judgeInvariants(wrong.events, { wallSkewMs: wrong.wallSkewMs });
    expect(wrongVerdict.violations.map((v) => v.invariant)).toContain('ratelimit.no-false-denial');
  });

  test('an over-admission inside one segment is still found by that segment alone', () => {
    const seg0 = new Segment();
    for (let i = 0; i < 4; i++) seg0.limit(i * 10, 'user-2', true);
    const own = judgeInvariants(seg0.events, { segment: {} });
    expect(own.passed).toBe(false);
    expect(own.violations.map((v) => `${v.invariant} ${v.subject}`)).toEqual(['ratelimit.no-over-admission ns/user-2']);
    expect(invariantsSection(own, { operations: seg0.events.length }).verdict).toBe('violated');
  });

  test('an override another segment raised is not an over-admission in this one', () => {
    // Segment 0 sets ns/user-3 to 2 per minute; segment 1 (not in this history) raises the same
    // override to 5; the answers report 5, and segment 0 is admitted four times.
    const seg0 = new Segment();
    seg0.setOverride(0, 'user-3', 2);
    for (let i = 1; i <= 4; i++) seg0.limit(i * 10, 'user-3', true, { limit: 5, overrideId: 'rlor_1' });
    expect(judgeInvariants(seg0.events).violations.map((v) => v.invariant)).toEqual(['ratelimit.no-over-admission']);
    const own = judgeInvariants(seg0.events, { segment: {} });
    expect(ids(own)).toEqual([]);
    expect(verdictOf(own, 'ratelimit.no-over-admission')?.checked).toBeGreaterThan(0);
    // Six admissions are more than even the reported 5: still found alone.
    seg0.limit(50, 'user-3', true, { limit: 5, overrideId: 'rlor_1' });
    seg0.limit(55, 'user-3', true, { limit: 5, overrideId: 'rlor_1' });
    expect(judgeInvariants(seg0.events, { segment: {} }).violations.map((v) => v.invariant)).toEqual(['ratelimit.no-over-admission']);
  });

  test('a false denial on a key the segment created is still found by that segment alone', () => {
    // Only this segment holds key_own's secret: every use of its inline limit is in this history.
    const seg0 = new Segment();
    seg0.create(0, 'key_own', 100);
    seg0.verifyLimited(10, 'key_own', false);
    const denied = seg0.verifyLimited(20, 'key_own', true);
    const own = judgeInvariants(seg0.events, { segment: {} });
    expect(own.violations.map((v) => `${v.invariant} ${v.subject}`)).toEqual(['ratelimit.no-false-denial key_own/burst']);
    expect(own.violations[0]?.witness.map((e) => e.seq)).toContain(denied.seq);
    expect(verdictOf(own, 'ratelimit.no-false-denial')).toMatchObject({ checked: 1, notJudged: 0 });
  });

  test('credits of a shared key changed by two segments are left to the verdict across segments', () => {
    // The set-up made key_shared; segment 0 sets it to 2 and later spends 4 (segment 1 added 5 in
    // between); segment 0 sets 10 more later, segment 1 spends them, segment 0 is then refused.
    const setUp = new Segment();
    setUp.create(0, 'key_shared', 0);
    const seg0 = new Segment();
    const seg1 = new Segment();
    seg0.credits(100, 'key_shared', 'set', 2);
    seg1.credits(110, 'key_shared', 'increment', 5);
    seg0.verify(120, 'key_shared', 'VALID', 4);
    seg0.credits(200, 'key_shared', 'set', 10);
    seg1.verify(210, 'key_shared', 'VALID', 10);
    seg0.verify(220, 'key_shared', 'USAGE_EXCEEDED', 1);

    // The bug's credit form: segment 0 alone sees an over-spend and an under-serve.
    const unscoped = judgeInvariants(seg0.events);
    expect(unscoped.violations.map((v) => v.invariant).sort()).toEqual(['credits.no-over-spend', 'credits.no-under-serve']);
    // Its own verdict does not judge a key it did not create.
    const own = judgeInvariants(seg0.events, { segment: { sharedKeyIds: ['key_shared'] } });
    expect(ids(own)).toEqual([]);
    expect(verdictOf(own, 'credits.no-over-spend')).toMatchObject({ checked: 0, notJudged: 1 });
    expect(own.checked.keys).toBe(0);
    expect(own.notes.join('\n')).toMatch(/credits\.no-over-spend \(1 keys\)/);
    // Across segments, with the set-up's history, the key is judged and clean.
    const combined = combineHistories([setUpPart(setUp.events), segmentPart(0, seg0), segmentPart(1, seg1)]);
    const across = judgeInvariants(combined.events, { wallSkewMs: combined.wallSkewMs });
    expect(ids(across)).toEqual([]);
    expect(across.checked.keys).toBe(1);
    expect(verdictOf(across, 'credits.no-over-spend')?.checked).toBeGreaterThan(0);
    expect(verdictOf(across, 'credits.no-under-serve')?.checked).toBeGreaterThan(0);
  });

  test('an over-spend on a key the segment created is still found by that segment alone', () => {
    const seg0 = new Segment();
    seg0.create(0, 'key_own', 2);
    for (let i = 1; i <= 3; i++) seg0.verify(i * 10, 'key_own', 'VALID');
    const own = judgeInvariants(seg0.events, { segment: { sharedKeyIds: ['key_shared'] } });
    expect(own.violations.map((v) => `${v.invariant} ${v.subject}`)).toContain('credits.no-over-spend key_own');
    expect(own.checked.keys).toBe(1);
    expect(verdictOf(own, 'credits.no-over-spend')?.notJudged).toBe(0);
  });

  test('a key a shared fixture names is not judged as the segment’s own even with a createKey in its history', () => {
    const seg0 = new Segment();
    seg0.create(0, 'key_fixture', 2);
    for (let i = 1; i <= 3; i++) seg0.verify(i * 10, 'key_fixture', 'VALID');
    expect(judgeInvariants(seg0.events, { segment: {} }).passed).toBe(false);
    const own = judgeInvariants(seg0.events, { segment: { sharedKeyIds: ['key_fixture'] } });
    expect(own.passed).toBe(true);
    expect(verdictOf(own, 'credits.no-over-spend')?.notJudged).toBe(1);
  });
});
