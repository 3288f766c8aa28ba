/**
 * The door of src/load/executors/. The two load models that fire a plan at a target over http1: the open model (open-model*,
 * requests sent at their intended times) and the closed model (closed-model, N workers back to
 * back). They record into metrics and history; they never import run, invariants or oracle.
 */
export * from './closed-model.js';
export * from './open-model-requests.js';
export * from './open-model.js';
