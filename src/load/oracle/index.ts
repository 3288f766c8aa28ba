/** The door of src/load/oracle: what other rooms and layers use of it. */
export * from './oracle-replay.js';
export * from './oracle.js';
