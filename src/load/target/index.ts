/** The door of src/load/target: what other rooms and layers use of it. */
export * from './reachability.js';
export * from './route-miss.js';
export * from './service-api.js';
export * from './target.js';
