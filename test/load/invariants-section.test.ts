/**
 * invariantsSection(): the report section built from a real judgeInvariants() verdict over small
 * hand-made histories — the verdict, the counts, every invariant, witnesses as one-line request
 * and outcome summaries with their times (service times only when recorded), at most 20
 * violations with the earliest of every broken invariant kept, the oracle's examples capped and
 * in seq order; and a section that survives report.json and sets `keysim run`'s exit code.
 */
import { describe, expect, test } from 'vitest';
import { EXIT } from '../../src/cli/exit-codes.js';
import { exitCodeOf } from '../../src/cli/commands/run.js';
import { INVARIANTS, judgeInvariants } from '../../src/load/invariants/judge.js';
import type { HistoryEvent, HistoryOutcome, HistoryRequest } from '../../src/load/history/history.js';
import {
  ORACLE_EXAMPLES_MAX,
  SECTION_VIOLATIONS_MAX,
  describeOutcome,
  describeRequest,
  invariantsSection,
} from '../../src/load/invariants/invariants-section.js';
import type { Operation } from '../../src/load/scenario/scenario.js';
import { parseReport, renderJson, type OracleSection, type RunReport } from '../../src/report/index.js';
import { minimalReport } from '../helpers/report-fixture.js';

/** Wall time of the hand-made histories (ms offsets are added to it); aligned to a minute. */
const T0 = Date.UTC(2027, 0, 15, 12);
const MINUTE = 60_000;

class History {
  readonly events: HistoryEvent[] = [];
  #seq = 0;

