/** The contract suite against the engine called directly. */
import { Engine, ManualClock } from '../../src/engine/index.js';
import { engineClient } from '../helpers/service-client.js';
import { CONTRACT_START_MS, describeContract } from './contract.js';

describeContract('engine', async () => {
  const clock = new ManualClock(CONTRACT_START_MS);
  const engine = new Engine({ clock, seed: 1, compat: 'interface' });
  const created = engine.admin.createWorkspace({ name: 'default' });
  if (!created.ok) throw new Error(`cannot create the start workspace: ${created.error.detail}`);
  return engineClient(engine, clock, created.value);
});
