/**
 * Finds and loads the configuration file of `keysim run`: `--config FILE`, or the one keysim.config
 * file in the working directory (.ts, .mts, .mjs, .js or .json), or none with `--no-config`.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { UsageError } from './exit-codes.js';
import { type RunConfig, checkConfig } from './config.js';
import { importUserModule } from './import-file.js';

export const CONFIG_FILES = ['keysim.config.ts', 'keysim.config.mts', 'keysim.config.mjs', 'keysim.config.js', 'keysim.config.json'] as const;

/**
 * `--config`: a file, false (`--no-config`: none), or undefined (look in `cwd`). Two candidate
 * files in one folder are refused: which one holds the settings is not something to guess.
 */
export async function loadRunConfig(option: string | boolean | undefined, cwd = process.cwd()): Promise<RunConfig | undefined> {
  if (option === false) return undefined;
  let file: string;
  if (typeof option === 'string') {
    if (!existsSync(option)) throw new UsageError(`--config ${option}: no such file.`);
    file = option;
  } else {
    const found = CONFIG_FILES.filter((name) => existsSync(join(cwd, name)));
    if (found.length === 0) return undefined;
    if (found.length > 1)
      throw new UsageError(`Found ${found.join(' and ')}: keep one configuration file, or choose one with --config FILE (--no-config: none).`);
    file = join(cwd, found[0] as string);
  }
  return checkConfig(await configValue(file), file);
}

async function configValue(file: string): Promise<unknown> {
  if (file.endsWith('.json')) {
    try {
      return JSON.parse(readFileSync(file, 'utf8')) as unknown;
    } catch (error) {
      throw new UsageError(`${file} is not valid JSON: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  let module: Record<string, unknown>;
  try {
    module = await importUserModule(file);
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  if (!('default' in module))
    throw new UsageError(`${file} has no default export: write export default defineConfig({ … }) (defineConfig comes from 'keysim').`);
  const value = module.default;
  // A CommonJS project can hand an ES default export over wrapped once more.
  if (value !== null && typeof value === 'object' && Object.keys(value).length === 1 && 'default' in value) return (value as { default: unknown }).default;
  return value;
}