  add(op: Operation, at: readonly [number, number], request: HistoryRequest, outcome: HistoryOutcome | 'unknown', withServiceTimes = false): HistoryEvent {
    const event: HistoryEvent = { seq: this.#seq++, op, invokeMs: T0 + at[0], completeMs: T0 + at[1], request, outcome };
    if (withServiceTimes) {
      event.serviceInvokeMs = T0 + at[0];
      event.serviceCompleteMs = T0 + at[1];
    }
    this.events.push(event);
    return event;
  }

  create(at: readonly [number, number], keyId: string, remaining: number): HistoryEvent {
    return this.add('keys.createKey', at, { credits: { remaining } }, { status: 200, keyId });
  }

  /** A verification; `credits` is the balance the answer reported (absent: none reported). */
  verify(at: readonly [number, number], keyId: string, code: string, credits?: number): HistoryEvent {
    const outcome: HistoryOutcome = { status: 200, code, valid: code === 'VALID', keyId };
    if (credits !== undefined) outcome.credits = credits;
    return this.add('keys.verifyKey', at, { keyId }, outcome);
  }

  limit(at: readonly [number, number], identifier: string, success: boolean): HistoryEvent {
    const request: HistoryRequest = { namespace: 'ns', identifier, limit: 3, duration: MINUTE };
    return this.add('ratelimit.limit', at, request, { status: 200, limit: 3, remaining: 0, reset: T0 + MINUTE, success }, true);
  }

  /** As a recording writes them: in completion order. */
  get recorded(): HistoryEvent[] {
    return [...this.events].sort((a, b) => a.completeMs - b.completeMs || a.seq - b.seq);
  }
}

/** A key of two credits granted three times, starting `offsetMs` in (the third answer reports no balance). */
function overSpend(h: History, keyId: string, offsetMs: number): void {
  h.create([offsetMs, offsetMs + 2], keyId, 2);
  h.verify([offsetMs + 10, offsetMs + 12], keyId, 'VALID', 1);
  h.verify([offsetMs + 20, offsetMs + 22], keyId, 'VALID', 0);
  h.verify([offsetMs + 30, offsetMs + 32], keyId, 'VALID');
}

/** Four admitted in one window with a limit of 3, starting `offsetMs` in. */
function overAdmission(h: History, identifier: string, offsetMs: number): void {
  for (let i = 0; i < 4; i++) h.limit([offsetMs + 10 * i, offsetMs + 10 * i + 1], identifier, true);
}

function violatedHistory(): History {
  const h = new History();
  overSpend(h, 'key_a', 0);
  overAdmission(h, 'user_1', 100);
  return h;
}

const oracle = (o: Partial<OracleSection> = {}): OracleSection => ({ verdict: 'agrees', compared: 10, skipped: 0, differences: 0, examples: [], ...o });

describe('invariantsSection over a real judgeInvariants() verdict', () => {
  test('violated: verdict, counts, every invariant, and the checkers notes then the given ones', () => {
    const h = violatedHistory();
    const check = judgeInvariants(h.recorded, { wallSkewMs: 0 });
    expect(check.passed).toBe(false);
    const section = invariantsSection(check, { operations: h.events.length, notes: ['a note from the runner'] });
    expect(section.verdict).toBe('violated');
    expect(section.history).toBe('history.jsonl.gz');
    expect(section.operations).toBe(h.events.length);
    expect(section.checked).toEqual(check.checked);
    expect(section.checked.keys).toBe(1);
    expect(section.invariants.map((inv) => inv.id)).toEqual(INVARIANTS.map((inv) => inv.id));
    expect(section.invariants).toEqual(
      check.invariants.map(({ id, title, passed, state, checked, violations }) => ({ id, title, passed, state, checked, violations })),
    );
    expect(section.invariants.filter((inv) => !inv.passed).map((inv) => inv.id)).toEqual(['credits.no-over-spend', 'ratelimit.no-over-admission']);
    expect(section.violationsTotal).toBe(check.violations.length);
    expect(section.violations.map((v) => [v.invariant, v.subject])).toEqual([
      ['credits.no-over-spend', 'key_a'],
      ['ratelimit.no-over-admission', check.violations.find((v) => v.invariant === 'ratelimit.no-over-admission')?.subject],
    ]);
    expect(section.notes).toEqual([...check.notes, 'a note from the runner']);
    expect('oracle' in section).toBe(false);
  });

  test('witnesses: the events in seq order as one-line summaries, times as numbers, service times only when recorded', () => {
    const h = violatedHistory();
    const check = judgeInvariants(h.recorded, { wallSkewMs: 0 });
    const section = invariantsSection(check, { operations: h.events.length, history: 'history.jsonl.gz' });
    const credits = section.violations.find((v) => v.invariant === 'credits.no-over-spend');
    const source = check.violations.find((v) => v.invariant === 'credits.no-over-spend');
    if (credits === undefined || source === undefined) throw new Error('expected an over-spend');
    expect(credits.message).toBe(source.message);
    expect(credits.occurrences).toBe(source.occurrences);
    expect(credits.witness.map((op) => op.seq)).toEqual([...source.witness].map((e) => e.seq).sort((a, b) => a - b));
    expect(credits.witness).toContainEqual({ seq: 0, op: 'keys.createKey', invokeMs: T0, completeMs: T0 + 2, request: 'credits 2', outcome: 'key_a' });
    expect(credits.witness).toContainEqual({
      seq: 2,
      op: 'keys.verifyKey',
      invokeMs: T0 + 20,
      completeMs: T0 + 22,
      request: 'key_a cost 1',
      outcome: 'VALID credits 0',
    });
    expect(credits.witness).toContainEqual({ seq: 3, op: 'keys.verifyKey', invokeMs: T0 + 30, completeMs: T0 + 32, request: 'key_a cost 1', outcome: 'VALID' });
    for (const op of credits.witness) {
      expect('serviceInvokeMs' in op).toBe(false);
      expect('serviceCompleteMs' in op).toBe(false);
    }
    const limits = section.violations.find((v) => v.invariant === 'ratelimit.no-over-admission');
    expect(limits?.witness.length).toBeGreaterThanOrEqual(4);
    for (const op of limits?.witness ?? []) {
      expect(op).toMatchObject({
        op: 'ratelimit.limit',
        request: 'ns/user_1 limit 3/60000 ms cost 1',
        serviceInvokeMs: op.invokeMs,
        serviceCompleteMs: op.completeMs,
      });
      expect(op.outcome).toBe(`remaining 0 admitted limit 3 reset ${new Date(T0 + MINUTE).toISOString()}`);
    }
  });

  test('clean: no violations, every invariant passed', () => {
    const h = new History();
    h.create([0, 2], 'key_a', 2);
    h.verify([10, 12], 'key_a', 'VALID', 1);
    h.verify([20, 22], 'key_a', 'VALID', 0);
    h.verify([30, 32], 'key_a', 'USAGE_EXCEEDED', 0);
    overAdmission(h, 'user_1', 100);
    h.events.pop(); // three admitted: within the limit
    const section = invariantsSection(judgeInvariants(h.recorded, { wallSkewMs: 0 }), { operations: h.events.length });
    expect(section.verdict).toBe('clean');
    expect(section.violations).toEqual([]);
    expect(section.violationsTotal).toBe(0);
    expect(section.invariants.every((inv) => inv.passed)).toBe(true);
    expect(section.checked.verifications).toBe(3);
  });

  test('not checked: no verdict per invariant, the notes and the history named', () => {
    const section = invariantsSection(undefined, { operations: 141, history: 'h.jsonl.gz', notes: ['Interrupted: the history was saved but not checked.'] });
    expect(section).toEqual({
      verdict: 'not-checked',
      history: 'h.jsonl.gz',
      operations: 141,
      checked: { keys: 0, verifications: 0, rateLimitChecks: 0 },
      invariants: [],
      violations: [],
      violationsTotal: 0,
      notes: ['Interrupted: the history was saved but not checked.'],
    });
  });

  test('at most 20 violations, the earliest first, and the earliest of every broken invariant among them', () => {
    const h = new History();
    for (let k = 0; k < 25; k++) overSpend(h, `key_${String(k).padStart(2, '0')}`, k * 1_000);
    overAdmission(h, 'user_late', 30_000);
    const check = judgeInvariants(h.recorded, { wallSkewMs: 0 });
    expect(check.violations).toHaveLength(26);
    const section = invariantsSection(check, { operations: h.events.length });
    expect(SECTION_VIOLATIONS_MAX).toBe(20);
    expect(section.violationsTotal).toBe(26);
    expect(section.violations).toHaveLength(20);
    // The 19 earliest over-spent keys, then the one over-admission (the latest of all, kept).
    expect(section.violations.slice(0, 19).map((v) => v.subject)).toEqual(Array.from({ length: 19 }, (_, k) => `key_${String(k).padStart(2, '0')}`));
    expect(section.violations[19]?.invariant).toBe('ratelimit.no-over-admission');
    expect(section.violations[19]?.subject).toContain('user_late');
    const ends = section.violations.map((v) => Math.max(...v.witness.map((op) => op.completeMs)));
    expect(ends).toEqual([...ends].sort((a, b) => a - b));
  });

  test('the oracle: examples in seq order, at most 20, one line each; the note kept', () => {
    const h = violatedHistory();
    const check = judgeInvariants(h.recorded, { wallSkewMs: 0 });
    const examples = Array.from({ length: 30 }, (_, i) => ({ seq: 100 - i, op: 'keys.verifyKey', field: 'credits', expected: `${i}\n`, received: `${i + 1}` }));
    const section = invariantsSection(check, {
      operations: h.events.length,
      oracle: oracle({ verdict: 'differs', differences: 30, examples, note: 'unknown outcomes skipped' }),
    });
    expect(section.oracle?.verdict).toBe('differs');
    expect(section.oracle?.differences).toBe(30);
    expect(section.oracle?.examples).toHaveLength(ORACLE_EXAMPLES_MAX);
    expect(section.oracle?.examples.map((d) => d.seq)).toEqual(Array.from({ length: 20 }, (_, i) => 71 + i));
    expect(section.oracle?.examples[0]).toEqual({ seq: 71, op: 'keys.verifyKey', field: 'credits', expected: '29', received: '30' });
    expect(section.oracle?.note).toBe('unknown outcomes skipped');
    expect('note' in (invariantsSection(check, { operations: 1, oracle: oracle() }).oracle ?? {})).toBe(false);
    const long = invariantsSection(check, {
      operations: 1,
      oracle: oracle({
        verdict: 'differs',
        differences: 1,
        examples: [{ seq: 1, op: 'ratelimit.multiLimit', field: 'limits', expected: 'x'.repeat(1_000), received: '[]' }],
      }),
    });
    expect(long.oracle?.examples[0]?.expected).toBe(`${'x'.repeat(299)}…`);
  });

  test('a section from a real verdict survives report.json and makes keysim run exit 100', () => {
    const h = violatedHistory();
    const section = invariantsSection(judgeInvariants(h.recorded, { wallSkewMs: 0 }), { operations: h.events.length, oracle: oracle() });
    const report: RunReport = { ...minimalReport({ operations: [{ operation: 'keys.verifyKey', latenciesMs: [1] }] }), invariants: section };
    const parsed = parseReport(renderJson(report));
    expect(parsed.ok, parsed.ok ? '' : parsed.error).toBe(true);
    if (parsed.ok) expect(parsed.report.invariants).toEqual(section);
    expect(exitCodeOf(report)).toBe(EXIT.invariantViolated);
  });
});

describe('exitCodeOf and the invariants section', () => {
  const base = minimalReport({ operations: [{ operation: 'keys.verifyKey', latenciesMs: [1] }] });
  const clean = invariantsSection(judgeInvariants([], {}), { operations: 0 });

  test.each<[string, RunReport, number]>([
    ['clean', { ...base, invariants: clean }, EXIT.ok],
    ['clean, the oracle agreeing', { ...base, invariants: { ...clean, oracle: oracle() } }, EXIT.ok],
    ['clean, the oracle differing', { ...base, invariants: { ...clean, oracle: oracle({ verdict: 'differs', differences: 1 }) } }, EXIT.invariantViolated],
    ['not checked', { ...base, invariants: invariantsSection(undefined, { operations: 3 }) }, EXIT.ok],
    [
      'violated, a check failed too',
      { ...base, checks: [{ name: 'c', passed: false, detail: '' }], invariants: { ...clean, verdict: 'violated' } },
      EXIT.invariantViolated,
    ],
    ['violated but interrupted', { ...base, status: 'interrupted', invariants: { ...clean, verdict: 'violated' } }, EXIT.interrupted],
  ])('%s', (_name, report, code) => {
    expect(exitCodeOf(report)).toBe(code);
  });
});

describe('witness summaries', () => {
  const event = (op: Operation, request: HistoryRequest, outcome: HistoryOutcome | 'unknown'): HistoryEvent => ({
    seq: 1,
    op,
    invokeMs: T0,
    completeMs: T0 + 1,
    request,
    outcome,
  });

  test('requests', () => {
    expect(describeRequest(event('keys.verifyKey', { keyId: 'key_x' }, 'unknown'))).toBe('key_x cost 1');
    expect(describeRequest(event('keys.verifyKey', { keyId: 'key_x', cost: 3, ratelimits: [{ name: 'rps', limit: 5, duration: 1_000 }] }, 'unknown'))).toBe(
      'key_x cost 3 ratelimit rps 5/1000 ms',
    );
    expect(
      describeRequest(event('keys.createKey', { credits: { remaining: 10, refill: { interval: 'monthly', amount: 10, refillDay: 31 } } }, 'unknown')),
    ).toBe('credits 10 refill monthly 10 day 31');
    expect(describeRequest(event('keys.updateKey', { keyId: 'key_x', credits: null }, 'unknown'))).toBe('key_x credits unlimited');
    expect(describeRequest(event('keys.updateCredits', { keyId: 'key_x', operation: 'increment', value: 2 }, 'unknown'))).toBe('key_x increment 2');
    expect(describeRequest(event('keys.createKey', {}, 'unknown'))).toBe('–');
    expect(describeRequest(event('ratelimit.limit', { namespace: 'ns', identifier: 'a\nb', limit: 3, duration: MINUTE, cost: 2 }, 'unknown'))).toBe(
      'ns/a b limit 3/60000 ms cost 2',
    );
  });

  test('outcomes', () => {
    expect(describeOutcome(event('keys.verifyKey', { keyId: 'key_x' }, 'unknown'))).toBe('unknown (no answer)');
    expect(describeOutcome(event('keys.verifyKey', { keyId: 'key_x' }, { status: 200, code: 'VALID', valid: true, keyId: 'key_x', credits: 3 }))).toBe(
      'VALID credits 3',
    );
    expect(describeOutcome(event('keys.getKey', { keyId: 'key_x' }, { status: 404, error: 'data:key_not_found' }))).toBe('404 data:key_not_found');
    expect(describeOutcome(event('keys.updateKey', { keyId: 'key_x' }, { status: 200 }))).toBe('200');
    expect(describeOutcome(event('ratelimit.limit', {}, { status: 200, success: false, limit: 3 }))).toBe('denied limit 3');
  });
});
