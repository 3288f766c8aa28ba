/**
 * The door of src/load/history/. A run's history of operations: its format and events, the writer and reader (history*),
 * combining segments, the recording ServiceApi that writes every call (history-recording), and
 * the simulator's journal a run saves beside it (journal-file).
 */
export * from './history-recording.js';
export * from './history.js';
export * from './journal-file.js';
