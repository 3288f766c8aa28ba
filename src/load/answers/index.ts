/** The door of src/load/answers: what other rooms and layers use of it. */
export * from './dead-target.js';
export * from './service-answer.js';
export * from './transport-error.js';
export * from './unknown-outcome.js';
