/**
 * The door of src/load/run/. A run from start to end: the runner and its phases and options, thresholds (with
 * threshold-compare and pace-verdict), the run's report, the invariants and oracle after the
 * load, the clock-skew probes, and a scenario file's validation. Imports every other room.
 */
export * from './run-report.js';
export * from './runner.js';
export * from './scenario-validate.js';
export * from './thresholds.js';
