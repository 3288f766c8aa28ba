/** keysim's version, from its package.json (found by walking up: sources and build differ in depth). */
import { readFileSync } from 'node:fs';

let cached: string | undefined;

export function keysimVersion(): string {
  if (cached !== undefined) return cached;
  cached = '0.0.0';
  for (const up of ['../package.json', '../../package.json', '../../../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(up, import.meta.url), 'utf8')) as { name?: unknown; version?: unknown };
      if (pkg.name === 'keysim' && typeof pkg.version === 'string') {
        cached = pkg.version;
        break;
      }
    } catch {
      // not at this depth
    }
  }
  return cached;
}
