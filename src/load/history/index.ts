/** The door of src/load/history: what other rooms and layers use of it. */
export * from './history-recording.js';
export * from './history.js';
export * from './journal-file.js';
