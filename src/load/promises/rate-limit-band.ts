/**
 * The rate-limit band of a promise set (docs/consistency.md#the-rate-limit-band), in one place for
 * the history checkers and the scenarios' own checks, so that both judge a window by the same bound.
 */
import type { PromiseSet } from './promise-set.js';

/** How a limit widens under the set: admitted up to limit × `scale` + `costSlack` × the largest request cost. */
export interface AdmissionTerms {
  scale: number;
  /** Regions, each of which may admit one request past its share (0 when the set allows no over-admission). */
  costSlack: number;
}

export function admissionTerms(set: PromiseSet, regions: number): AdmissionTerms {
  return { scale: 1 + set.rateLimitOverAdmission * regions, costSlack: set.rateLimitOverAdmission > 0 ? regions : 0 };
}

/** A window of `limit`: what it may admit, and above what it may deny. */
export interface RateLimitBand {
  admitUpTo: number;
  denyAbove: number;
}

/** The band of a window of `limit` whose counter saw requests of at most `largestCost` (0 leaves the per-region term out). */
export function rateLimitBandOf(set: PromiseSet, limit: number, regions: number, largestCost = 0): RateLimitBand {
  const { scale, costSlack } = admissionTerms(set, regions);
  return { admitUpTo: limit * scale + costSlack * largestCost, denyAbove: set.rateLimitUnderAdmission * limit };
}
