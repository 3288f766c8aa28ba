/** The door of src/load/invariants: what other rooms and layers use of it. */
export * from './invariants-section.js';
export * from './judge.js';
