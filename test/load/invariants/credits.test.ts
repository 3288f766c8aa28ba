/**
 * The usage-credit checkers: hand-made histories (clean sequential and concurrent ones pass;
 * over-spend, under-serve, a balance reported twice, a lost decrement, a refill not applied or
 * added instead of replacing are caught with a small witness; unknown outcomes count only
 * toward the upper bound; completions may come out of invoke order), then properties over
 * histories recorded from the real engine: a correct service is never flagged, whatever the
 * concurrency, and an injected wrong behaviour always is.
 */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import type { Compat, Result } from '../../../src/engine/index.js';
import { type InvariantReport, type InvariantId, type Violation, judgeCreditInvariants, judgeInvariants } from '../../../src/load/invariants/judge.js';
import {
  type HistoryCredits,
  type HistoryEvent,
  type HistoryOutcome,
  type HistoryRequest,
  KeyDirectory,
  historyOutcome,
  historyRequest,
} from '../../../src/load/history/history.js';
import type { Operation } from '../../../src/load/scenario/scenario.js';
import { type EngineFixture, makeEngine, unwrap } from '../../helpers/engine.js';
import { assertProperty } from '../../helpers/property.js';

// ── hand-made histories ───────────────────────────────────────────────────────────────────

/** Wall time of the hand-made histories (ms offsets are added to it). */
const T0 = Date.UTC(2027, 0, 15, 12);

class History {
  readonly events: HistoryEvent[] = [];
  #seq = 0;

