/**
 * The rate-limit band of the `production` promise set against what the production profile does
 * (docs/consistency.md#the-rate-limit-band). A region publishes what it admitted once that
 * reaches 20 % of the limit, so each of the other regions may admit that share and the request
 * crossing it beyond what the deciding region saw. Driven on the profile's regions directly, in
 * turn (where they drift apart most): a limit of 100 over three regions admits 140 in a window,
 * which a band of 0.10 per region (130) calls a violation; the band derived from the mechanism
 * (0.20 per region plus one request's cost per region) does not.
 */
import { describe, expect, test } from 'vitest';
import { type InvariantReport, judgeInvariants } from '../../../src/load/invariants/judge.js';
import { promiseSet } from '../../../src/load/promises/index.js';
import { PRODUCTION_FIGURES } from '../../../src/engine/index.js';
import { limitHistory } from '../../helpers/profile-history.js';

const stateOf = (r: InvariantReport) => r.invariants.find((i) => i.id === 'ratelimit.no-over-admission')?.state;

/** `count` requests of `cost` on a 60 s limit, every region in turn at one instant; the cost admitted. */
function roundRobin(regions: number, limit: number, cost: number, count = 400) {
  const ops = Array.from({ length: count }, () => ({ region: 0, cost, advanceMs: 0 }));
  const events = limitHistory({ seed: 7, regions, limit, durationMs: 60_000, roundRobin: true, ops });
  const admitted = events.filter((e) => e.outcome !== 'unknown' && e.outcome.success === true).length * cost;
  return { events, admitted, share: admitted / limit - 1 };
}

describe('the production rate-limit band against the profile', () => {
  test('the publish share the band is derived from is the profile’s', () => {
    expect(promiseSet('production').rateLimitOverAdmission).toBe(PRODUCTION_FIGURES.rateLimitPublishShare);
  });

  test.each([
    [2, 10, 1],
    [2, 100, 1],
    [2, 100, 3],
    [3, 10, 1],
    [3, 100, 1],
    [3, 100, 3],
  ])('%i regions, limit %i, cost %i: what the profile admits is within the derived band', (regions, limit, cost) => {
    const { events, admitted, share } = roundRobin(regions, limit, cost);
    console.log(`profile, ${regions} regions, limit ${limit}, cost ${cost}: ${admitted} admitted in one window (${Math.round(share * 100)} % over)`);
    // The mechanism: at most (regions − 1) × (20 % of the limit + one request's cost) beyond it.
    expect(admitted).toBeLessThanOrEqual(limit + (regions - 1) * (PRODUCTION_FIGURES.rateLimitPublishShare * limit + cost));
    const derived = judgeInvariants(events, { wallSkewMs: 0, promises: promiseSet('production') });
    expect(derived.violations.map((v) => v.message)).toEqual([]);
  });

  test('with three regions the profile goes past a band of 0.10 per region: that band would call its documented behaviour a violation', () => {
    const { events, share } = roundRobin(3, 100, 1);
    expect(share).toBeCloseTo(0.4);
    const exact = judgeInvariants(events, { wallSkewMs: 0 });
    expect(stateOf(exact)).toBe('violated');
    expect(stateOf(judgeInvariants(events, { wallSkewMs: 0, promises: promiseSet('production', { rateLimitOverAdmission: 0.1 }) }))).toBe('violated');
    expect(stateOf(judgeInvariants(events, { wallSkewMs: 0, promises: promiseSet('production') }))).toBe('within-promise');
  });

  test('the over-admission measure names the window and the derived promise', () => {
    const { events } = roundRobin(3, 100, 1);
    const measure = judgeInvariants(events, { wallSkewMs: 0, promises: promiseSet('production') }).measures?.find(
      (m) => m.name === 'ratelimit.over-admission.60s',
    );
    expect(measure).toMatchObject({ unit: 'share', count: 1, source: 'history' });
    expect(measure?.max).toBeCloseTo(0.4);
    expect(measure?.promise).toBeCloseTo(0.6);
  });
});
