/**
 * What a user sees after a usage error, and in --help: the error in one line with a "did you
 * mean" and where the help is (not the whole help), a numeric flag given a word named as such
 * (not echoed as NaN), and examples that can be pasted (one line each).
 */
import { afterAll, describe, expect, test } from 'vitest';
import { EXIT } from '../../src/cli/exit-codes.js';
import { editDistance } from '../../src/load/scenario/edit-distance.js';
import { nearest } from '../../src/cli/nearest-name.js';
import { cleanEnv, cleanUpCli, cli } from '../helpers/cli.js';

afterAll(cleanUpCli);

// Every test here is one or two short `keysim` processes that send no load: they run side by side
// (vitest's default, five at a time), which only their speed depends on.

/** The environment with the help's width set to `columns`, or to none (as when piped). */
function widthEnv(columns: number | undefined): NodeJS.ProcessEnv {
  const env = cleanEnv();
  delete env.COLUMNS;
  if (columns !== undefined) env.COLUMNS = String(columns);
  return env;
}

describe.concurrent('a usage error is one line, a guess and where the help is', () => {
  test('a flag typo (--rat) prints its error and "Did you mean --rate?", not 105 lines of help before it', async () => {
    const result = await cli(['run', 'smoke', '--rat', '5']);
    expect(result.code, result.stderr).toBe(EXIT.usage);
    expect(result.stderr.trim().split('\n')).toEqual(['Unknown argument: rat', 'Did you mean --rate?', 'Run `keysim run --help` for all options.']);
    expect(result.stdout).toBe('');
  });

  test('a flag cut short (--max-late) is matched to the flag it begins (--max-late-share), named once', async () => {
    const result = await cli(['run', 'smoke', '--max-late', '0.5']);
    expect(result.code, result.stderr).toBe(EXIT.usage);
    expect(result.stderr.match(/Did you mean --max-late-share\?/g)).toHaveLength(1);
  });

  test("the guess comes from yargs's own options of the command at hand (serve --prot → --port)", async () => {
    const result = await cli(['serve', '--prot', '0']);
    expect(result.code, result.stderr).toBe(EXIT.usage);
    expect(result.stderr).toContain('Did you mean --port?');
    expect(result.stderr).toContain('Run `keysim serve --help` for all options.');
  });

  test('a command typo (rnu) suggests run, and a scenario typo (smok) suggests smoke', async () => {
    const command = await cli(['rnu', 'smoke']);
    expect(command.code, command.stderr).toBe(EXIT.usage);
    expect(command.stderr).toContain('Did you mean run?');
    expect(command.stderr.split('\n').length).toBeLessThan(6);
    const scenario = await cli(['run', 'smok']);
    expect(scenario.code, scenario.stderr).toBe(EXIT.usage);
    expect(scenario.stderr).toMatch(/Unknown scenario "smok".*Did you mean smoke\?/);
  });

  test('nothing near enough: no guess, still the one-line error and where the help is', async () => {
    const result = await cli(['run', 'smoke', '--zzzzzz']);
    expect(result.code, result.stderr).toBe(EXIT.usage);
    expect(result.stderr).not.toContain('Did you mean');
    expect(result.stderr.trim().split('\n')).toHaveLength(2);
  });
});

describe.concurrent('a numeric flag given something else', () => {
  test.each([
    [['--rate', 'abc'], '--rate takes a number of requests per second, got "abc".'],
    [['--rate=12x'], '--rate takes a number of requests per second, got "12x".'],
    [['--connections', 'many'], '--connections takes a number of connections, got "many".'],
    [['--rate', '--duration', '2s'], '--rate takes a number of requests per second, got nothing.'],
  ])('--rate abc is named as given, not echoed as NaN: %j', async (flags, message) => {
    const result = await cli(['run', 'smoke', ...flags]);
    expect(result.code, result.stderr).toBe(EXIT.usage);
    expect(result.stderr).toContain(message);
    expect(result.stderr).not.toContain('NaN');
  });
});

/** The lines of the Examples section of a --help. */
function exampleLines(help: string): string[] {
  const start = help.indexOf('\nExamples:\n');
  expect(start, help).toBeGreaterThan(-1);
  return help
    .slice(start + '\nExamples:\n'.length)
    .split('\n')
    .filter((l) => l.trim() !== '');
}

/** An example as printed: a `# description` line, or a whole command (keysim first, perhaps after a variable). */
const EXAMPLE_LINE = /^ {2}(# \S.*|([A-Z_]+=\S+ )?keysim \S.*)$/;

describe.concurrent('help examples can be pasted', () => {
  test('help examples are not wrapped: keysim run --help at 80 columns prints each example on one line, its description on the line above', async () => {
    const result = await cli(['run', '--help'], widthEnv(80));
    expect(result.code, result.stderr).toBe(0);
    const lines = exampleLines(result.stdout);
    expect(
      lines.filter((l) => !EXAMPLE_LINE.test(l)),
      result.stdout,
    ).toEqual([]);
    expect(lines.filter((l) => l.startsWith('  #'))).toHaveLength(lines.length / 2);
    expect(lines).toContain('  keysim run credits-drain verify-hot-keys --rate 500 --duration 20s');
    // The options are still wrapped to the width.
    expect(result.stdout.split('\n').filter((l) => l.length > 80)).toEqual([]);
  });

  test.each(['run', 'list', 'check', 'cleanup', 'compare', 'merge', 'serve'])(
    'help examples are not wrapped when the help goes to a pipe: keysim %s --help',
    async (command) => {
      const result = await cli([command, '--help'], widthEnv(undefined));
      expect(result.code, result.stderr).toBe(0);
      expect(
        exampleLines(result.stdout).filter((l) => !EXAMPLE_LINE.test(l)),
        result.stdout,
      ).toEqual([]);
    },
  );
});

test('did-you-mean distances: a transposition is one edit, a prefix of a long flag matches it, far names do not', () => {
  expect(editDistance('rnu', 'run')).toBe(1);
  expect(editDistance('rate', 'rate')).toBe(0);
  expect(editDistance('', 'abc')).toBe(3);
  expect(nearest('rat', ['rate', 'seed', 'start-rate'])).toBe('rate');
  expect(nearest('max-late', ['max-loop-delay', 'max-late-share'])).toBe('max-late-share');
  expect(nearest('zzzzzz', ['rate', 'seed'])).toBeUndefined();
});