  add(
    op: Operation,
    at: readonly [number, number],
    request: HistoryRequest,
    outcome: HistoryOutcome | 'unknown',
    service?: readonly [number, number],
  ): HistoryEvent {
    const event: HistoryEvent = { seq: this.#seq++, op, invokeMs: T0 + at[0], completeMs: T0 + at[1], request, outcome };
    if (service !== undefined) {
      event.serviceInvokeMs = service[0];
      event.serviceCompleteMs = service[1];
    }
    this.events.push(event);
    return event;
  }

  create(at: readonly [number, number], keyId: string, credits: HistoryCredits | undefined, service?: readonly [number, number]): HistoryEvent {
    return this.add('keys.createKey', at, credits === undefined ? {} : { credits }, { status: 200, keyId }, service);
  }

  verify(
    at: readonly [number, number],
    keyId: string,
    code: string,
    credits: number | undefined,
    cost?: number,
    service?: readonly [number, number],
  ): HistoryEvent {
    const outcome: HistoryOutcome = { status: 200, code, valid: code === 'VALID', keyId };
    if (credits !== undefined) outcome.credits = credits;
    return this.add('keys.verifyKey', at, cost === undefined ? { keyId } : { keyId, cost }, outcome, service);
  }

  /** A verification whose answer never came (timeout). */
  lost(at: readonly [number, number], keyId: string, cost?: number): HistoryEvent {
    return this.add('keys.verifyKey', at, cost === undefined ? { keyId } : { keyId, cost }, 'unknown');
  }

  updateCredits(
    at: readonly [number, number],
    keyId: string,
    operation: 'set' | 'increment' | 'decrement',
    value: number | null,
    remaining: number | null,
  ): HistoryEvent {
    return this.add('keys.updateCredits', at, { keyId, operation, value }, { status: 200, remaining });
  }

  /** As a recording writes them: in completion order. */
  get recorded(): HistoryEvent[] {
    return [...this.events].sort((a, b) => a.completeMs - b.completeMs || a.seq - b.seq);
  }
}

function check(h: History): InvariantReport {
  return judgeInvariants(h.recorded, { wallSkewMs: 0 });
}

function only(report: InvariantReport, invariant: InvariantId): Violation {
  const found = report.violations.filter((v) => v.invariant === invariant);
  expect(found, `expected one ${invariant} violation, got ${JSON.stringify(report.violations.map((v) => [v.invariant, v.message]))}`).toHaveLength(1);
  return found[0] as Violation;
}

/** A witness is small, has times, and contains the given operations. */
function expectWitness(v: Violation, ...events: HistoryEvent[]): void {
  expect(v.witness.length).toBeGreaterThan(0);
  expect(v.witness.length).toBeLessThanOrEqual(6);
  for (const e of v.witness) {
    expect(Number.isFinite(e.invokeMs)).toBe(true);
    expect(e.completeMs).toBeGreaterThanOrEqual(e.invokeMs);
  }
  const seqs = v.witness.map((e) => e.seq);
  for (const e of events) expect(seqs).toContain(e.seq);
}

describe('clean histories pass', () => {
  test('sequential: a budget drained one credit at a time, then refused', () => {
    const h = new History();
    h.create([0, 2], 'key_a', { remaining: 3 });
    h.verify([10, 12], 'key_a', 'VALID', 2);
    h.verify([20, 22], 'key_a', 'VALID', 1);
    h.verify([30, 32], 'key_a', 'VALID', 0);
    h.verify([40, 42], 'key_a', 'USAGE_EXCEEDED', 0);
    h.verify([50, 52], 'key_a', 'VALID', 0, 0);
    const report = check(h);
    expect(report.violations).toEqual([]);
    expect(report.passed).toBe(true);
    expect(report.checked).toMatchObject({ keys: 1, verifications: 5 });
  });

  test('concurrent: eight overlapping verifications on five credits, answered in any order', () => {
    const h = new History();
    h.create([0, 2], 'key_a', { remaining: 5 });
    // All overlap [100, 200]: any order is possible, so any assignment of 4..0 to the VALIDs is.
    const answers: Array<[string, number]> = [
      ['VALID', 2],
      ['USAGE_EXCEEDED', 0],
      ['VALID', 0],
      ['VALID', 4],
      ['USAGE_EXCEEDED', 0],
      ['VALID', 1],
      ['VALID', 3],
      ['USAGE_EXCEEDED', 0],
    ];
    for (const [i, [code, credits]] of answers.entries()) h.verify([100 + i, 200 + ((i * 37) % 50)], 'key_a', code, credits);
    expect(check(h).violations).toEqual([]);
  });

  test('a refused verification concurrent with the VALID answers that drained the key is fine', () => {
    const h = new History();
    h.create([0, 2], 'key_a', { remaining: 2 });
    h.verify([10, 50], 'key_a', 'USAGE_EXCEEDED', 0);
    h.verify([12, 20], 'key_a', 'VALID', 1);
    h.verify([14, 30], 'key_a', 'VALID', 0);
    expect(check(h).violations).toEqual([]);
  });

  test('an increment lets a balance be reported again; set and decrement (stopping at 0) are followed', () => {
    const h = new History();
    h.create([0, 2], 'key_a', { remaining: 1 });
    h.verify([10, 12], 'key_a', 'VALID', 0);
    h.updateCredits([20, 22], 'key_a', 'increment', 1, 1);
    h.verify([30, 32], 'key_a', 'VALID', 0);
    h.updateCredits([40, 42], 'key_a', 'set', 5, 5);
    h.verify([50, 52], 'key_a', 'VALID', 3, 2);
    h.updateCredits([60, 62], 'key_a', 'decrement', 10, 0);
    h.verify([70, 72], 'key_a', 'USAGE_EXCEEDED', 0);
    expect(check(h).violations).toEqual([]);
  });

  test('an unlimited key (or one made unlimited) never reports credits and is never refused', () => {
    const h = new History();
    h.create([0, 2], 'key_u', undefined);
    h.verify([10, 12], 'key_u', 'VALID', undefined, 1_000_000);
    h.create([20, 22], 'key_b', { remaining: 0 });
    h.add('keys.updateKey', [30, 32], { keyId: 'key_b', credits: null }, { status: 200 });
    h.verify([40, 42], 'key_b', 'VALID', undefined, 5);
    expect(check(h).violations).toEqual([]);
    h.verify([50, 52], 'key_b', 'USAGE_EXCEEDED', 0);
    only(check(h), 'credits.no-under-serve');
  });
});

describe('violations', () => {
  test('over-spend, sequential: a third VALID on two credits', () => {
    const h = new History();
    const create = h.create([0, 2], 'key_a', { remaining: 2 });
    const first = h.verify([10, 12], 'key_a', 'VALID', 1);
    const second = h.verify([20, 22], 'key_a', 'VALID', 0);
    const third = h.verify([30, 32], 'key_a', 'VALID', 0);
    const report = check(h);
    expect(report.passed).toBe(false);
    const v = only(report, 'credits.no-over-spend');
    expect(v.subject).toBe('key_a');
    expect(v.message).toMatch(/#3 .* granted although at most 0 credits could be left/);
    expectWitness(v, create, first, second, third);
  });

  test('over-spend, concurrent: three overlapping VALID answers on two credits (no balances reported)', () => {
    const h = new History();
    const create = h.create([0, 2], 'key_a', { remaining: 2 });
    const valids = [
      h.verify([10, 50], 'key_a', 'VALID', undefined),
      h.verify([12, 48], 'key_a', 'VALID', undefined),
      h.verify([15, 45], 'key_a', 'VALID', undefined),
    ];
    const v = only(check(h), 'credits.no-over-spend');
    expect(v.message).toMatch(/3 VALID answers worth 3 credits .* budget was 2/);
    expectWitness(v, create, ...valids);
  });

  test('under-serve: USAGE_EXCEEDED while four credits were surely left', () => {
    const h = new History();
    const create = h.create([0, 2], 'key_a', { remaining: 5 });
    h.verify([10, 12], 'key_a', 'VALID', 4);
    const refused = h.verify([20, 22], 'key_a', 'USAGE_EXCEEDED', 4);
    const v = only(check(h), 'credits.no-under-serve');
    expect(v.message).toMatch(/refused for credits although at least 4 credits were surely left/);
    expectWitness(v, create, refused);
    // Cost 0 is never refused either.
    const h0 = new History();
    h0.create([0, 2], 'key_a', { remaining: 0 });
    h0.verify([10, 12], 'key_a', 'USAGE_EXCEEDED', 0, 0);
    only(check(h0), 'credits.no-under-serve');
  });

  test('under-serve witnesses include the top-ups that prove the refusal wrong', () => {
    const h = new History();
    const create = h.create([0, 2], 'key_a', { remaining: 0 });
    const first = h.updateCredits([10, 12], 'key_a', 'increment', 5, 5);
    const second = h.updateCredits([20, 22], 'key_a', 'increment', 5, 10);
    // Four verifications without answers may each have spent a credit: at least 6 stay.
    for (let i = 0; i < 4; i++) h.lost([25 + i, 60], 'key_a');
    const refused = h.verify([35, 37], 'key_a', 'USAGE_EXCEEDED', 6);
    const v = only(check(h), 'credits.no-under-serve');
    expect(v.message).toMatch(
      /refused for credits although at least 6 credits were surely left after createKey #0 to 0 credits and the top-ups of 10 credits surely before it: #1 \+5 \(answered 2027-01-15T12:00:00\.012Z\), #2 \+5 \(answered 2027-01-15T12:00:00\.022Z\) \(4 operations could have spent in between\)/,
    );
    // The set, the refusal and both top-ups come first; the spends that could have eaten into them fill the rest.
    expectWitness(v, create, first, second, refused);
    expect(v.witness).toHaveLength(6);
    // A set by updateCredits is the top-up itself: it is the witness's first operation.
    const s = new History();
    s.create([0, 2], 'key_b', { remaining: 0 });
    const set = s.updateCredits([10, 12], 'key_b', 'set', 3, 3);
    const refusedB = s.verify([20, 22], 'key_b', 'USAGE_EXCEEDED', 3);
    const vb = only(check(s), 'credits.no-under-serve');
    expect(vb.message).toMatch(/at least 3 credits were surely left after updateCredits set #1 to 3 credits/);
    expect(vb.witness.map((e) => e.seq)).toEqual([set.seq, refusedB.seq]);
  });

  test('a balance reported twice by concurrent VALID answers of cost 1', () => {
    const h = new History();
    const create = h.create([0, 2], 'key_a', { remaining: 5 });
    const a = h.verify([10, 50], 'key_a', 'VALID', 4);
    const b = h.verify([20, 60], 'key_a', 'VALID', 4);
    const v = only(check(h), 'credits.consistent');
    expect(v.message).toMatch(/report 4 \(cost 1\) and 4 \(cost 1\) credits/);
    expect(v.witness.map((e) => e.seq)).toEqual([create.seq, a.seq, b.seq]);
  });

  test('a lost decrement: sequential VALID answers whose balance does not go down', () => {
    const h = new History();
    const create = h.create([0, 2], 'key_a', { remaining: 10 });
    const first = h.verify([10, 12], 'key_a', 'VALID', 9);
    const second = h.verify([20, 22], 'key_a', 'VALID', 9);
    h.verify([30, 32], 'key_a', 'VALID', 9);
    const v = only(check(h), 'credits.consistent');
    expect(v.message).toMatch(/#2 .* reports 9 credits, but after createKey #0 to 10 credits at most 8 could be left/);
    expect(v.occurrences).toBeGreaterThanOrEqual(2);
    expectWitness(v, create, first, second);
  });

  test('a balance above what an answer after another can show, and a getKey read that disagrees', () => {
    const h = new History();
    h.create([0, 2], 'key_a', { remaining: 5 });
    h.verify([10, 12], 'key_a', 'VALID', 4);
    const read = h.add('keys.getKey', [20, 22], { keyId: 'key_a' }, { status: 200, keyId: 'key_a', remaining: 5 });
    const v = only(check(h), 'credits.consistent');
    expectWitness(v, read);
  });
});

describe('refills', () => {
  const dayEnd = Date.UTC(2027, 0, 15, 23, 59);
  const nextDay = Date.UTC(2027, 0, 16, 0, 0, 30);
  const at = (ms: number) => [ms, ms] as const;

  function drained(): { h: History; create: HistoryEvent } {
    const h = new History();
    const create = h.create([0, 2], 'key_r', { remaining: 2, refill: { interval: 'daily', amount: 5 } }, at(dayEnd));
    h.verify([10, 12], 'key_r', 'VALID', 1, 1, at(dayEnd + 10));
    h.verify([20, 22], 'key_r', 'VALID', 0, 1, at(dayEnd + 20));
    h.verify([30, 32], 'key_r', 'USAGE_EXCEEDED', 0, 1, at(dayEnd + 30));
    return { h, create };
  }

  test('the first answers after midnight see the refilled amount minus what was spent since', () => {
    const { h } = drained();
    h.verify([40, 42], 'key_r', 'VALID', 4, 1, at(nextDay));
    h.verify([50, 52], 'key_r', 'VALID', 2, 2, at(nextDay + 10));
    expect(check(h).violations).toEqual([]);
  });

  test('a refill not applied at its boundary', () => {
    const { h, create } = drained();
    const after = h.verify([40, 42], 'key_r', 'USAGE_EXCEEDED', 0, 1, at(nextDay));
    const v = only(check(h), 'credits.refill');
    expect(v.message).toMatch(/refused for credits although at least 5 credits were surely left after the daily refill at 2027-01-16T00:00:00.000Z/);
    expect(v.message).toMatch(/not applied at its boundary/);
    expectWitness(v, create, after);
  });

  test('a refill that adds to the balance instead of replacing it', () => {
    const h = new History();
    h.create([0, 2], 'key_r', { remaining: 3, refill: { interval: 'daily', amount: 5 } }, at(dayEnd));
    h.verify([10, 12], 'key_r', 'VALID', 2, 1, at(dayEnd + 10));
    h.verify([20, 22], 'key_r', 'VALID', 1, 1, at(dayEnd + 20));
    // 1 + 5 = 6 − 1: the refill added; replaced, it would be 5 − 1 = 4.
    const after = h.verify([40, 42], 'key_r', 'VALID', 5, 1, at(nextDay));
    const v = only(check(h), 'credits.refill');
    expect(v.message).toMatch(
      /reports 5 credits, but after the daily refill at 2027-01-16T00:00:00.000Z to 5 credits .* at most 4 could be left: a refill replaces the balance/,
    );
    expectWitness(v, after);
  });

  test('a monthly refill on day 31 happens on the last day of February', () => {
    const feb27 = Date.UTC(2027, 1, 27, 12);
    const feb28 = Date.UTC(2027, 1, 28, 0, 0, 1);
    const h = new History();
    h.create([0, 2], 'key_m', { remaining: 1, refill: { interval: 'monthly', amount: 3, refillDay: 31 } }, at(feb27));
    h.verify([10, 12], 'key_m', 'VALID', 0, 1, at(feb27 + 10));
    h.verify([20, 22], 'key_m', 'VALID', 2, 1, at(feb28));
    expect(check(h).violations).toEqual([]);
    const wrong = new History();
    wrong.create([0, 2], 'key_m', { remaining: 1, refill: { interval: 'monthly', amount: 3, refillDay: 31 } }, at(feb27));
    wrong.verify([10, 12], 'key_m', 'VALID', 0, 1, at(feb27 + 10));
    wrong.verify([20, 22], 'key_m', 'USAGE_EXCEEDED', 0, 1, at(feb28));
    only(check(wrong), 'credits.refill');
  });

  test('production compatibility: a refill leaves a balance at or above its amount alone', () => {
    const h = new History();
    h.create([0, 2], 'key_p', { remaining: 8, refill: { interval: 'daily', amount: 5 } }, at(dayEnd));
    h.verify([40, 42], 'key_p', 'VALID', 7, 1, at(nextDay));
    expect(judgeInvariants(h.recorded, { wallSkewMs: 0, refill: 'production' }).violations).toEqual([]);
    only(check(h), 'credits.refill');
  });

  test('without service times, wall times widened by the skew decide which side of a boundary an answer is on', () => {
    const midnight = Date.UTC(2027, 0, 16);
    const wall = (offsetMs: number) => [midnight - T0 + offsetMs, midnight - T0 + offsetMs + 10] as const;
    const h = new History();
    h.create(wall(-5_000), 'key_w', { remaining: 1, refill: { interval: 'daily', amount: 5 } });
    h.verify(wall(-4_000), 'key_w', 'VALID', 0);
    // 50 ms before midnight on the wall: with a 100 ms skew it may be after the boundary, or not.
    h.verify(wall(-60), 'key_w', 'USAGE_EXCEEDED', 0);
    h.verify(wall(-50), 'key_w', 'VALID', 4);
    // 50 ms after: the service may not have reached midnight yet.
    h.verify(wall(50), 'key_w', 'VALID', 3);
    expect(judgeInvariants(h.recorded, { wallSkewMs: 100 }).violations).toEqual([]);
    // 200 ms after midnight is surely after the boundary: a refusal there is a refill not applied.
    const late = new History();
    late.create(wall(-5_000), 'key_w', { remaining: 1, refill: { interval: 'daily', amount: 5 } });
    late.verify(wall(-4_000), 'key_w', 'VALID', 0);
    late.verify(wall(-60), 'key_w', 'USAGE_EXCEEDED', 0);
    late.verify(wall(200), 'key_w', 'USAGE_EXCEEDED', 0);
    only(judgeInvariants(late.recorded, { wallSkewMs: 100 }), 'credits.refill');
  });

  test('an answer whose service bracket straddles the boundary may see either balance', () => {
    const { h } = drained();
    h.verify([40, 42], 'key_r', 'USAGE_EXCEEDED', 0, 1, [dayEnd + 40, nextDay]);
    h.verify([44, 46], 'key_r', 'VALID', 4, 1, [dayEnd + 50, nextDay + 10]);
    expect(check(h).violations).toEqual([]);
  });
});

describe('unknown outcomes and ordering', () => {
  test('a lost verification counts only toward the upper bound of what was spent', () => {
    const h = new History();
    h.create([0, 2], 'key_a', { remaining: 3 });
    const lost = h.lost([10, 1_000], 'key_a');
    h.verify([30, 32], 'key_a', 'VALID', 1);
    h.verify([40, 42], 'key_a', 'VALID', 0);
    h.verify([50, 52], 'key_a', 'USAGE_EXCEEDED', 0);
    expect(check(h).violations).toEqual([]);
    // Without the lost verification the same answers are wrong: it is what makes them legal.
    const withoutLost = new History();
    for (const e of h.events) if (e !== lost) withoutLost.add(e.op, [e.invokeMs - T0, e.completeMs - T0], e.request, e.outcome);
    expect(check(withoutLost).passed).toBe(false);
  });

  test('a lost verification that did not happen does not make later VALID answers an over-spend', () => {
    const h = new History();
    h.create([0, 2], 'key_a', { remaining: 2 });
    h.lost([10, 20], 'key_a');
    h.verify([30, 32], 'key_a', 'VALID', 1);
    h.verify([40, 42], 'key_a', 'VALID', 0);
    expect(check(h).violations).toEqual([]);
  });

  test('a 5xx answer is an unknown outcome; a 4xx answer changed nothing', () => {
    const h = new History();
    h.create([0, 2], 'key_a', { remaining: 2 });
    h.add('keys.verifyKey', [10, 20], { keyId: 'key_a' }, { status: 503 });
    h.verify([30, 32], 'key_a', 'VALID', 0);
    h.verify([40, 42], 'key_a', 'USAGE_EXCEEDED', 0);
    expect(check(h).violations).toEqual([]);
    const h4 = new History();
    h4.create([0, 2], 'key_a', { remaining: 2 });
    h4.add('keys.updateCredits', [5, 6], { keyId: 'key_a', operation: 'set', value: 50 }, { status: 400, error: 'application:invalid_input' });
    h4.verify([10, 12], 'key_a', 'VALID', 1);
    h4.verify([20, 22], 'key_a', 'VALID', 0);
    h4.verify([30, 32], 'key_a', 'VALID', 0);
    only(check(h4), 'credits.no-over-spend');
  });

  test('completions out of invoke order: a long call that completes last may have taken effect last', () => {
    const h = new History();
    h.create([0, 2], 'key_a', { remaining: 5 });
    h.verify([10, 100], 'key_a', 'VALID', 3); // invoked first, answered last
    h.verify([20, 30], 'key_a', 'VALID', 4);
    expect(check(h).violations).toEqual([]);
    // The checker does not depend on the order of the events it is given.
    expect(judgeInvariants([...h.recorded].reverse(), { wallSkewMs: 0 }).violations).toEqual([]);
    const wrong = new History();
    wrong.create([0, 2], 'key_a', { remaining: 5 });
    wrong.verify([10, 100], 'key_a', 'VALID', 4);
    wrong.verify([20, 30], 'key_a', 'VALID', 4);
    only(check(wrong), 'credits.consistent');
  });

  test('a verification that completed before another was sent took effect first', () => {
    const h = new History();
    h.create([0, 2], 'key_a', { remaining: 5 });
    h.verify([10, 20], 'key_a', 'VALID', 3);
    h.verify([30, 40], 'key_a', 'VALID', 4); // surely after: 4 is too much
    expect(check(h).passed).toBe(false);
  });
});

// ── properties over histories recorded from the real engine ───────────────────────────────

/** Records engine calls as HistoryEvents, with the same conversions the runner uses. */
class EngineRecorder {
  readonly fx: EngineFixture;
  readonly keys = new KeyDirectory();
  readonly events: HistoryEvent[] = [];
  #seq = 0;

  constructor(startMs: number, compat: Compat = 'interface') {
    this.fx = makeEngine({ startMs, compat });
    unwrap(this.fx.engine.admin.createNamespace(this.fx.workspaceId, 'ns'));
  }

  nextSeq(): number {
    return this.#seq++;
  }

  call(op: Operation, body: unknown): Result<unknown> {
    const { engine, rootKey } = this.fx;
    const anyBody = body as never;
    switch (op) {
      case 'keys.createKey':
        return engine.keys.createKey(rootKey, anyBody);
      case 'keys.verifyKey':
        // Production verifies with a root key only; the interface document without one.
        return engine.keys.verifyKey(engine.compat === 'production' ? rootKey : undefined, anyBody);
      case 'keys.updateCredits':
        return engine.keys.updateCredits(rootKey, anyBody);
      case 'keys.updateKey':
        return engine.keys.updateKey(rootKey, anyBody);
      case 'keys.getKey':
        return engine.keys.getKey(rootKey, anyBody);
      case 'ratelimit.limit':
        return engine.ratelimit.limit(rootKey, anyBody);
      case 'ratelimit.setOverride':
        return engine.ratelimit.setOverride(rootKey, anyBody);
      case 'ratelimit.deleteOverride':
        return engine.ratelimit.deleteOverride(rootKey, anyBody);
      default:
        throw new Error(`test bug: ${op} is not simulated`);
    }
  }

  /** The answer as HTTP would carry it. */
  static response(result: Result<unknown>): { status: number; body: unknown } {
    if (result.ok) return { status: 200, body: { meta: { requestId: 'req_test' }, data: result.value } };
    const [category, name] = result.error.code.replace('err:service:', '').split(':');
    return { status: name === 'key_not_found' ? 404 : 400, body: { error: { type: `https://errors.test/service/${category}/${name}` } } };
  }

  record(
    seq: number,
    op: Operation,
    body: unknown,
    wall: readonly [number, number],
    service: readonly [number, number],
    response: { status: number; body: unknown } | 'unknown',
  ): HistoryEvent {
    if (response !== 'unknown') this.keys.observe(op, body, response.status, response.body);
    const event: HistoryEvent = {
      seq,
      op,
      invokeMs: wall[0],
      completeMs: wall[1],
      serviceInvokeMs: service[0],
      serviceCompleteMs: service[1],
      request: historyRequest(op, body, (k) => this.keys.keyIdOf(k)),
      outcome: response === 'unknown' ? 'unknown' : historyOutcome(op, response.status, response.body),
    };
    this.events.push(event);
    return event;
  }

  /** In completion order, as a recording writes them. */
  get recorded(): HistoryEvent[] {
    return [...this.events].sort((a, b) => a.completeMs - b.completeMs || a.seq - b.seq);
  }
}

const W0 = 1_800_000_000_000;

type Fate = 'ok' | 'lost-applied' | 'lost-dropped';

interface PlannedOp {
  seq: number;
  op: Operation;
  body: () => unknown;
  inv: number;
  comp: number;
  point: number;
  fate: Fate;
  /** Filled after execution. */
  response?: { status: number; body: unknown };
}

/**
 * Executes planned operations on the engine in the order of their linearisation points (each
 * inside its interval: an order consistent with real time), with the service clock at
 * `serviceAt(point)`, and records them. `after` runs right after an operation, at the same
 * instant (for injected faults).
 */
function execute(
  rec: EngineRecorder,
  planned: PlannedOp[],
  serviceAt: (wallMs: number) => number,
  after?: (p: PlannedOp, result: Result<unknown>) => void,
): void {
  const order = planned.filter((p) => p.fate !== 'lost-dropped').sort((a, b) => a.point - b.point || a.seq - b.seq);
  for (const p of order) {
    rec.fx.clock.set(Math.max(rec.fx.clock.now(), serviceAt(p.point)));
    const result = rec.call(p.op, p.body());
    p.response = EngineRecorder.response(result);
    after?.(p, result);
  }
  for (const p of planned) {
    const response = p.fate === 'ok' ? p.response : 'unknown';
    if (response === undefined) throw new Error('test bug: an answered operation did not run');
    rec.record(p.seq, p.op, p.body(), [p.inv, p.comp], [serviceAt(p.inv), serviceAt(p.comp)], response);
  }
}

const intervalArb = fc.record({ gapMs: fc.nat(40), durationMs: fc.integer({ min: 1, max: 120 }), at: fc.double({ min: 0, max: 1, noNaN: true }) });

function place(startMs: number, iv: { gapMs: number; durationMs: number; at: number }): { inv: number; comp: number; point: number } {
  const inv = startMs + iv.gapMs;
  const comp = inv + iv.durationMs;
  return { inv, comp, point: inv + Math.floor(iv.at * (comp - inv)) };
}

function describeFailure(report: InvariantReport): string {
  return JSON.stringify(
    report.violations.map((v) => ({ invariant: v.invariant, subject: v.subject, message: v.message, witness: v.witness.map((e) => e.seq) })),
    null,
    1,
  );
}

describe('properties: histories recorded from the real engine', () => {
  const refillArb = fc.oneof(
    { arbitrary: fc.constant(null), weight: 3 },
    { arbitrary: fc.record({ interval: fc.constant('daily' as const), amount: fc.integer({ min: 1, max: 6 }) }), weight: 3 },
    {
      arbitrary: fc.record({ interval: fc.constant('monthly' as const), amount: fc.integer({ min: 1, max: 6 }), refillDay: fc.constantFrom(1, 15, 28, 31) }),
      weight: 1,
    },
  );
  const keyArb = fc.record({
    remaining: fc.option(fc.nat(6), { nil: null, freq: 8 }),
    refill: refillArb,
    burst: fc.option(fc.record({ limit: fc.integer({ min: 1, max: 3 }), duration: fc.constantFrom(1000, 2000) }), { nil: undefined }),
  });
  const opArb = fc.record({
    kind: fc.oneof(
      { arbitrary: fc.constant('verify' as const), weight: 12 },
      { arbitrary: fc.constant('updateCredits' as const), weight: 2 },
      { arbitrary: fc.constant('updateKey' as const), weight: 1 },
      { arbitrary: fc.constant('getKey' as const), weight: 1 },
      { arbitrary: fc.constant('limit' as const), weight: 5 },
      { arbitrary: fc.constant('override' as const), weight: 1 },
      { arbitrary: fc.constant('jump' as const), weight: 2 },
    ),
    key: fc.nat(2),
    cost: fc.nat(3),
    value: fc.nat(6),
    pick: fc.nat(5),
    iv: intervalArb,
    fate: fc.oneof(
      { arbitrary: fc.constant<Fate>('ok'), weight: 18 },
      { arbitrary: fc.constant<Fate>('lost-applied'), weight: 1 },
      { arbitrary: fc.constant<Fate>('lost-dropped'), weight: 1 },
    ),
    jumpMs: fc.constantFrom(1_800_000, 21_600_000, 86_400_000, 15 * 86_400_000, 40 * 86_400_000),
  });

  /**
   * 'service': the simulator's clock, started near a month end and moved forward by jumps, its
   * bracket recorded. 'wall': a live target whose clock is the wall clock (started a second before
   * February), recorded without service times and checked with a skew allowance.
   */
  const clockArb = fc.oneof(
    fc.record({
      mode: fc.constant('service' as const),
      s0: fc.constantFrom(Date.UTC(2027, 0, 31, 22), Date.UTC(2027, 1, 27, 23, 30), Date.UTC(2028, 1, 28, 23)),
      skewMs: fc.constant(0),
    }),
    fc.record({ mode: fc.constant('wall' as const), s0: fc.constant(Date.UTC(2027, 0, 31, 23, 59, 59)), skewMs: fc.constantFrom(0, 37) }),
  );

  test('a correct service is never flagged, whatever the concurrency, refills, updates and lost answers', () => {
    assertProperty(
      fc.property(
        fc.array(keyArb, { minLength: 1, maxLength: 3 }),
        fc.array(opArb, { minLength: 5, maxLength: 60 }),
        clockArb,
        fc.constantFrom<Compat>('interface', 'interface', 'production'),
        (keys, ops, clock, compat) => {
          const { s0 } = clock;
          const rec = new EngineRecorder(s0, compat);
          const { apiId } = rec.fx;
          const jumps: Array<{ atMs: number; byMs: number }> = [];
          const serviceAt = (w: number) => s0 + (w - W0) + jumps.reduce((n, j) => (j.atMs <= w ? n + j.byMs : n), 0);
          const plaintexts: string[] = [];
          const keyIds: string[] = [];
          const plaintextOf = (i: number) => plaintexts[i % plaintexts.length] as string;
          const keyIdOf = (i: number) => keyIds[i % keyIds.length] as string;
          const planned: PlannedOp[] = [];
          let t = W0;
          // Keys first, one after another, so every later call can name them.
          for (const k of keys) {
            const credits = k.remaining === null ? undefined : k.refill === null ? { remaining: k.remaining } : { remaining: k.remaining, refill: k.refill };
            const body = {
              apiId,
              ...(credits === undefined ? {} : { credits }),
              ...(k.burst === undefined ? {} : { externalId: 'shared', ratelimits: [{ name: 'burst', ...k.burst, autoApply: true }] }),
            };
            const p: PlannedOp = { seq: rec.nextSeq(), op: 'keys.createKey', body: () => body, inv: t, comp: t + 2, point: t + 1, fate: 'ok' };
            planned.push(p);
            t += 3;
          }
          execute(rec, planned.splice(0), serviceAt, (_p, result) => {
            const value = unwrap(result) as { keyId: string; key: string };
            plaintexts.push(value.key);
            keyIds.push(value.keyId);
          });
          for (const o of ops) {
            const { inv, comp, point } = place(t, o.iv);
            t = inv;
            let op: Operation;
            let body: unknown;
            switch (o.kind) {
              case 'jump':
                if (clock.mode === 'service') jumps.push({ atMs: inv, byMs: o.jumpMs });
                continue;
              case 'verify':
                op = 'keys.verifyKey';
                body = { key: plaintextOf(o.key), credits: { cost: o.cost } };
                break;
              case 'updateCredits':
                op = 'keys.updateCredits';
                body = { keyId: keyIdOf(o.key), operation: (['set', 'increment', 'decrement'] as const)[o.pick % 3], value: o.value };
                break;
              case 'updateKey': {
                op = 'keys.updateKey';
                const choices = [
                  { remaining: o.value },
                  { refill: null },
                  { refill: { interval: 'daily', amount: o.value + 1 } },
                  null,
                  { remaining: o.value, refill: { interval: 'monthly', amount: o.value + 1, refillDay: 31 } },
                ];
                body = { keyId: keyIdOf(o.key), credits: choices[o.pick % choices.length] };
                break;
              }
              case 'getKey':
                op = 'keys.getKey';
                body = { keyId: keyIdOf(o.key) };
                break;
              case 'limit':
                op = 'ratelimit.limit';
                body = {
                  namespace: 'ns',
                  identifier: ['a', 'b1', 'b2'][o.key % 3],
                  limit: 1 + (o.value % 4),
                  duration: o.pick % 2 === 0 ? 1000 : 2000,
                  cost: o.cost % 3,
                };
                break;
              case 'override':
                if (o.pick % 3 === 0) {
                  op = 'ratelimit.deleteOverride';
                  body = { namespace: 'ns', identifier: o.key % 2 === 0 ? 'a' : 'b*' };
                } else {
                  op = 'ratelimit.setOverride';
                  body = { namespace: 'ns', identifier: o.key % 2 === 0 ? 'a' : 'b*', limit: o.value % 4, duration: o.pick % 2 === 0 ? 1000 : 3000 };
                }
                break;
            }
            const fixed = body;
            planned.push({ seq: rec.nextSeq(), op, body: () => fixed, inv, comp, point, fate: o.fate });
          }
          execute(rec, planned, serviceAt);
          const events = rec.recorded.map((e) => {
            if (clock.mode === 'service') return e;
            // A live target: wall times only (shifted so that the wall clock is the service clock).
            const { serviceInvokeMs: _i, serviceCompleteMs: _c, ...rest } = e;
            return { ...rest, invokeMs: e.invokeMs + s0 - W0, completeMs: e.completeMs + s0 - W0 };
          });
          const report = judgeInvariants(events, { wallSkewMs: clock.skewMs, refill: compat === 'production' ? 'production' : 'replace' });
          if (!report.passed) throw new Error(`a correct service was flagged:\n${describeFailure(report)}\n${JSON.stringify(events, null, 0)}`);
        },
      ),
      { numRuns: 250 },
    );
  });

  /** One key, `budget` credits, concurrent verifications (optionally a refill in between). */
  interface Batch {
    costs: number[];
    ivs: Array<{ gapMs: number; durationMs: number; at: number }>;
  }
  const batchArb = (minCost: number, maxCost: number) =>
    fc.integer({ min: 1, max: 10 }).chain((n) =>
      fc.record({
        costs: fc.array(fc.integer({ min: minCost, max: maxCost }), { minLength: n, maxLength: n }),
        ivs: fc.array(intervalArb, { minLength: n, maxLength: n }),
      }),
    );

  function plan(rec: EngineRecorder, batch: Batch, startMs: number, plaintext: string): { planned: PlannedOp[]; endMs: number } {
    const planned: PlannedOp[] = [];
    let t = startMs;
    let end = startMs;
    for (const [i, cost] of batch.costs.entries()) {
      const { inv, comp, point } = place(t, batch.ivs[i] as (typeof batch.ivs)[number]);
      t = inv;
      end = Math.max(end, comp);
      planned.push({ seq: rec.nextSeq(), op: 'keys.verifyKey', body: () => ({ key: plaintext, credits: { cost } }), inv, comp, point, fate: 'ok' });
    }
    return { planned, endMs: end };
  }

  function createKey(rec: EngineRecorder, credits: unknown, serviceAt: (w: number) => number): { keyId: string; plaintext: string } {
    let created: { keyId: string; key: string } | undefined;
    execute(
      rec,
      [{ seq: rec.nextSeq(), op: 'keys.createKey', body: () => ({ apiId: rec.fx.apiId, credits }), inv: W0, comp: W0 + 2, point: W0 + 1, fate: 'ok' }],
      serviceAt,
      (_p, r) => {
        created = unwrap(r) as { keyId: string; key: string };
      },
    );
    if (created === undefined) throw new Error('test bug');
    return { keyId: created.keyId, plaintext: created.key };
  }

  /** Sequential cost-1 verifications until the first refusal. */
  function drain(
    rec: EngineRecorder,
    startMs: number,
    plaintext: string,
    serviceAt: (w: number) => number,
    after?: (p: PlannedOp, r: Result<unknown>) => void,
  ): number {
    let t = startMs;
    for (let i = 0; i < 50; i++) {
      const p: PlannedOp = {
        seq: rec.nextSeq(),
        op: 'keys.verifyKey',
        body: () => ({ key: plaintext, credits: { cost: 1 } }),
        inv: t + 1,
        comp: t + 3,
        point: t + 2,
        fate: 'ok',
      };
      let refused = false;
      execute(rec, [p], serviceAt, (q, r) => {
        after?.(q, r);
        refused = (unwrap(r) as { code: string }).code !== 'VALID';
      });
      t += 4;
      if (refused) return t;
    }
    throw new Error('test bug: the key never ran out');
  }

  test('a USAGE_EXCEEDED flipped to VALID is always caught', () => {
    assertProperty(
      fc.property(fc.nat(5), batchArb(1, 3), fc.nat(), (budget, batch, pick) => {
        fc.pre(batch.costs.reduce((a, b) => a + b, 0) > budget);
        const s0 = Date.UTC(2027, 0, 15, 12);
        const serviceAt = (w: number) => s0 + (w - W0);
        const rec = new EngineRecorder(s0);
        const { plaintext } = createKey(rec, { remaining: budget }, serviceAt);
        execute(rec, plan(rec, batch, W0 + 5, plaintext).planned, serviceAt);
        const clean = judgeInvariants(rec.recorded, { wallSkewMs: 0 });
        if (!clean.passed) throw new Error(`a correct service was flagged:\n${describeFailure(clean)}`);
        const refused = rec.events.filter((e) => e.outcome !== 'unknown' && e.outcome.code === 'USAGE_EXCEEDED');
        const victim = refused[pick % refused.length] as HistoryEvent;
        victim.outcome = { ...(victim.outcome as HistoryOutcome), code: 'VALID', valid: true };
        const report = judgeCreditInvariants(rec.recorded, { wallSkewMs: 0 });
        expect(report.violations.length, 'the flipped answer went unnoticed').toBeGreaterThan(0);
        expect(report.violations.map((v) => v.invariant)).toContain('credits.no-over-spend');
      }),
      { numRuns: 200 },
    );
  });

  test('a skipped decrement is always caught once the key is drained', () => {
    assertProperty(
      fc.property(fc.integer({ min: 1, max: 6 }), batchArb(1, 3), fc.nat(), (budget, batch, pick) => {
        const s0 = Date.UTC(2027, 0, 15, 12);
        const serviceAt = (w: number) => s0 + (w - W0);
        const rec = new EngineRecorder(s0);
        const { keyId, plaintext } = createKey(rec, { remaining: budget }, serviceAt);
        const { planned, endMs } = plan(rec, batch, W0 + 5, plaintext);
        // Which VALID answer (in execution order) loses its decrement.
        let valids = 0;
        let lost = false;
        execute(rec, planned, serviceAt, (p, r) => {
          const out = unwrap(r) as { code: string };
          if (out.code !== 'VALID') return;
          if (!lost && valids++ === pick % 3) {
            lost = true;
            const cost = (p.body() as { credits: { cost: number } }).credits.cost;
            unwrap(rec.fx.engine.keys.updateCredits(rec.fx.rootKey, { keyId, operation: 'increment', value: cost }));
          }
        });
        fc.pre(lost);
        drain(rec, endMs, plaintext, serviceAt);
        const report = judgeCreditInvariants(rec.recorded, { wallSkewMs: 0 });
        expect(report.violations.length, 'the lost decrement went unnoticed').toBeGreaterThan(0);
      }),
      { numRuns: 200 },
    );
  });

  test('a skipped refill is always caught by the first answers after the boundary', () => {
    assertProperty(
      fc.property(fc.nat(4), fc.integer({ min: 1, max: 5 }), batchArb(1, 3), batchArb(1, 5), fc.boolean(), (budget, amount, before, after, skip) => {
        const dayEnd = Date.UTC(2027, 0, 15, 23, 50);
        const nextDay = Date.UTC(2027, 0, 16, 0, 5);
        const jumpAt = W0 + 100_000;
        const serviceAt = (w: number) => (w < jumpAt ? dayEnd + (w - W0) : nextDay + (w - jumpAt));
        const rec = new EngineRecorder(dayEnd);
        const { keyId, plaintext } = createKey(rec, { remaining: budget, refill: { interval: 'daily', amount } }, serviceAt);
        const first = plan(rec, before, W0 + 5, plaintext);
        execute(rec, first.planned, serviceAt);
        drain(rec, first.endMs, plaintext, serviceAt);
        if (skip) {
          // The service forgets the refill: it settles the boundary but keeps the old balance (0).
          rec.fx.clock.set(nextDay);
          unwrap(rec.fx.engine.keys.updateCredits(rec.fx.rootKey, { keyId, operation: 'set', value: 0 }));
        }
        const costs = after.costs.map((c) => Math.min(c, amount));
        execute(rec, plan(rec, { ...after, costs }, jumpAt + 10, plaintext).planned, serviceAt);
        const report = judgeCreditInvariants(rec.recorded, { wallSkewMs: 0 });
        if (!skip) {
          if (report.violations.length > 0) throw new Error(`a correct service was flagged:\n${describeFailure({ ...report, passed: false, invariants: [] })}`);
          return;
        }
        expect(
          report.violations.map((v) => v.invariant),
          'the skipped refill went unnoticed',
        ).toContain('credits.refill');
      }),
      { numRuns: 200 },
    );
  });
});
