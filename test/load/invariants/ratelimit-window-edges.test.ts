/**
 * Rate limits at window edges, where a sliding window and a fixed one disagree: bursts of
 * concurrent ratelimit.limit requests on both sides of an edge, decided at a random point of
 * each request's flight by a service whose clock is off the wall clock by a random amount within
 * the skew. Recorded as the simulator records (service-clock brackets) or as a live target does
 * (wall times only, widened by the skew).
 *
 * - the real engine (a sliding window) is never flagged, whatever the timing, offset and lost
 *   answers;
 * - a fixed-window limiter (test/helpers/fixed-window-limiter.ts), given a burst at the limit just
 *   before an edge and another just after it, all in flight together, is always flagged, with a
 *   witness holding admissions from both windows. The checker used to count only admissions that
 *   completed before a request was sent, so such concurrent bursts went unflagged.
 */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { type Violation, judgeRateLimitInvariants } from '../../../src/load/invariants/judge.js';
import { type HistoryEvent, historyOutcome, historyRequest } from '../../../src/load/history/history.js';
import { makeEngine, unwrap } from '../../helpers/engine.js';
import { FixedWindowLimiter, type LimitAnswer } from '../../helpers/fixed-window-limiter.js';
import { assertProperty } from '../../helpers/property.js';

/** Aligned to every window length used here. */
const E = Date.UTC(2027, 0, 15, 12);

interface LimitRequest {
  identifier: string;
  limit: number;
  duration: number;
  cost: number;
}

/** Decides one request at a service time; called in service-time order. */
type Service = (request: LimitRequest, nowMs: number) => LimitAnswer;

function engineService(): Service {
  const fx = makeEngine({ startMs: E - 60_000 });
  unwrap(fx.engine.admin.createNamespace(fx.workspaceId, 'ns'));
  return (request, nowMs) => {
    fx.clock.set(Math.max(fx.clock.now(), nowMs));
    return unwrap(fx.engine.ratelimit.limit(fx.rootKey, { namespace: 'ns', ...request })) as LimitAnswer;
  };
}

function fixedWindowService(): Service {
  const limiter = new FixedWindowLimiter();
  return (request, nowMs) => limiter.limit(request, nowMs);
}

/** One request in flight: sent at `sendMs` (wall), answered `latencyMs` later, decided at `at` of the way. */
interface Flight {
  request: LimitRequest;
  sendMs: number;
  latencyMs: number;
  at: number;
  lost: boolean;
}

interface Recording {
  /** Service clock − wall clock, ms (|offset| ≤ skew). */
  offsetMs: number;
  skewMs: number;
  /** As the simulator records: the service clock around each request; else wall times only. */
  serviceTimes: boolean;
}

/** Runs the flights through a service in the order of their service times and records the history. */
function record(flights: readonly Flight[], service: Service, rec: Recording): HistoryEvent[] {
  const planned = flights.map((f, seq) => {
    const inv = f.sendMs;
    const comp = f.sendMs + f.latencyMs;
    return { f, seq, inv, comp, serviceAt: Math.floor(inv + f.at * (comp - inv)) + rec.offsetMs, answer: undefined as LimitAnswer | undefined };
  });
  for (const p of [...planned].sort((a, b) => a.serviceAt - b.serviceAt || a.seq - b.seq)) p.answer = service(p.f.request, p.serviceAt);
  return planned
    .map((p): HistoryEvent => {
      const body = { namespace: 'ns', ...p.f.request };
      const event: HistoryEvent = {
        seq: p.seq,
        op: 'ratelimit.limit',
        invokeMs: p.inv,
        completeMs: p.comp,
        request: historyRequest('ratelimit.limit', body),
        outcome: p.f.lost ? 'unknown' : historyOutcome('ratelimit.limit', 200, { meta: { requestId: 'req_edge' }, data: p.answer }),
      };
      if (rec.serviceTimes) {
        event.serviceInvokeMs = p.inv + rec.offsetMs;
        event.serviceCompleteMs = p.comp + rec.offsetMs;
      }
      return event;
    })
    .sort((a, b) => a.completeMs - b.completeMs || a.seq - b.seq);
}

