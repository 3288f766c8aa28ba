/**
 * The door of src/load/answers/. What an answer, or its absence, means: the one rule of which answers are the service's
 * (service-answer), an outcome never known (unknown-outcome), a transport error by kind, and a
 * target that stopped answering (dead-target). Imports no other room.
 */
export * from './dead-target.js';
export * from './service-answer.js';
export * from './transport-error.js';
export * from './unknown-outcome.js';
