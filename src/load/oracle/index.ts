/**
 * The door of src/load/oracle/. The oracle: replays a history against the simulator's own routes (the journal) and reports
 * where the target's answers differ.
 */
export * from './oracle-replay.js';
export * from './oracle.js';
