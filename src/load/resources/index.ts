/** The door of src/load/resources: what other rooms and layers use of it. */
export * from './resource-handover.js';
export * from './resource-sweep.js';
export * from './resource-tracking.js';
export * from './resources.js';
export * from './run-cleanup.js';
