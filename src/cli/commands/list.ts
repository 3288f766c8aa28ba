/** `keysim list`: the scenarios, one line each. */
import type { CommandModule } from 'yargs';
import { DEFAULT_SCENARIO, SCENARIOS } from '../../../scenarios/index.js';

export function listScenarios(): string {
  const entries = Object.entries(SCENARIOS);
  const width = Math.max(...entries.map(([name]) => name.length));
  const lines = entries.map(([name, s]) => {
    const tags = [name === DEFAULT_SCENARIO ? 'default' : '', s.requires?.includes('clock') === true ? 'needs clock control: simulator only' : ''].filter((t) => t !== '');
    return `${name.padEnd(width)}  ${s.description}${tags.length > 0 ? ` (${tags.join('; ')})` : ''}`;
  });
  return lines.join('\n');
}

export const listCommandModule: CommandModule = {
  command: 'list',
  describe: 'List the scenarios, and which need clock control',
  handler: () => {
    process.stdout.write(`${listScenarios()}\n`);
  },
};
