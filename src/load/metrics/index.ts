/**
 * The door of src/load/metrics/. What a run measures about itself: the recorder (HDR histograms, counts, the timeline), the
 * generator monitor (is keysim itself keeping pace?) and the Prometheus metrics endpoint.
 */
export * from './generator-monitor.js';
export * from './metrics-endpoint.js';
export * from './recorder.js';
