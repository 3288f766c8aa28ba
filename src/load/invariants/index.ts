/**
 * The door of src/load/invariants/. The invariant checkers: they judge a whole history for the service's invariants (credits
 * never double-spent, rate limits never over-admitted …) and build the report's invariants
 * section. They read history only.
 */
export * from './invariants-section.js';
export * from './judge.js';
