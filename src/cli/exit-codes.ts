/** Named exit codes: thresholds failed and invariants violated are distinct from bad input. */
export const EXIT = {
  ok: 0,
  /** A bug or an unexpected failure. */
  failure: 1,
  /** Bad flags, an unknown command or scenario: the message names the valid choices. */
  usage: 2,
  /** A per-response or end-of-run check failed. */
  checkFailed: 98,
  /** A threshold such as `p99(keys.verifyKey) < 20ms` failed. */
  thresholdFailed: 99,
  /** A credit or rate-limit invariant was violated. */
  invariantViolated: 100,
} as const;