function failure(violations: readonly Violation[]): string {
  return JSON.stringify(violations.map((v) => [v.invariant, v.subject, v.message, v.witness.map((e) => e.seq)]));
}

// ── a correct service: never flagged ─────────────────────────────────────────────────────

const burstArb = fc.record({
  edge: fc.integer({ min: 1, max: 3 }),
  /** Where the burst starts, relative to the edge (mostly close to it). */
  startMs: fc.oneof(fc.integer({ min: -300, max: 300 }), fc.integer({ min: -40, max: 40 })),
  spreadMs: fc.nat(40),
  who: fc.nat(1),
  cost: fc.oneof({ arbitrary: fc.constant(1), weight: 4 }, { arbitrary: fc.nat(3), weight: 1 }),
  flights: fc.array(fc.record({ latencyMs: fc.integer({ min: 1, max: 150 }), at: fc.double({ min: 0, max: 1, noNaN: true }), lost: fc.boolean() }), {
    minLength: 1,
    maxLength: 9,
  }),
});

const recordingArb: fc.Arbitrary<Recording> = fc
  .record({ skewMs: fc.constantFrom(0, 15, 60, 1_000), side: fc.double({ min: -1, max: 1, noNaN: true }), serviceTimes: fc.boolean() })
  .map(({ skewMs, side, serviceTimes }) => ({ skewMs, offsetMs: Math.trunc(side * skewMs), serviceTimes }));

describe('bursts across window edges', () => {
  test('the real engine (sliding window) is never flagged, with concurrent bursts on both sides of edges, any clock offset within the skew, lost answers', () => {
    let judged = 0;
    assertProperty(
      fc.property(
        fc.integer({ min: 1, max: 6 }),
        fc.constantFrom(1_000, 2_000),
        fc.array(burstArb, { minLength: 1, maxLength: 5 }),
        recordingArb,
        fc.constantFrom(0, 5),
        (limit, duration, bursts, rec, lostOneIn) => {
          const flights: Flight[] = bursts.flatMap((b) =>
            b.flights.map((f, i) => ({
              request: { identifier: `user-${b.who}`, limit, duration, cost: b.cost },
              sendMs: E + b.edge * duration + b.startMs + Math.floor((i * b.spreadMs) / b.flights.length),
              latencyMs: f.latencyMs,
              at: f.at,
              lost: lostOneIn > 0 && f.lost && i % lostOneIn === 0,
            })),
          );
          const result = judgeRateLimitInvariants(record(flights, engineService(), rec), { wallSkewMs: rec.skewMs });
          if (result.violations.length > 0) throw new Error(`a correct service was flagged: ${failure(result.violations)}`);
          judged += result.counts['ratelimit.no-over-admission'] ?? 0;
        },
      ),
      { numRuns: 300 },
    );
    expect(judged, 'admissions judged').toBeGreaterThan(0);
  });
});

// ── a fixed-window limiter: always flagged ───────────────────────────────────────────────

/**
 * A burst of `limit` requests sent within 10 ms, all in flight together (each takes 20–50 ms),
 * well before the edge so that every one is decided in the earlier window; then another such
 * burst just after the edge. The fixed window admits both; a sliding window still weighs the
 * first burst at ≥ 70 % when the second is decided, so it could admit at most 30 % of it.
 */
const edgeBurstsArb = fc.record({
  limit: fc.integer({ min: 2, max: 8 }),
  duration: fc.constantFrom(1_000, 2_000),
  beforeMs: fc.integer({ min: 200, max: 300 }),
  afterMs: fc.integer({ min: 60, max: 160 }),
  flights: fc.array(fc.record({ sendMs: fc.nat(10), latencyMs: fc.integer({ min: 20, max: 50 }), at: fc.double({ min: 0, max: 1, noNaN: true }) }), {
    minLength: 16,
    maxLength: 16,
  }),
  rec: fc.oneof(
    // The simulator's service-clock brackets.
    fc.integer({ min: -50, max: 50 }).map((offsetMs): Recording => ({ offsetMs, skewMs: 1_000, serviceTimes: true })),
    // A live target with a measured skew of 50 ms.
    fc.integer({ min: -50, max: 50 }).map((offsetMs): Recording => ({ offsetMs, skewMs: 50, serviceTimes: false })),
  ),
});

