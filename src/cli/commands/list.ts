/** `keysim list [files…]`: the scenarios, one line each: the built-ins, or those of files, folders and globs. */
import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs';
import { DEFAULT_SCENARIO, SCENARIOS } from '../../../scenarios/index.js';
import type { Scenario } from '../../load/scenario/index.js';
import { requiresClock } from '../../load/scenario/index.js';
import { resolveScenarios } from '../scenario-files.js';
import { example } from '../help-example.js';

interface Listed {
  name: string;
  scenario: Scenario<unknown>;
  file?: string;
  isDefault?: boolean;
}

function render(entries: readonly Listed[]): string {
  const width = Math.max(...entries.map((e) => e.name.length));
  const lines = entries.map((e) => {
    const tags = [e.isDefault === true ? 'default' : '', requiresClock(e.scenario) ? 'needs clock control: simulator only' : '', e.file ?? ''].filter(
      (t) => t !== '',
    );
    return `${e.name.padEnd(width)}  ${e.scenario.description}${tags.length > 0 ? ` (${tags.join('; ')})` : ''}`;
  });
  return lines.join('\n');
}

/** The built-in scenarios. */
export function listScenarios(): string {
  return render(Object.entries(SCENARIOS).map(([name, scenario]) => ({ name, scenario, isDefault: name === DEFAULT_SCENARIO })));
}

/** The scenarios of files, folders and globs (loaded and checked as `keysim run` does); throws a UsageError as it does. */
export async function listScenarioFiles(args: readonly string[]): Promise<string> {
  const sources = await resolveScenarios(args);
  return render(sources.map(({ scenario, file }) => ({ name: scenario.name, scenario, ...(file === undefined ? {} : { file }) })));
}

export const listCommandModule: CommandModule<object, { scenario: string[] }> = {
  command: 'list [scenario..]',
  describe: 'List the scenarios (built-in, or of files, folders and globs), and which need clock control',
  builder: (y: Argv) =>
    y
      .positional('scenario', { type: 'string', array: true, default: [], describe: 'Scenario files, folders or globs (default: the built-ins)' })
      .example(...example('$0 list', 'the built-in scenarios'))
      .example(...example("$0 list ./checks 'more/**/*.ts'", 'the scenarios of your own files')) as unknown as Argv<{ scenario: string[] }>,
  handler: async (args: ArgumentsCamelCase<{ scenario: string[] }>) => {
    process.stdout.write(`${args.scenario.length === 0 ? listScenarios() : await listScenarioFiles(args.scenario)}\n`);
  },
};
