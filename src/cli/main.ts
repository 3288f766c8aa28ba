#!/usr/bin/env node
/** The `keysim` command line. Thin: each command is one module that wires the layers together. */
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { EXIT } from './exit-codes.js';
import { keysimVersion } from '../version.js';
import { serveCommand } from './commands/serve.js';
import { runCommandModule } from './commands/run.js';
import { listCommandModule } from './commands/list.js';
import { reportCommandModule } from './commands/report.js';
import { checkCommandModule } from './commands/check.js';
import { cleanupCommandModule } from './commands/cleanup.js';
import { compareCommandModule } from './commands/compare.js';
import { initCommandModule } from './commands/init.js';
import { mergeCommandModule } from './commands/merge.js';
import { UsageError } from './exit-codes.js';

export async function main(argv: string[]): Promise<void> {
  await yargs(argv)
    .scriptName('keysim')
    .usage(
      'keysim — a simulator, load runner and invariant checker for an API-key service\n\n' +
        'Usage: keysim <command> [options]\n\n' +
        'Exit codes: 0 ok, 1 failure, 2 usage, 3 target unreachable, 92 merged report partial (merge),\n' +
        '93 a watched figure worse (compare), 94 history truncated (check), 95 resources left behind,\n' +
        '96 target stopped answering, 97 generator-limited (inconclusive: the\n' +
        'load generator could not keep its schedule), 98 check failed, 99 threshold failed,\n' +
        '100 invariant violated or oracle difference, 130 interrupted (see README.md).',
    )
    .command(runCommandModule)
    .command(listCommandModule)
    .command(reportCommandModule)
    .command(checkCommandModule)
    .command(cleanupCommandModule)
    .command(compareCommandModule)
    .command(mergeCommandModule)
    .command(serveCommand)
    .command(initCommandModule)
    .wrap(Math.min(100, process.stdout.columns ?? 100))
    .version(keysimVersion())
    .alias('version', 'v')
    .help()
    .alias('help', 'h')
    .strict()
    .demandCommand(1, 'Name a command: run, list, report, merge, check, cleanup, compare, serve or init (see --help).')
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
  process.exit(error instanceof UsageError ? EXIT.usage : EXIT.failure);
});
