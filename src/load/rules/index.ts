/**
 * The door of src/load/rules/. The service's rules, each with a stable id and one line, and the tally of which a run judged.
 */
export * from './rules.js';
