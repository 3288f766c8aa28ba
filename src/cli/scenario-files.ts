/**
 * The scenarios `keysim run` and `keysim list` are given: built-in names, files of the user's
 * project (`.ts .mts .cts .js .mjs .cjs`), folders (every such file directly in them) and globs.
 * A file's default export is a scenario, and so is every named export that looks like one
 * (an object with `setup` or `mix`): one run each. Everything is checked before any load, and a
 * problem is a usage error naming the file and what is wrong (docs/scenarios.md).
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { SCENARIOS } from '../../scenarios/index.js';
import { isRecord } from '../load/scenario/index.js';
import type { Scenario } from '../load/scenario/index.js';
import { asScenario, looksLikeScenario } from '../load/run/index.js';
import { UsageError } from './exit-codes.js';
import { expandGlob, isGlob } from './glob.js';
import { importUserModule } from './import-file.js';
import { nearest } from './nearest-name.js';

export const SCENARIO_FILE = /\.(?:ts|mts|cts|js|mjs|cjs)$/;
/** Not scenarios, though they end like one: type declarations and test files. */
const NOT_SCENARIO = /(?:\.d\.[cm]?ts|\.(?:test|spec)\.[cm]?[jt]s)$/;

/** A scenario and where it came from: a built-in's name or a file. */
export interface ScenarioSource {
  scenario: Scenario<unknown>;
  /** The file it was exported from; undefined for a built-in. */
  file?: string;
}

/** Whether an argument names files (a path, a file name, a glob) rather than a built-in. */
function isPathArgument(arg: string): boolean {
  return !(arg in SCENARIOS) && (/[\\/]/.test(arg) || SCENARIO_FILE.test(arg) || isGlob(arg) || existsSync(arg));
}

/** The files an argument stands for; throws a UsageError when there are none. */
export function filesOf(arg: string): string[] {
  if (isGlob(arg)) {
    const files = expandGlob(arg).filter((f) => SCENARIO_FILE.test(f) && !NOT_SCENARIO.test(f));
    if (files.length === 0) throw new UsageError(`${arg}: no scenario file (.ts .mts .cts .js .mjs .cjs) matches this glob.`);
    return files;
  }
  if (!existsSync(arg)) throw new UsageError(`${arg}: no such file or folder.`);
  if (statSync(arg).isDirectory()) {
    const files = readdirSync(arg)
      .filter((f) => SCENARIO_FILE.test(f) && !NOT_SCENARIO.test(f))
      .sort()
      .map((f) => join(arg, f));
    if (files.length === 0) throw new UsageError(`${arg}: the folder holds no scenario file (.ts .mts .cts .js .mjs .cjs).`);
    return files;
  }
  if (!SCENARIO_FILE.test(arg)) throw new UsageError(`${arg}: a scenario file ends in .ts, .mts, .cts, .js, .mjs or .cjs.`);
  return [arg];
}

/**
 * The scenarios a file exports: the default export and named ones that look like scenarios, each
 * checked. A CommonJS module's `exports` (which an import sees as its default) counts as its
 * named exports. Throws a UsageError naming the file when it does not load or exports no valid scenario.
 */
export async function scenariosOfFile(file: string): Promise<Scenario<unknown>[]> {
  let module: Record<string, unknown>;
  try {
    module = await importUserModule(file);
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  const candidates: Array<[string, unknown]> = [];
  const add = (label: string, value: unknown) => {
    if (!candidates.some(([, v]) => v === value)) candidates.push([label, value]);
  };
  let defaultExport = module.default;
  // TypeScript compiled as CommonJS: `export default x` is `exports.default`, seen here as default.default.
  if (isRecord(defaultExport) && !looksLikeScenario(defaultExport)) {
    const inner = defaultExport;
    defaultExport = inner.default;
    for (const [name, value] of Object.entries(inner)) if (name !== 'default' && looksLikeScenario(value)) add(`export "${name}"`, value);
  }
  if (defaultExport !== undefined) add('default export', defaultExport);
  for (const [name, value] of Object.entries(module)) {
    if (name !== 'default' && name !== 'module.exports' && looksLikeScenario(value)) add(`export "${name}"`, value);
  }
  if (candidates.length === 0) {
    throw new UsageError(
      `${file}: exports no scenario. Write: export default defineScenario({ name, description, setup, mix }) (defineScenario from 'keysim').`,
    );
  }
  return candidates.map(([label, value]) => {
    try {
      return asScenario(value, `${file}: its ${label}`);
    } catch (error) {
      throw new UsageError(error instanceof Error ? error.message : String(error));
    }
  });
}

/**
 * The scenarios the arguments name, in order, each file loaded once. Throws a UsageError for an
 * unknown name, a file that does not load or exports no valid scenario, and two scenarios of one
 * name (their reports would be confused).
 */
export async function resolveScenarios(args: readonly string[]): Promise<ScenarioSource[]> {
  const sources: ScenarioSource[] = [];
  const seen = new Set<string>();
  for (const arg of args) {
    if (!isPathArgument(arg)) {
      const builtIn = SCENARIOS[arg];
      if (builtIn === undefined) {
        const guess = nearest(arg, Object.keys(SCENARIOS));
        throw new UsageError(
          `Unknown scenario "${arg}": not a built-in (${Object.keys(SCENARIOS).join(', ')}; see keysim list), nor a file, folder or glob.${guess === undefined ? '' : ` Did you mean ${guess}?`}`,
        );
      }
      sources.push({ scenario: builtIn });
      continue;
    }
    for (const file of filesOf(arg)) {
      if (seen.has(file)) continue;
      seen.add(file);
      for (const scenario of await scenariosOfFile(file)) sources.push({ scenario, file });
    }
  }
  const byName = new Map<string, { where: string; scenario: Scenario<unknown> }>();
  for (const { scenario, file } of sources) {
    const where = file ?? 'the built-ins';
    const seenAs = byName.get(scenario.name);
    // The same built-in named twice runs twice, as it always did.
    if (seenAs?.scenario === scenario) continue;
    const first = seenAs?.where;
    if (first !== undefined)
      throw new UsageError(
        `Two scenarios are named "${scenario.name}" (${first === where ? `both in ${where}` : `in ${first} and in ${where}`}): give each its own name.`,
      );
    byName.set(scenario.name, { where, scenario });
  }
  return sources;
}
