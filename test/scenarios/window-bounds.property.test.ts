/**
 * The bounds the live rate-limit scenarios judge by (scenarios/support/window-bounds.ts): a
 * service that follows the documented sliding window is never flagged, whatever its clock's
 * offset from keysim's, the delays on the way there and back, and the order requests overtake
 * each other in; a fixed-window limiter and an off-by-one limit are flagged as soon as a burst
 * follows an edge closely.
 */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { type CounterRecord, type Decision, checkWindowBounds, exactBurstProblem } from '../../scenarios/support/window-bounds.js';
import { assertProperty } from '../helpers/property.js';

interface Request {
  /** keysim's clock when sent. */
  invokeMs: number;
  /** Time on the way to the service, and back. */
  toMs: number;
  backMs: number;
  probe: boolean;
}

type Limiter = 'sliding' | 'fixed' | 'offByOne';

/** Decides the requests in the order they reach the service, on its clock (keysim's + offset). */
function serve(
  requests: readonly Request[],
  limit: number,
  durationMs: number,
  offsetMs: number,
  limiter: Limiter,
): { counter: CounterRecord; probes: Decision[] } {
  const order = [...requests].sort((a, b) => a.invokeMs + a.toMs - (b.invokeMs + b.toMs));
  let window = Number.NaN;
  let current = 0;
  let previous = 0;
  const counter: CounterRecord = { label: 'c', limit, durationMs, decisions: [] };
  const probes: Decision[] = [];
  for (const r of order) {
    const t = r.invokeMs + r.toMs + offsetMs;
    const w = Math.floor(t / durationMs);
    if (w !== window) {
      previous = w === window + 1 ? current : 0;
      current = 0;
      window = w;
    }
    const elapsed = (t - w * durationMs) / durationMs;
    const used = current + (limiter === 'fixed' ? 0 : Math.floor(previous * (1 - elapsed)));
    const admitted = !r.probe && used + 1 <= (limiter === 'offByOne' ? limit + 1 : limit);
    if (admitted) current++;
    const decision = { invokeMs: r.invokeMs, completeMs: r.invokeMs + r.toMs + r.backMs, admitted: r.probe || admitted, resetMs: (w + 1) * durationMs };
    (r.probe ? probes : counter.decisions).push(decision);
  }
  return { counter, probes };
}

const requestArb = (spanMs: number) =>
  fc.record({
    invokeMs: fc.integer({ min: 0, max: spanMs }),
    toMs: fc.integer({ min: 0, max: 400 }),
    backMs: fc.integer({ min: 0, max: 400 }),
    probe: fc.boolean(),
  });

describe('window bounds', () => {
  test('a sliding-window service is never flagged, whatever the clock offset, delays and overtaking', () => {
    assertProperty(
      fc.property(
        fc.constantFrom(1_000, 5_000),
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: -10_000_000, max: 10_000_000 }),
        fc.array(requestArb(15_000), { maxLength: 60 }),
        (durationMs, limit, offsetMs, requests) => {
          const { counter, probes } = serve(requests, limit, durationMs, offsetMs, 'sliding');
          expect(checkWindowBounds([counter], probes).problems).toEqual([]);
        },
      ),
      { numRuns: 300 },
    );
  });

  test('a fixed-window limiter is flagged when a burst follows a probe across the edge within a tenth of the window', () => {
    assertProperty(
      fc.property(
        fc.constantFrom(1_000, 5_000),
        fc.integer({ min: 2, max: 8 }),
        fc.integer({ min: -10_000_000, max: 10_000_000 }),
        fc.array(fc.nat({ max: 20 }), { minLength: 4, maxLength: 4 }),
        (durationMs, limit, offsetMs, jitter) => {
          // keysim's time of the service's edge: a burst early in the window, a probe just before the edge, a burst just after it.
          const edge = Math.ceil(offsetMs / durationMs + 2) * durationMs - offsetMs;
          const at = (invokeMs: number, probe = false): Request => ({ invokeMs, toMs: jitter[0] ?? 0, backMs: jitter[1] ?? 0, probe });
          const requests = [
            ...Array.from({ length: limit + 1 }, () => at(edge - durationMs + 50)),
            at(edge - 30 - (jitter[0] ?? 0), true),
            ...Array.from({ length: limit + 1 }, () => at(edge + (jitter[2] ?? 0))),
          ];
          const { counter, probes } = serve(requests, limit, durationMs, offsetMs, 'fixed');
          expect(checkWindowBounds([counter], probes).problems.join()).toContain('a fixed window admits a full limit again');
          const sliding = serve(requests, limit, durationMs, offsetMs, 'sliding');
          const verdict = checkWindowBounds([sliding.counter], sliding.probes);
          expect(verdict.problems).toEqual([]);
          expect(verdict.edgesJudged).toBe(1);
        },
      ),
      { numRuns: 200 },
    );
  });

  test('an off-by-one limit: a burst of limit + 1 in a fresh window admits one too many', () => {
    const burst = Array.from({ length: 6 }, (_, i): Request => ({ invokeMs: 100 + i, toMs: 5, backMs: 5, probe: false }));
    for (const [limiter, expected] of [
      ['sliding', undefined],
      ['offByOne', 'c: a burst of 6 in one fresh window admitted 6, the limit 5 admits exactly 5'],
    ] as const) {
      const { counter } = serve(burst, 5, 1_000, 0, limiter);
      expect(exactBurstProblem(counter, counter.decisions)).toBe(expected);
    }
    // A burst across an edge is not judged.
    const straddling = serve([...burst, { invokeMs: 995, toMs: 10, backMs: 5, probe: false }], 5, 1_000, 0, 'sliding');
    expect(exactBurstProblem(straddling.counter, straddling.counter.decisions)).toBe('straddled');
  });
});
