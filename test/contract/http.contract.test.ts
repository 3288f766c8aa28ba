/** The contract suite against the HTTP simulator, through real sockets on 127.0.0.1. */
import { afterAll, beforeAll } from 'vitest';
import { type Simulator, createSimulator } from '../../src/http/simulator.js';
import { httpClient } from '../helpers/service-client.js';
import { CONTRACT_START_MS, describeContract } from './contract.js';

let sim: Simulator | undefined;

beforeAll(async () => {
  sim = await createSimulator({ host: '127.0.0.1', port: 0, startMs: CONTRACT_START_MS, seed: 1, compat: 'interface', validateResponses: true });
});

afterAll(async () => {
  await sim?.close();
});

describeContract('http', async () => {
  if (sim === undefined) throw new Error('the simulator did not start');
  sim.reset();
  return httpClient(sim);
});
