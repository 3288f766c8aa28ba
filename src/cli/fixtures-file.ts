/**
 * The fixtures file of a shared set-up (docs/distributed.md#set-up-once): `keysim run --setup-only
 * --fixtures FILE` writes what the scenario's setup returned and the run's tag; segments given
 * `--fixtures FILE` skip the setup and use them. Fixtures cross processes and machines as JSON, so
 * a scenario's fixtures must be plain data (objects, arrays, strings, numbers, booleans, null): a
 * Map, a Date or a class instance does not survive, and is refused when the file is written.
 */
import { readFileSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import type { SharedFixtures } from '../load/run/index.js';
import { UsageError } from './exit-codes.js';
import { writeFileChecked } from './report-files.js';

export const FIXTURES_SCHEMA = 'keysim-fixtures';

export interface FixturesFile {
  schema: typeof FIXTURES_SCHEMA;
  version: 1;
  scenario: string;
  seed: number;
  /** The set-up's run tag: the segments name what they create after it, and `keysim cleanup --tag` deletes it all. */
  tag: string;
  /** The target the set-up ran against (no credentials). */
  target: string;
  fixtures: unknown;
  /**
   * The keys the set-up created, as (SHA-256 of the key, key id) pairs — recorded when the set-up
   * kept a history — so that segments' histories name them by id from their first request on.
   */
  keyIds?: Array<[string, string]>;
}

function isKeyIds(value: unknown): value is Array<[string, string]> {
  return Array.isArray(value) && value.every((pair) => Array.isArray(pair) && pair.length === 2 && typeof pair[0] === 'string' && typeof pair[1] === 'string');
}

/** Writes the file; refuses fixtures that JSON would change. */
export function writeFixturesFile(path: string, file: FixturesFile): void {
  let text: string;
  try {
    text = JSON.stringify(file, null, 2);
  } catch (error) {
    throw new Error(
      `The fixtures of "${file.scenario}" cannot be written as JSON (${error instanceof Error ? error.message : String(error)}): a scenario run in segments must return plain data from its setup.`,
      { cause: error },
    );
  }
  if (!isDeepStrictEqual((JSON.parse(text) as FixturesFile).fixtures, file.fixtures)) {
    throw new Error(
      `The fixtures of "${file.scenario}" do not survive JSON (a Map, a Set, a Date, undefined or a class instance): a scenario run in segments must return plain data from its setup.`,
    );
  }
  writeFileChecked(path, `${text}\n`);
}

/** Reads and checks a fixtures file for `scenario`. */
export function readFixturesFile(path: string, scenario: string): FixturesFile {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new UsageError(
      `--fixtures ${path} cannot be read as JSON (${error instanceof Error ? error.message : String(error)}): write it with keysim run ${scenario} --setup-only --fixtures ${path}.`,
    );
  }
  const file = parsed as Partial<FixturesFile>;
  if (file.schema !== FIXTURES_SCHEMA || file.version !== 1 || typeof file.tag !== 'string' || typeof file.scenario !== 'string') {
    throw new UsageError(`--fixtures ${path} is not a keysim fixtures file: write it with keysim run ${scenario} --setup-only --fixtures ${path}.`);
  }
  if (file.keyIds !== undefined && !isKeyIds(file.keyIds))
    throw new UsageError(
      `--fixtures ${path}: keyIds must be a list of [digest, key id] pairs: write the file with keysim run ${scenario} --setup-only --fixtures ${path}.`,
    );
  if (file.scenario !== scenario)
    throw new UsageError(`--fixtures ${path} holds the fixtures of "${file.scenario}", not of "${scenario}": give the file its set-up wrote.`);
  return file as FixturesFile;
}

/** The set-up's tag in a fixtures file, whatever its scenario (`keysim cleanup --fixtures FILE`). */
export function readFixturesTag(path: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new UsageError(
      `--fixtures ${path} cannot be read as JSON (${error instanceof Error ? error.message : String(error)}): give the file keysim run --setup-only --fixtures wrote.`,
    );
  }
  const file = parsed as Partial<FixturesFile> | null;
  if (file === null || typeof file !== 'object' || file.schema !== FIXTURES_SCHEMA || typeof file.tag !== 'string') {
    throw new UsageError(`--fixtures ${path} is not a keysim fixtures file: give the file keysim run --setup-only --fixtures wrote.`);
  }
  return file.tag;
}

/** The --setup-only callback: writes the fixtures file and says how to delete what the set-up made. */
export function fixturesWriter(path: string, scenario: string, seed: number, url: string): (fixtures: SharedFixtures) => void {
  return ({ value, tag, keyIds }) => {
    writeFixturesFile(path, {
      schema: FIXTURES_SCHEMA,
      version: 1,
      scenario,
      seed,
      tag,
      target: url,
      fixtures: value,
      ...(keyIds === undefined ? {} : { keyIds }),
    });
    process.stderr.write(
      `keysim: fixtures of "${scenario}" written to ${path} (tag ${tag}); after the segments: keysim cleanup --target ${url} --fixtures ${path}\n`,
    );
  };
}
