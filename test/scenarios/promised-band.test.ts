/**
 * The rate-limit band the scenarios' own checks judge by (scenarios/support/promised.ts): the
 * same bound the history checkers use, limit × (1 + rateLimitOverAdmission × regions) + regions ×
 * the largest cost, and the limit itself under `exact`.
 */
import { expect, test } from 'vitest';
import { promiseSet } from '../../src/load/promises/promise-set.js';
import { rateLimitBand } from '../../scenarios/support/promised.js';

test('a scenario judging a window of limit 3 on two regions allows what the checkers allow: one request per region past the share', () => {
  const production = promiseSet('production');
  const band = rateLimitBand(3, 2, production, 1);
  expect(band.admitUpTo).toBeCloseTo(3 * (1 + production.rateLimitOverAdmission * 2) + 2);
  expect(band.denyAbove).toBeCloseTo(production.rateLimitUnderAdmission * 3);
  // Without a cost the term is left out (callers that judge bursts by the share alone).
  expect(rateLimitBand(3, 2, production).admitUpTo).toBeCloseTo(3 * (1 + production.rateLimitOverAdmission * 2));
});

test('under exact a window of limit 3 admits exactly 3 whatever the regions and the cost', () => {
  expect(rateLimitBand(3, 2, promiseSet('exact'), 1)).toEqual({ admitUpTo: 3, denyAbove: 3 });
});
