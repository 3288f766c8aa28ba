/**
 * mixed's end-of-run check of its rate-limit checks, on hand-built figures: an answer that never
 * came (a transport error, a gateway's page, a 5xx) is counted apart and never judged.
 */
import { expect, test } from 'vitest';
import { rateLimitsDecided } from '../../scenarios/mixed.js';
import type { OperationStats } from '../../src/report/model.js';

function limitStats(statuses: Record<string, number>, allowed: number, denied: number, transport = 0): OperationStats {
  const requests = Object.values(statuses).reduce((a, b) => a + b, 0) + transport;
  return {
    operation: 'ratelimit.limit',
    requests,
    statuses,
    codes: {},
    ratelimit: { allowed, denied },
    transportErrors: { timeout: 0, reset: transport, refused: 0, other: 0 },
    cutOff: 0,
    checkFailures: 0,
  } as unknown as OperationStats;
}

test('every rate-limit check decided: gateway 5xx answers are counted apart as never came, not a failure', () => {
  // 90 answered by the service (80 allowed, 10 denied), 6 answered 502/504 by a gateway, 4 dropped.
  const check = rateLimitsDecided(limitStats({ 200: 90, 502: 2, 504: 4 }, 80, 10, 4));
  expect(check.passed, check.detail).toBe(true);
  expect(check.detail).toBe('80 allowed, 10 denied of the 90 answered; 10 never came (transport errors, gateway pages, 5xx), not judged');
});

test('every rate-limit check decided: an answered check that was neither allowed nor denied still fails', () => {
  const check = rateLimitsDecided(limitStats({ 200: 90, 504: 3 }, 80, 9));
  expect(check.passed).toBe(false);
  expect(check.detail).toMatch(/^80 allowed, 9 denied of the 90 answered; 3 never came/);
});

test('every rate-limit check decided: with no answer at all it is not judged', () => {
  const check = rateLimitsDecided(limitStats({ 504: 5 }, 0, 0, 2));
  expect(check.passed).toBe(true);
  expect(check.detail).toMatch(/^not judged: 7 answers never came/);
});
