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
import { rejectNonNumbers, usageFailureLines } from './usage-hints.js';

export async function main(argv: string[]): Promise<void> {
  const parser = yargs(argv);
  await parser
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
    // The terminal's width, or none when the help goes to a file or a pipe (COLUMNS when set):
    // examples are one line each and must stay pasteable.
    .wrap(helpWidth())
    .locale('en')
    .version(keysimVersion())
    .alias('version', 'v')
    .help()
    .alias('help', 'h')
    .strict()
    .demandCommand(1, 'Name a command: run, list, report, merge, check, cleanup, compare, serve or init (see --help).')
    .middleware(rejectNonNumbers(parser, argv), true)
    .fail((message: string | undefined, error: unknown) => {
      // Validation failures arrive as a message (or a YError): usage errors. Anything else is a bug.
      if (error instanceof Error && error.name !== 'YError') throw error;
      // The error, a did-you-mean and where the help is: not the whole help.
      process.stderr.write(`${usageFailureLines(message ?? String(error), parser).join('\n')}\n`);
      process.exit(EXIT.usage);
    })
    .parseAsync();
}

/** Columns for the help: the terminal's, else COLUMNS, else none (no line is broken). */
function helpWidth(): number | null {
  const columns = process.stdout.columns ?? Number(process.env.COLUMNS);
  return Number.isFinite(columns) && columns > 0 ? columns : null;
}

main(hideBin(process.argv)).catch((error: unknown) => {
  process.stderr.write(`keysim: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(error instanceof UsageError ? EXIT.usage : EXIT.failure);
});
