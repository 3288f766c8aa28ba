/** keysim as a library: the engine, and the simulator as a server for your own tests. */
export * from './engine/index.js';
export { createSimulator, JournalReplayer, type FaultsConfig, type FaultsView, type JournalEntry, type JournalStart, type Simulator, type SimulatorOptions } from './http/index.js';
export { defineConfig, type KeysimConfig, type ConfigStage } from './cli/config.js';
