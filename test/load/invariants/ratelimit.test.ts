/**
 * The rate-limit checkers: hand-made histories (clean sequential and concurrent ones pass; over-
 * admission in a window, the sliding window's previous weight, an override's limit, a denial
 * while the window was surely not full, cost 0 denied; unknown outcomes only widen the upper
 * bound; verification limits shared by an identity; multiLimit), then properties over the real
 * engine: a correct service is never flagged, and a flipped decision always is.
 */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import type { Result } from '../../../src/engine/index.js';
import { type InvariantReport, type InvariantId, type Violation, judgeRateLimitInvariants } from '../../../src/load/invariants/judge.js';
import { type HistoryEvent, type HistoryOutcome, type HistoryRequest, historyOutcome, historyRequest } from '../../../src/load/history/history.js';
import type { Operation } from '../../../src/load/scenario/scenario.js';
import { makeEngine, unwrap } from '../../helpers/engine.js';
import { assertProperty } from '../../helpers/property.js';

/** 2027-01-15T12:00:00Z: aligned to every window length used here. */
const T0 = Date.UTC(2027, 0, 15, 12);
const MINUTE = 60_000;

class History {
  readonly events: HistoryEvent[] = [];
  #seq = 0;

  /** `at` is a wall offset from T0; the service clock is the same instant unless `service` says otherwise. */
  add(
    op: Operation,
    at: readonly [number, number],
    request: HistoryRequest,
    outcome: HistoryOutcome | 'unknown',
    service?: readonly [number, number],
  ): HistoryEvent {
    const [sInv, sComp] = service ?? [T0 + at[0], T0 + at[1]];
    const event: HistoryEvent = {
      seq: this.#seq++,
      op,
      invokeMs: T0 + at[0],
      completeMs: T0 + at[1],
      serviceInvokeMs: sInv,
      serviceCompleteMs: sComp,
      request,
      outcome,
    };
    this.events.push(event);
    return event;
  }

  limit(
    at: readonly [number, number],
    identifier: string,
    success: boolean | 'unknown',
    o: { limit?: number; duration?: number; cost?: number; effective?: number; overrideId?: string; service?: readonly [number, number] } = {},
  ): HistoryEvent {
    const limit = o.limit ?? 3;
    const duration = o.duration ?? MINUTE;
    const request: HistoryRequest = { namespace: 'ns', identifier, limit, duration };
    if (o.cost !== undefined) request.cost = o.cost;
    const sAt = o.service?.[0] ?? T0 + at[0];
    const outcome: HistoryOutcome | 'unknown' =
      success === 'unknown'
        ? 'unknown'
        : {
            status: 200,
            limit: o.effective ?? limit,
            remaining: 0,
            reset: (Math.floor(sAt / duration) + 1) * duration,
            success,
            ...(o.overrideId === undefined ? {} : { overrideId: o.overrideId }),
          };
    return this.add('ratelimit.limit', at, request, outcome, o.service);
  }

  setOverride(at: readonly [number, number], identifier: string, limit: number, duration = MINUTE, overrideId = 'rlor_1'): HistoryEvent {
    return this.add('ratelimit.setOverride', at, { namespace: 'ns', identifier, limit, duration }, { status: 200, overrideId });
  }

  get recorded(): HistoryEvent[] {
    return [...this.events].sort((a, b) => a.completeMs - b.completeMs || a.seq - b.seq);
  }
}

function check(h: History): InvariantReport & { passed: boolean } {
  const result = judgeRateLimitInvariants(h.recorded);
  return { ...result, passed: result.violations.length === 0, invariants: [] };
}

function only(report: InvariantReport, invariant: InvariantId): Violation {
  const found = report.violations.filter((v) => v.invariant === invariant);
  expect(found, `expected one ${invariant} violation, got ${JSON.stringify(report.violations.map((v) => [v.invariant, v.message]))}`).toHaveLength(1);
  return found[0] as Violation;
}

function expectWitness(v: Violation, ...events: HistoryEvent[]): void {
  expect(v.witness.length).toBeGreaterThan(0);
  expect(v.witness.length).toBeLessThanOrEqual(6);
  for (const e of v.witness) expect(e.completeMs).toBeGreaterThanOrEqual(e.invokeMs);
  const seqs = v.witness.map((e) => e.seq);
  for (const e of events) expect(seqs).toContain(e.seq);
}

