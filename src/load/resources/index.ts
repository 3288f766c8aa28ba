/**
 * The door of src/load/resources/. What a run created on a live target: tracking it, handing it over between segments,
 * sweeping it, and the clean-up after a run.
 */
export * from './resource-handover.js';
export * from './resource-sweep.js';
export * from './resource-tracking.js';
export * from './resources.js';
export * from './run-cleanup.js';
