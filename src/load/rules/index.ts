/** The door of src/load/rules: what other rooms and layers use of it. */
export * from './rules.js';
