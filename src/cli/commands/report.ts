/** `keysim report <run folder | report.json>`: renders a report again from its JSON. */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs';
import { parseReport, renderHtml, renderJson, renderMarkdown } from '../../report/index.js';
import { UsageError } from '../exit-codes.js';
import { writeFileChecked } from '../report-files.js';

interface ReportArgs {
  path: string;
  format: 'md' | 'html' | 'json';
  output?: string;
}

export function reportCommand(args: ReportArgs): void {
  if (!existsSync(args.path)) throw new UsageError(`${args.path} does not exist: give a run folder (reports/<run>) or its report.json.`);
  const file = statSync(args.path).isDirectory() ? join(args.path, 'report.json') : args.path;
  if (!existsSync(file)) throw new UsageError(`${args.path} has no report.json.`);
  const parsed = parseReport(readFileSync(file, 'utf8'));
  if (!parsed.ok) throw new UsageError(`${file}: ${parsed.error}`);
  const text = args.format === 'md' ? renderMarkdown(parsed.report) : args.format === 'json' ? renderJson(parsed.report) : renderHtml(parsed.report);
  // HTML is for a browser: write it beside the JSON unless told where; text formats go to stdout.
  const output = args.output ?? (args.format === 'html' ? join(dirname(file), 'report.html') : undefined);
  if (output === undefined) {
    process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
  } else {
    // A failed write (a full disk) is an error naming the file, never an empty file left behind.
    writeFileChecked(output, text);
    process.stdout.write(`${output}\n`);
  }
}

export const reportCommandModule: CommandModule<object, ReportArgs> = {
  command: 'report <path>',
  describe: 'Render a report again from its report.json (md and json to stdout, html to a file)',
  builder: (y: Argv) =>
    y
      .positional('path', { type: 'string', demandOption: true, describe: 'A run folder or a report.json' })
      .option('format', { choices: ['md', 'html', 'json'] as const, default: 'md' as const, describe: 'Output format' })
      .option('output', { alias: 'o', type: 'string', describe: 'Write to this file instead' }) as unknown as Argv<ReportArgs>,
  handler: (args: ArgumentsCamelCase<ReportArgs>) => reportCommand(args),
};
