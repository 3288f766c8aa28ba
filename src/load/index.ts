/**
 * The load layer's door: every room's door. Another layer may import this, or one room's door
 * (src/load/<room>/index.ts); never a file inside a room (docs/architecture.md#layout).
 */
export * from './answers/index.js';
export * from './executors/index.js';
export * from './history/index.js';
export * from './http1/index.js';
export * from './invariants/index.js';
export * from './metrics/index.js';
export * from './oracle/index.js';
export * from './plan/index.js';
export * from './promises/index.js';
export * from './resources/index.js';
export * from './rules/index.js';
export * from './run/index.js';
export * from './scenario/index.js';
export * from './target/index.js';
export * from './time/index.js';