type EdgeBursts = typeof edgeBurstsArb extends fc.Arbitrary<infer T> ? T : never;

function edgeFlights(p: EdgeBursts): Flight[] {
  const edge = E + 5 * p.duration;
  const request: LimitRequest = { identifier: 'user-1', limit: p.limit, duration: p.duration, cost: 1 };
  return p.flights.slice(0, 2 * p.limit).map((f, i) => ({
    request,
    sendMs: (i < p.limit ? edge - p.beforeMs : edge + p.afterMs) + f.sendMs,
    latencyMs: f.latencyMs,
    at: f.at,
    lost: false,
  }));
}

describe('a fixed-window limiter instead of the sliding window', () => {
  test('concurrent over-admission at a window edge is flagged: a burst at the limit on each side of the edge, all in flight together', () => {
    assertProperty(
      fc.property(edgeBurstsArb, (p) => {
        const flights = edgeFlights(p);
        const events = record(flights, fixedWindowService(), p.rec);
        // The scenario is what it claims: everything admitted, no answer inside a burst before its last send.
        for (const e of events) expect(e.outcome !== 'unknown' && e.outcome.success).toBe(true);
        const result = judgeRateLimitInvariants(events, { wallSkewMs: p.rec.skewMs });
        const found = result.violations.filter((v) => v.invariant === 'ratelimit.no-over-admission');
        expect(found, `not flagged: ${failure(result.violations)}`).toHaveLength(1);
        const v = found[0] as Violation;
        expect(v.subject).toBe('ns/user-1');
        // The witness shows admissions of both windows.
        const seqs = v.witness.map((e) => e.seq);
        expect(
          seqs.some((s) => s < p.limit),
          `witness ${seqs.join(',')} has no admission before the edge`,
        ).toBe(true);
        expect(
          seqs.some((s) => s >= p.limit),
          `witness ${seqs.join(',')} has no admission after the edge`,
        ).toBe(true);
        expect(v.witness.length).toBeLessThanOrEqual(6);
        // And the same traffic through the real engine is clean.
        const clean = judgeRateLimitInvariants(record(flights, engineService(), p.rec), { wallSkewMs: p.rec.skewMs });
        expect(clean.violations, failure(clean.violations)).toEqual([]);
      }),
      { numRuns: 200 },
    );
  });

  test('the witness names the burst and the weight the previous window still had', () => {
    const p: EdgeBursts = {
      limit: 5,
      duration: 1_000,
      beforeMs: 250,
      afterMs: 100,
      flights: Array.from({ length: 16 }, (_, i) => ({ sendMs: i % 5, latencyMs: 30, at: 0.5 })),
      rec: { offsetMs: 0, skewMs: 50, serviceTimes: false },
    };
    const result = judgeRateLimitInvariants(record(edgeFlights(p), fixedWindowService(), p.rec), { wallSkewMs: p.rec.skewMs });
    const [v] = result.violations;
    expect(v?.invariant).toBe('ratelimit.no-over-admission');
    // The first answers after the edge arrive 130 ms into the window, + 50 ms skew: decided by
    // 12:00:05.181, when the 5 of the previous window weigh floor(5 · 819 / 1000) = 4. The
    // earliest proof is kept: the first two requests of the burst already exceed the limit.
    expect(v?.message).toMatch(
      /^2 requests with a total cost of 2 were admitted in the window 2027-01-15T12:00:05.000Z … 2027-01-15T12:00:06.000Z, concurrently or not, all decided by 2027-01-15T12:00:05.181Z at the latest, when the previous window's 5 still weighed at least 4: 2 \+ 4 > limit 5/,
    );
    expect(v?.witness.map((e) => e.seq)).toEqual([3, 4, 5, 6]);
  });
});
