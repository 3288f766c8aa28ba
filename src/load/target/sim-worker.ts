/**
 * Runs the embedded simulator in a worker thread, so that it never shares the load generator's
 * event loop (a busy server would otherwise delay the generator's sends and distort the figures).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { createSimulator, type SimulatorOptions } from '../../http/index.js';

const port = parentPort;
if (port === null) throw new Error('sim-worker.ts must run in a worker thread');

const sim = await createSimulator(workerData as SimulatorOptions);
port.postMessage({ type: 'ready', url: sim.url, rootKey: sim.rootKey });
port.on('message', (message: unknown) => {
  if (message === 'close') {
    void sim.close().finally(() => port.close());
  }
});
