/** The door of src/load/metrics: what other rooms and layers use of it. */
export * from './generator-monitor.js';
export * from './metrics-endpoint.js';
export * from './recorder.js';
