/**
 * Loads a module of the user's project — a scenario file, a `keysim.config.ts` — whether it is
 * TypeScript or JavaScript, ES module or CommonJS, without a build step and without keysim being
 * built from source: tsx compiles TypeScript on the fly.
 *
 * `tsImport` rather than a global `register()`: in a project without `"type": "module"` a global
 * hook makes Node 20 require() the TypeScript file as an ES module in a cycle and fail, while
 * `tsImport` loads it either way. The price: the file's own `import … from 'keysim'` gets its own
 * instance of keysim's modules, so nothing may rely on module identity across that boundary
 * (`instanceof` on keysim's classes, module-level state). Scenarios are plain values, so none does.
 */
import { tsImport } from 'tsx/esm/api';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

/** Imports `file` (resolved against the working directory); throws an Error naming the file when it is missing or does not load. */
export async function importUserModule(file: string): Promise<Record<string, unknown>> {
  const path = resolve(file);
  if (!existsSync(path)) throw new Error(`${file}: no such file.`);
  try {
    return (await tsImport(pathToFileURL(path).href, import.meta.url)) as Record<string, unknown>;
  } catch (error) {
    const reason = error instanceof Error ? error.message.split('\n')[0] : String(error);
    throw new Error(`${file} could not be loaded: ${reason}`, { cause: error });
  }
}
