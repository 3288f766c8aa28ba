/** The door of src/load/scenario: what other rooms and layers use of it. */
export * from './distributions.js';
export * from './edit-distance.js';
export * from './mix-operations.js';
export * from './operation-names.js';
export * from './scenario-calls.js';
export * from './scenario-checks.js';
export * from './scenario-clock.js';
export * from './scenario-failed.js';
export * from './scenario-fixtures.js';
export * from './scenario-start.js';
export * from './scenario.js';