describe('ratelimit.limit', () => {
  test('clean, sequential: three admitted, then denied until the next window', () => {
    const h = new History();
    for (let i = 0; i < 5; i++) h.limit([i * 10, i * 10 + 2], 'user-1', i < 3);
    // Next window: the previous one weighs floor(3 · (1 − 0.5)) = 1, so two more fit.
    h.limit([MINUTE + 30_000, MINUTE + 30_002], 'user-1', true);
    h.limit([MINUTE + 30_010, MINUTE + 30_012], 'user-1', true);
    h.limit([MINUTE + 30_020, MINUTE + 30_022], 'user-1', false);
    const report = check(h);
    expect(report.violations).toEqual([]);
    expect(report.checked.rateLimitChecks).toBe(8);
  });

  test('clean, concurrent: six overlapping requests on a limit of 3, answered in any order', () => {
    const h = new History();
    const answers = [false, true, false, true, true, false];
    for (const [i, success] of answers.entries()) h.limit([100 + i, 300 - i * 7], 'user-1', success);
    expect(check(h).violations).toEqual([]);
  });

  test('over-admission: four admitted in one window with a limit of 3', () => {
    const h = new History();
    const admitted = [0, 1, 2, 3].map((i) => h.limit([i * 10, i * 10 + 2], 'user-1', true));
    const v = only(check(h), 'ratelimit.no-over-admission');
    expect(v.subject).toBe('ns/user-1');
    expect(v.message).toMatch(/total cost of 4 were admitted in the window 2027-01-15T12:00:00.000Z … 2027-01-15T12:01:00.000Z, but the effective limit is 3/);
    expectWitness(v, admitted[0] as HistoryEvent, admitted[3] as HistoryEvent);
  });

  test('over-admission through the previous window: the sliding weight is part of the limit', () => {
    const h = new History();
    for (let i = 0; i < 3; i++) h.limit([MINUTE - 100 + i * 10, MINUTE - 98 + i * 10], 'user-1', true);
    // 0.6 s into the next window the previous one still weighs floor(3 · 0.99) = 2: one more fits, not two.
    h.limit([MINUTE + 600, MINUTE + 602], 'user-1', true);
    const second = h.limit([MINUTE + 700, MINUTE + 702], 'user-1', true);
    const v = only(check(h), 'ratelimit.no-over-admission');
    expect(v.message).toMatch(/previous window still weighed at least 2/);
    expectWitness(v, second);
  });

  test('an admission late in a wide bracket is judged with the lowest weight the bracket allows', () => {
    const h = new History();
    h.limit([MINUTE - 20, MINUTE - 18], 'user-1', true, { limit: 2 });
    h.limit([MINUTE - 10, MINUTE - 8], 'user-1', true, { limit: 2 });
    // Sent 0.1 s into the next window (the previous one weighs 1 there), answered at 0.9 s (it
    // weighs 0): admitted with cost 2, so the service decided late in the bracket. Legal.
    h.limit([MINUTE + 6_000, MINUTE + 54_000], 'user-1', true, { limit: 2, cost: 2 });
    expect(check(h).violations).toEqual([]);
  });

  test('an override replaces the limit: the request asks 10, the override allows 1', () => {
    const clean = new History();
    clean.setOverride([0, 2], 'user-1', 1);
    clean.limit([10, 12], 'user-1', true, { limit: 10, effective: 1, overrideId: 'rlor_1' });
    clean.limit([20, 22], 'user-1', false, { limit: 10, effective: 1, overrideId: 'rlor_1' });
    expect(check(clean).violations).toEqual([]);

    const h = new History();
    const override = h.setOverride([0, 2], 'user-1', 1);
    h.limit([10, 12], 'user-1', true, { limit: 10 });
    const second = h.limit([20, 22], 'user-1', true, { limit: 10 });
    const v = only(check(h), 'ratelimit.no-over-admission');
    expect(v.message).toMatch(/limit 1|effective limit is 1/);
    expectWitness(v, override, second);
  });

  test('a wildcard override applies; an exact one beats it; a deleted one no longer applies', () => {
    const h = new History();
    h.setOverride([0, 2], 'user-*', 1, MINUTE, 'rlor_w');
    h.limit([10, 12], 'user-7', true, { limit: 10 });
    h.limit([20, 22], 'user-7', true, { limit: 10 });
    only(check(h), 'ratelimit.no-over-admission');

    const exact = new History();
    exact.setOverride([0, 2], 'user-*', 1, MINUTE, 'rlor_w');
    exact.setOverride([3, 4], 'user-7', 5, MINUTE, 'rlor_e');
    for (let i = 0; i < 5; i++) exact.limit([10 + i * 10, 12 + i * 10], 'user-7', true, { limit: 10 });
    expect(check(exact).violations).toEqual([]);

    const deleted = new History();
    deleted.setOverride([0, 2], 'user-1', 1);
    deleted.add('ratelimit.deleteOverride', [3, 4], { namespace: 'ns', identifier: 'user-1' }, { status: 200 });
    for (let i = 0; i < 3; i++) deleted.limit([10 + i * 10, 12 + i * 10], 'user-1', true);
    expect(check(deleted).violations).toEqual([]);
    // Deleted, the request's own limit (3) is back in force.
    deleted.limit([50, 52], 'user-1', true);
    expect(only(check(deleted), 'ratelimit.no-over-admission').message).toMatch(/effective limit is 3/);
  });

  test('an override the history never set is taken as the answers report it', () => {
    const h = new History();
    h.limit([0, 2], 'user-1', true, { limit: 10, effective: 1, overrideId: 'rlor_old' });
    const second = h.limit([10, 12], 'user-1', true, { limit: 10, effective: 1, overrideId: 'rlor_old' });
    const v = only(check(h), 'ratelimit.no-over-admission');
    expect(v.message).toMatch(/window ending 2027-01-15T12:01:00.000Z, but the effective limit is 1/);
    expectWitness(v, second);
    // Once it is gone, the service's counter may still hold what it admitted: denials are not judged.
    const gone = new History();
    gone.limit([0, 2], 'user-1', true, { limit: 1, effective: 1, overrideId: 'rlor_old' });
    gone.limit([10, 12], 'user-1', false, { limit: 1 });
    expect(check(gone).violations).toEqual([]);
  });

  test('an override set concurrently with requests may or may not apply to them', () => {
    const h = new History();
    h.setOverride([0, 100], 'user-1', 1);
    for (let i = 0; i < 3; i++) h.limit([10 + i, 20 + i], 'user-1', true);
    expect(check(h).violations).toEqual([]);
  });

  test('a denial while the window was surely not full', () => {
    const h = new History();
    const admitted = h.limit([0, 2], 'user-1', true);
    const denied = h.limit([10, 12], 'user-1', false);
    const v = only(check(h), 'ratelimit.no-false-denial');
    expect(v.message).toMatch(/#1 was denied \(cost 1\) although at most 1 of the limit 3 could have been used/);
    expectWitness(v, admitted, denied);
    // Cost 0 never fails.
    const zero = new History();
    zero.limit([0, 2], 'user-1', false, { cost: 0 });
    expect(only(check(zero), 'ratelimit.no-false-denial').message).toMatch(/cost 0/);
  });

  test('a denial concurrent with the requests that filled the window is legal', () => {
    const h = new History();
    h.limit([0, 50], 'user-1', false);
    for (let i = 0; i < 3; i++) h.limit([10 + i, 20 + i], 'user-1', true);
    expect(check(h).violations).toEqual([]);
  });

  test('a request without an answer counts toward the upper bound only', () => {
    const h = new History();
    h.limit([0, 2], 'user-1', true, { limit: 2 });
    const lost = h.limit([5, 10_000], 'user-1', 'unknown', { limit: 2 });
    h.limit([20, 22], 'user-1', false, { limit: 2 });
    h.limit([30, 32], 'user-1', true, { limit: 3 });
    expect(check(h).violations).toEqual([]);
    const without = new History();
    for (const e of h.events) if (e !== lost) without.add(e.op, [e.invokeMs - T0, e.completeMs - T0], e.request, e.outcome);
    only(check(without), 'ratelimit.no-false-denial');
  });

  test('a request whose service bracket crosses a window boundary is placed by its reset, or in either window', () => {
    const h = new History();
    for (let i = 0; i < 3; i++) h.limit([MINUTE - 500 + i, MINUTE - 400 + i], 'user-1', true);
    // Service bracket across 12:01:00; reset says the earlier window.
    const across = h.limit([MINUTE - 10, MINUTE + 10], 'user-1', false, { service: [T0 + MINUTE - 10, T0 + MINUTE + 10] });
    expect(across.outcome).toMatchObject({ reset: T0 + MINUTE });
    expect(check(h).violations).toEqual([]);
    // Without a reset the request could be in either window; in the later one, the previous weighs 2 at most → 3 ≥ 3 legal.
    const noReset = new History();
    for (const e of h.events) {
      const outcome = e === across ? { status: 200, success: false, limit: 3, remaining: 0 } : e.outcome;
      noReset.add(e.op, [e.invokeMs - T0, e.completeMs - T0], e.request, outcome, [e.serviceInvokeMs as number, e.serviceCompleteMs as number]);
    }
    expect(check(noReset).violations).toEqual([]);
  });

  test('multiLimit is all or nothing: a denial is legal when one entry was full', () => {
    const h = new History();
    h.limit([0, 2], 'a', true, { limit: 1 });
    const multi = (at: readonly [number, number], passedA: boolean, passedB: boolean, success: boolean) =>
      h.add(
        'ratelimit.multiLimit',
        at,
        {
          limits: [
            { namespace: 'ns', identifier: 'a', limit: 1, duration: MINUTE },
            { namespace: 'ns', identifier: 'b', limit: 1, duration: MINUTE },
          ],
        },
        {
          status: 200,
          success,
          limits: [
            { namespace: 'ns', identifier: 'a', limit: 1, remaining: 0, reset: T0 + MINUTE, passed: passedA },
            { namespace: 'ns', identifier: 'b', limit: 1, remaining: 0, reset: T0 + MINUTE, passed: passedB },
          ],
        },
      );
    multi([10, 12], false, true, false);
    expect(check(h).violations).toEqual([]);
    // b was named exceeded, but nothing had used b.
    const wrong = multi([20, 22], true, false, false);
    expectWitness(only(check(h), 'ratelimit.no-false-denial'), wrong);
  });
});

describe('verification limits', () => {
  function verify(h: History, at: readonly [number, number], keyId: string, code: string, exceeded: boolean, used: number): HistoryEvent {
    return h.add(
      'keys.verifyKey',
      at,
      { keyId },
      {
        status: 200,
        code,
        valid: code === 'VALID',
        keyId,
        ratelimits: [{ id: 'rl_shared', name: 'per-user', limit: 2, duration: 1000, reset: T0 + 1000, remaining: Math.max(0, 2 - used), exceeded }],
      },
    );
  }

  test('an identity limit is shared by its keys: three admitted across two keys exceed a limit of 2', () => {
    const h = new History();
    verify(h, [0, 2], 'key_a', 'VALID', false, 1);
    verify(h, [10, 12], 'key_b', 'USAGE_EXCEEDED', false, 2);
    const third = verify(h, [20, 22], 'key_a', 'VALID', false, 3);
    const v = only(check(h), 'ratelimit.no-over-admission');
    expect(v.subject).toBe('per-user (rl_shared)');
    expectWitness(v, third);
  });

  test('RATE_LIMITED is legal when the shared limit was used up, and caught when it was not', () => {
    const h = new History();
    verify(h, [0, 2], 'key_a', 'VALID', false, 1);
    verify(h, [10, 12], 'key_b', 'VALID', false, 2);
    verify(h, [20, 22], 'key_a', 'RATE_LIMITED', true, 2);
    expect(check(h).violations).toEqual([]);
    const wrong = new History();
    verify(wrong, [0, 2], 'key_a', 'VALID', false, 1);
    const denied = verify(wrong, [20, 22], 'key_b', 'RATE_LIMITED', true, 1);
    expectWitness(only(check(wrong), 'ratelimit.no-false-denial'), denied);
  });

  test('a verification without an answer may have used the limits its key is seen with', () => {
    const h = new History();
    verify(h, [0, 2], 'key_a', 'VALID', false, 1);
    h.add('keys.verifyKey', [5, 5_000], { keyId: 'key_a' }, 'unknown');
    verify(h, [20, 22], 'key_a', 'RATE_LIMITED', true, 2);
    expect(check(h).violations).toEqual([]);
  });
});

// ── properties over the real engine ───────────────────────────────────────────────────────

function answer(result: Result<unknown>): { status: number; body: unknown } {
  if (result.ok) return { status: 200, body: { data: result.value } };
  const [category, name] = result.error.code.replace('err:service:', '').split(':');
  return { status: 400, body: { error: { type: `https://errors.test/service/${category}/${name}` } } };
}

type Kind = 'limit' | 'multi' | 'verify' | 'override';

interface Step {
  kind: Kind;
  who: number;
  cost: number;
  limit: number;
  duration: number;
  gapMs: number;
  durationMs: number;
  at: number;
}

const stepArb = fc.record({
  kind: fc.oneof(
    { arbitrary: fc.constant<Kind>('limit'), weight: 6 },
    { arbitrary: fc.constant<Kind>('multi'), weight: 1 },
    { arbitrary: fc.constant<Kind>('verify'), weight: 3 },
    { arbitrary: fc.constant<Kind>('override'), weight: 1 },
  ),
  who: fc.nat(3),
  cost: fc.nat(2),
  limit: fc.integer({ min: 1, max: 4 }),
  duration: fc.constantFrom(1000, 2000, 5000),
  gapMs: fc.nat(300),
  durationMs: fc.integer({ min: 1, max: 200 }),
  at: fc.double({ min: 0, max: 1, noNaN: true }),
});

/**
 * Records the engine's real answers. `concurrent`: random overlapping intervals, executed at a
 * random point inside each (service clock = wall clock); otherwise one after another, the service
 * clock standing still during each call (as the simulator's manual clock does between steps).
 */
function simulate(steps: readonly Step[], concurrent: boolean, lostEvery: number): HistoryEvent[] {
  const start = Date.UTC(2027, 0, 15, 12);
  const fx = makeEngine({ startMs: start });
  const { engine, rootKey, workspaceId, apiId } = fx;
  unwrap(engine.admin.createNamespace(workspaceId, 'ns'));
  unwrap(engine.identities.createIdentity(rootKey, { externalId: 'org', ratelimits: [{ name: 'org', limit: 3, duration: 1000, autoApply: true }] }));
  const keys = [0, 1].map((i) =>
    unwrap(engine.keys.createKey(rootKey, { apiId, externalId: 'org', ratelimits: [{ name: 'own', limit: 1 + i, duration: 2000, autoApply: true }] })),
  );
  const keyIdOf = (plaintext: string) => keys.find((k) => k.key === plaintext)?.keyId;
  interface Planned {
    seq: number;
    op: Operation;
    body: unknown;
    inv: number;
    comp: number;
    point: number;
    lost: boolean;
    response?: { status: number; body: unknown };
  }
  const planned: Planned[] = [];
  let t = start + 10;
  for (const [i, s] of steps.entries()) {
    const inv = t + (concurrent ? s.gapMs % 60 : s.gapMs + 1);
    const comp = concurrent ? inv + s.durationMs : inv;
    const point = inv + Math.floor(s.at * (comp - inv));
    t = concurrent ? inv : comp;
    const identifier = ['u1', 'u2', 'v1', 'v2'][s.who] as string;
    let op: Operation;
    let body: unknown;
    switch (s.kind) {
      case 'limit':
        op = 'ratelimit.limit';
        body = { namespace: 'ns', identifier, limit: s.limit, duration: s.duration, cost: s.cost };
        break;
      case 'multi':
        op = 'ratelimit.multiLimit';
        body = [
          { namespace: 'ns', identifier, limit: s.limit, duration: s.duration, cost: s.cost },
          { namespace: 'ns', identifier: 'u1', limit: 2, duration: 1000 },
        ];
        break;
      case 'verify':
        op = 'keys.verifyKey';
        body = {
          key: (keys[s.who % 2] as { key: string }).key,
          ...(s.cost === 2 ? { ratelimits: [{ name: 'inline', limit: s.limit, duration: s.duration, cost: 1 }] } : {}),
        };
        break;
      case 'override':
        if (s.cost === 0) {
          op = 'ratelimit.deleteOverride';
          body = { namespace: 'ns', identifier: s.who % 2 === 0 ? 'u1' : 'v*' };
        } else {
          op = 'ratelimit.setOverride';
          body = { namespace: 'ns', identifier: s.who % 2 === 0 ? 'u1' : 'v*', limit: s.limit - 1, duration: s.duration };
        }
        break;
    }
    planned.push({ seq: i, op, body, inv, comp, point, lost: lostEvery > 0 && i % lostEvery === lostEvery - 1 });
  }
  for (const p of [...planned].sort((a, b) => a.point - b.point || a.seq - b.seq)) {
    fx.clock.set(Math.max(fx.clock.now(), p.point));
    const b = p.body as never;
    const result: Result<unknown> =
      p.op === 'ratelimit.limit'
        ? engine.ratelimit.limit(rootKey, b)
        : p.op === 'ratelimit.multiLimit'
          ? engine.ratelimit.multiLimit(rootKey, b)
          : p.op === 'keys.verifyKey'
            ? engine.keys.verifyKey(undefined, b)
            : p.op === 'ratelimit.setOverride'
              ? engine.ratelimit.setOverride(rootKey, b)
              : engine.ratelimit.deleteOverride(rootKey, b);
    p.response = answer(result);
  }
  return planned
    .map((p): HistoryEvent => {
      const response = p.response as { status: number; body: unknown };
      return {
        seq: p.seq,
        op: p.op,
        invokeMs: p.inv,
        completeMs: p.comp,
        serviceInvokeMs: p.inv,
        serviceCompleteMs: p.comp,
        request: historyRequest(p.op, p.body, keyIdOf),
        outcome: p.lost ? 'unknown' : historyOutcome(p.op, response.status, response.body),
      };
    })
    .sort((a, b) => a.completeMs - b.completeMs || a.seq - b.seq);
}

function failure(report: { violations: Violation[] }): string {
  return JSON.stringify(report.violations.map((v) => [v.invariant, v.subject, v.message, v.witness.map((e) => e.seq)]));
}

describe('properties: the real engine', () => {
  test('a correct service is never flagged, concurrent or not, with lost answers', () => {
    assertProperty(
      fc.property(fc.array(stepArb, { minLength: 1, maxLength: 60 }), fc.boolean(), fc.constantFrom(0, 4, 7), (steps, concurrent, lostEvery) => {
        const report = judgeRateLimitInvariants(simulate(steps, concurrent, lostEvery));
        if (report.violations.length > 0) throw new Error(`a correct service was flagged: ${failure(report)}`);
      }),
      { numRuns: 250 },
    );
  });

  test('flipping one decision (admitted ↔ denied) of a sequential history is always caught', () => {
    assertProperty(
      fc.property(fc.array(stepArb, { minLength: 1, maxLength: 60 }), fc.nat(), (steps, pick) => {
        const events = simulate(steps, false, 0);
        const decided = events.filter((e) => e.op === 'ratelimit.limit' && e.outcome !== 'unknown' && e.outcome.status === 200 && (e.request.cost ?? 1) > 0);
        fc.pre(decided.length > 0);
        const victim = decided[pick % decided.length] as HistoryEvent;
        const outcome = victim.outcome as HistoryOutcome;
        victim.outcome = { ...outcome, success: outcome.success !== true };
        const report = judgeRateLimitInvariants(events);
        const expected: InvariantId = outcome.success === true ? 'ratelimit.no-false-denial' : 'ratelimit.no-over-admission';
        expect(
          report.violations.map((v) => v.invariant),
          `flipping #${victim.seq} went unnoticed`,
        ).toContain(expected);
      }),
      { numRuns: 250 },
    );
  });
});
