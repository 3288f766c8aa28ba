/**
 * The door of src/load/scenario/. What a scenario is and what its code uses: defineScenario and its types (scenario.ts), the
 * helpers of its checks, calls, fixtures and clock (scenario-*.ts), key distributions, and the
 * operation names of a mix (refused before any load when unknown).
 */
export * from './distributions.js';
export * from './edit-distance.js';
export * from './mix-operations.js';
export * from './operation-names.js';
export * from './scenario-calls.js';
export * from './scenario-checks.js';
export * from './scenario-clock.js';
export * from './scenario-failed.js';
export * from './scenario-fixtures.js';
export * from './scenario-measures.js';
export * from './scenario-start.js';
export * from './scenario.js';
