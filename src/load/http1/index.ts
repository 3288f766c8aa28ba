/** The door of src/load/http1: what other rooms and layers use of it. */
export * from './answer-body.js';
export * from './client.js';
export * from './connection.js';
export * from './idle-close.js';
export * from './request-text.js';
export * from './response-parser.js';
