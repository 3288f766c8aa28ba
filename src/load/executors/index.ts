/** The door of src/load/executors: what other rooms and layers use of it. */
export * from './closed-model.js';
export * from './open-model-requests.js';
export * from './open-model.js';
