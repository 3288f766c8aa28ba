/**
 * What `import … from 'keysim'` gives a user's project, for the README's examples run inside this
 * repository: the package's entry point, plus the scenario contract it exports.
 */
export * from '../../../src/index.js';
export { defineScenario, type Scenario, type ScenarioContext } from '../../../src/load/scenario.js';
