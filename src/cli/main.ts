#!/usr/bin/env node
/** The `keysim` command line. Thin: each command is one module that wires the layers together. */
import { readFileSync } from 'node:fs';
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { EXIT } from './exit-codes.js';

function packageVersion(): string {
  const pkg: unknown = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
  return typeof pkg === 'object' && pkg !== null && 'version' in pkg && typeof pkg.version === 'string' ? pkg.version : '0.0.0';
}

export async function main(argv: string[]): Promise<void> {
  await yargs(argv)
    .scriptName('keysim')
    .usage(
      'keysim — a simulator, load runner and invariant checker for an API-key service\n\n' +
        'Usage: keysim <command> [options]\n\n' +
        'Status: the engine (the whole service as a model on a movable clock) is in place.\n' +
        'The commands serve, run, list, report and check arrive with the next issues (see README.md).',
    )
    .wrap(Math.min(100, process.stdout.columns ?? 100))
    .check((args) => {
      if (args._.length === 0) return true;
      return `Unknown command "${String(args._[0])}": this version of keysim has no commands yet (see --help).`;
    })
    .version(packageVersion())
    .alias('version', 'v')
    .help()
    .alias('help', 'h')
    .strict()
    .demandCommand(0)
    .fail((message: string | undefined, error: unknown, y) => {
      // Validation failures arrive as a message (or a YError): usage errors. Anything else is a bug.
      if (error instanceof Error && error.name !== 'YError') throw error;
      y.showHelp((help: string) => process.stderr.write(`${help}\n\n`));
      process.stderr.write(`${message ?? String(error)}\n`);
      process.exit(EXIT.usage);
    })
    .parseAsync();
}

main(hideBin(process.argv)).catch((error: unknown) => {
  process.stderr.write(`keysim: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(EXIT.failure);
});
