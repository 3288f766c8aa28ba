/**
 * The door of src/load/target/. The target a run talks to: the embedded simulator (target.ts starts sim-worker.ts in a worker
 * thread) or a live deployment, its reachability, the ServiceApi over http1, and a route miss.
 */
export * from './reachability.js';
export * from './route-miss.js';
export * from './service-api.js';
export * from './target.js';
