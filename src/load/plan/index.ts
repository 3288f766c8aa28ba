/** The door of src/load/plan: what other rooms and layers use of it. */
export * from './plan.js';
export * from './stages.js';
