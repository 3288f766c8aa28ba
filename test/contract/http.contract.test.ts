/** The contract suite against the HTTP simulator, through real sockets on 127.0.0.1 (a fresh start state before each case). */
import { useSimulator } from '../helpers/simulator.js';
import { httpClient } from '../helpers/service-client.js';
import { CONTRACT_START_MS, describeContract } from './contract.js';

const sim = useSimulator({ startMs: CONTRACT_START_MS, seed: 1, compat: 'interface' });

describeContract('http', async () => httpClient(sim()));
