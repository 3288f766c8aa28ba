/** `keysim init [dir]`: a starter scenario and a vitest test in the user's project, both passing as written. */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs';
import { EXIT, type ExitCode, UsageError } from '../exit-codes.js';
import { FIRST_CHECK, FIRST_TEST } from '../init/starter-files.js';

interface InitArgs {
  dir: string;
  force: boolean;
}

/** The files `keysim init` writes, relative to the project folder. */
export const INIT_FILES: ReadonlyArray<{ path: string; text: string }> = [
  { path: 'checks/first-check.ts', text: FIRST_CHECK },
  { path: 'test/keysim.test.ts', text: FIRST_TEST },
];

/**
 * Writes the starter files into `dir`. Refuses (a UsageError naming them) when any exists, unless
 * `force`: nothing is written then. Returns what to print.
 */
export function initProject(dir: string, force: boolean): string {
  const existing = INIT_FILES.map((f) => f.path).filter((p) => existsSync(join(dir, p)));
  if (existing.length > 0 && !force) {
    throw new UsageError(
      `Not overwriting ${existing.join(' and ')} in ${dir === '.' ? 'this folder' : dir}: move ${existing.length > 1 ? 'them' : 'it'} away, or pass --force to overwrite.`,
    );
  }
  for (const file of INIT_FILES) {
    const path = join(dir, file.path);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, file.text);
  }
  const at = dir === '.' ? '' : dir;
  const cd = at === '' ? '' : `  cd ${at}\n`;
  return [
    `wrote ${INIT_FILES.map((f) => join(at, f.path)).join(' and ')}${existing.length > 0 ? ` (overwrote ${existing.join(', ')})` : ''}`,
    '',
    'next:',
    `${cd}  npx keysim run ./checks/first-check.ts     # the scenario, against the embedded simulator; report in ./reports`,
    '  npx keysim list ./checks                   # the scenarios of your checks folder',
    '  npx vitest run test/keysim.test.ts         # the simulator in a test (needs vitest: npm install -D vitest)',
    '',
    'Scenarios are plain files of your project: add more to checks/ and run them all with npx keysim run ./checks.',
  ].join('\n');
}

export const initCommandModule: CommandModule<object, InitArgs> = {
  command: 'init [dir]',
  describe: 'Write a starter scenario (checks/first-check.ts) and a vitest test (test/keysim.test.ts) into a project',
  builder: (y: Argv) =>
    y
      .positional('dir', { type: 'string', default: '.', describe: 'The project folder (default: the current one)' })
      .option('force', { type: 'boolean', default: false, describe: 'Overwrite the files if they exist' }) as unknown as Argv<InitArgs>,
  handler: (args: ArgumentsCamelCase<InitArgs>) => {
    process.stdout.write(`${initProject(args.dir, args.force)}\n`);
    process.exitCode = EXIT.ok satisfies ExitCode;
  },
};
