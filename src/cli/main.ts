#!/usr/bin/env node
/** The `keysim` command line. Thin: each command is one module that wires the layers together. */
import { readFileSync } from 'node:fs';
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { EXIT } from './exit-codes.js';
import { serveCommand } from './commands/serve.js';

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
        'Today: `serve` runs the simulator. The load runner (run, list, report) and the\n' +
        'history checker (check) arrive with the next issues (see README.md).',
    )
    .command(serveCommand)
    .wrap(Math.min(100, process.stdout.columns ?? 100))
    .version(packageVersion())
    .alias('version', 'v')
    .help()
    .alias('help', 'h')
    .strict()
    .demandCommand(1, 'Name a command: serve (see --help).')
    .recommendCommands()
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
