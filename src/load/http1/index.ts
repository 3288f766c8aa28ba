/**
 * The door of src/load/http1/. keysim's own HTTP/1.1 client: the connection that never sends a request twice, the response
 * parser, request text, idle close, answer bodies, and Http1Client for everything but the load.
 */
export * from './answer-body.js';
export * from './client.js';
export * from './connection.js';
export * from './idle-close.js';
export * from './request-text.js';
export * from './response-parser.js';
