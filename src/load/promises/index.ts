/**
 * The door of src/load/promises/. Promise sets: what a deployment promises about consistency
 * (`exact`, `production`, figure by figure), which the invariant checkers judge a history against.
 */
export * from './promise-set.js';
export * from './rate-limit-band.js';
