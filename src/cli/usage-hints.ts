/**
 * What a usage error prints: the error in one line, the nearest known name when a flag, command or
 * scenario was mistyped ("did you mean --rate?"), and where the full help is — not the whole help,
 * whose hundred lines would bury the one that says what went wrong. The known names are yargs's
 * own (its options and commands at the point of failure), so a flag added anywhere is covered.
 */
import type { Argv } from 'yargs';
import { UsageError } from './exit-codes.js';
import { nearest } from './nearest-name.js';

/**
 * The parts of yargs's instance that its typings leave out: the options and commands known at the
 * point of failure (inside `run`, run's flags) and the commands being run.
 */
interface YargsInternals {
  getOptions?: () => { key: Record<string, unknown>; alias: Record<string, string[]>; number: string[] };
  getInternalMethods?: () => {
    getCommandInstance: () => { getCommands: () => string[] };
    getContext: () => { commands: string[] };
  };
}

interface Known {
  /** Every flag name and alias. */
  flags: string[];
  aliases: Record<string, string[]>;
  numberFlags: string[];
  commands: string[];
  /** The command being parsed (["run"]), empty at the top level. */
  context: string[];
}

function known(parser: Argv): Known {
  const y = parser as unknown as YargsInternals;
  const options = y.getOptions?.() ?? { key: {}, alias: {}, number: [] };
  const methods = y.getInternalMethods?.();
  return {
    flags: [...Object.keys(options.key), ...Object.values(options.alias).flat()].filter((k) => k !== '$0' && k !== '_'),
    aliases: options.alias,
    numberFlags: options.number,
    commands: methods?.getCommandInstance().getCommands() ?? [],
    context: methods?.getContext().commands ?? [],
  };
}

/** The names yargs reports in "Unknown argument(s): a, b", without the camelCase twins it adds. */
function unknownNames(message: string): string[] {
  const listed = /^Unknown arguments?: (.+)$/.exec(message.trim())?.[1]?.split(', ') ?? [];
  return listed.filter((name) => !(/[A-Z]/.test(name) && listed.includes(name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`))));
}

/** The lines printed for a usage error that yargs found (an unknown flag or command, a bad choice…). */
export function usageFailureLines(message: string, parser: Argv): string[] {
  const { flags, commands, context } = known(parser);
  const lines = [message];
  // A one-letter flag is too short to guess from.
  for (const name of unknownNames(message).filter((n) => n.length >= 3)) {
    // yargs names a flag without its dashes: at the top level a command is the likelier meaning.
    const flag = nearest(name, flags);
    const command = context.length === 0 ? nearest(name, commands) : undefined;
    const guess = command ?? (flag === undefined ? undefined : flag.length === 1 ? `-${flag}` : `--${flag}`);
    if (guess !== undefined) lines.push(`Did you mean ${guess}?`);
  }
  const where = context.length > 0 ? `keysim ${context.join(' ')} --help` : 'keysim --help';
  lines.push(`Run \`${where}\` for all ${context.length > 0 ? 'options' : 'commands and options'}.`);
  return lines;
}

/** What each numeric flag counts, for the error when it is given something else. */
const NUMBER_MEANINGS: Record<string, string> = {
  rate: 'a number of requests per second',
  'start-rate': 'a number of requests per second',
  connections: 'a number of connections',
  pipelining: 'a number of requests in flight per connection',
  seed: 'an integer',
  skew: 'a number of milliseconds',
  workers: 'a number of processes',
  'max-late-share': 'a share between 0 and 1 (e.g. 0.01 for 1 %)',
  port: 'a port number (0: any free port)',
  'max-body-bytes': 'a number of bytes',
  'restore-max-body-bytes': 'a number of bytes',
};

/**
 * What was given to `--name` (or an alias) in the raw arguments: its text, `null` when the flag
 * is there with no value, undefined when it is not there.
 */
function givenText(argv: readonly string[], names: readonly string[]): string | null | undefined {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--') break;
    for (const name of names) {
      const dashed = name.length === 1 ? `-${name}` : `--${name}`;
      if (arg.startsWith(`${dashed}=`)) return arg.slice(dashed.length + 1);
      if (arg !== dashed) continue;
      // A flag with no value: the next word is another flag (a negative number is a value), or there is none.
      const next = argv[i + 1];
      return next === undefined || /^--?[a-z]/i.test(next) ? null : next;
    }
  }
  return undefined;
}

/**
 * A middleware for yargs: a numeric flag given something that is not a number (yargs turns it into
 * NaN, which would be echoed back later as "got NaN") is a usage error naming what was given.
 */
export function rejectNonNumbers(parser: Argv, rawArgs: readonly string[]): (argv: Record<string, unknown>) => void {
  return (argv) => {
    const { numberFlags, aliases } = known(parser);
    for (const name of numberFlags) {
      const value = argv[name];
      const values = Array.isArray(value) ? value : [value];
      const given = givenText(rawArgs, [name, ...(aliases[name] ?? [])]);
      // yargs turns "abc" into NaN, and drops a flag with no value as if it were not given.
      if (!values.some((v) => typeof v === 'number' && Number.isNaN(v)) && given !== null) continue;
      throw new UsageError(`--${name} takes ${NUMBER_MEANINGS[name] ?? 'a number'}, got ${given === null || given === undefined ? 'nothing' : `"${given}"`}.`);
    }
  };
}
