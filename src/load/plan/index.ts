/**
 * The door of src/load/plan/. The pure plan of a load: stages (rate over time) and every request's intended send time.
 */
export * from './plan.js';
export * from './stages.js';
