/** The door of src/load/run: what other rooms and layers use of it. */
export * from './run-report.js';
export * from './runner.js';
export * from './scenario-validate.js';
export * from './thresholds.js';
