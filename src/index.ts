/** keysim as a library: the engine today; `createSimulator` arrives with the HTTP simulator. */
export * from './engine/index.js';
