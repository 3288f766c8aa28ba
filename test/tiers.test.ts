/**
 * The unit tier stays what it says (test/tiers.ts): no listed file, nor a test helper it imports,
 * imports a network, process or worker module; and while a listed file runs, the setup file
 * refuses servers, sockets, processes and workers (this file is in the tier: it sees the refusals).
 */
import * as childProcess from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import * as net from 'node:net';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as workerThreads from 'node:worker_threads';
import { describe, expect, test } from 'vitest';
import { REFUSAL } from './helpers/unit-refusals.js';
import { UNIT_TESTS } from './tiers.js';

const REPO = fileURLToPath(new URL('..', import.meta.url));
/** This file imports them on purpose: to show the refusals below. */
const SELF = 'test/tiers.test.ts';

/** Modules that serve, connect, spawn or start threads (and clients that only talk over HTTP). */
const LIVE_MODULES = new Set(
  ['http', 'https', 'http2', 'net', 'tls', 'dgram', 'child_process', 'worker_threads', 'cluster']
    .flatMap((m) => [m, `node:${m}`])
    .concat(['undici', 'autocannon', 'playwright-core', '@unkey/api', '@unkey/ratelimit']),
);

/** Every module specifier of a file: static imports and re-exports, import(), require(). */
export function specifiersOf(text: string): string[] {
  const found = [...text.matchAll(/\bfrom\s+'([^']+)'|\bimport\s*\(\s*'([^']+)'\s*\)|\bimport\s+'([^']+)'|\brequire\s*\(\s*'([^']+)'\s*\)/g)];
  return found.map((m) => m[1] ?? m[2] ?? m[3] ?? m[4] ?? '');
}

/**
 * The live modules a test file reaches through its own text and the test-side files it imports
 * (helpers, fixtures), as "chain → module". The sources under src/ are not followed: importing a
 * module that could start a server is not starting one, and the runtime refusals catch a start.
 */
export function liveImportsOf(file: string, read: (path: string) => string = (p) => readFileSync(join(REPO, p), 'utf8')): string[] {
  const found: string[] = [];
  const seen = new Set<string>();
  const walk = (path: string, chain: string[]): void => {
    if (seen.has(path)) return;
    seen.add(path);
    for (const specifier of specifiersOf(read(path))) {
      if (LIVE_MODULES.has(specifier)) found.push(`${[...chain, path].join(' → ')} → ${specifier}`);
      if (!specifier.startsWith('.')) continue;
      const target = relative(REPO, resolve(REPO, dirname(path), specifier.replace(/\.js$/, '.ts')));
      if (target.startsWith('test/') && existsSync(join(REPO, target))) walk(target, [...chain, path]);
    }
  };
  walk(file, []);
  return found;
}

describe('the unit tier list', () => {
  test('names existing test files under test/, each once', () => {
    expect(UNIT_TESTS.length).toBeGreaterThan(50);
    expect(new Set(UNIT_TESTS).size).toBe(UNIT_TESTS.length);
    for (const file of UNIT_TESTS) {
      expect(file, 'a unit-tier entry is a test file under test/').toMatch(/^test\/.+\.test\.ts$/);
      expect(existsSync(join(REPO, file)), `${file} is listed in test/tiers.ts but does not exist`).toBe(true);
    }
  });

  test('a unit-tier file imported a network, process or worker module: no listed file or test helper it imports does', () => {
    const offending = UNIT_TESTS.filter((file) => file !== SELF).flatMap((file) => liveImportsOf(file));
    expect(offending, 'move these files to the live tier (out of test/tiers.ts), or their live helpers out of their imports').toEqual([]);
  });

  test('the import check can fail: a helper that starts a server is found through the file that imports it', () => {
    const files: Record<string, string> = {
      'test/x/a.test.ts': "import { serve } from '../helpers/fake-live.js';\nimport { fc } from 'fast-check';",
      'test/helpers/fake-live.ts': "import { createServer } from 'node:http';\nconst cp = await import('child_process');",
    };
    const read = (path: string) => files[path] ?? readFileSync(join(REPO, path), 'utf8');
    // fake-live.ts does not exist on disk: the walk only follows files that do, so check it directly too.
    expect(liveImportsOf('test/helpers/fake-live.ts', read)).toEqual(['test/helpers/fake-live.ts → node:http', 'test/helpers/fake-live.ts → child_process']);
    expect(liveImportsOf('test/load/runner.test.ts')).toContain('test/load/runner.test.ts → test/helpers/http.ts → undici');
    expect(specifiersOf("export { a } from './b.js';\nimport './c.js';\nconst d = require('node:net');")).toEqual(['./b.js', './c.js', 'node:net']);
  });

  test('npm run test:unit runs the unit project, npm test everything after the type-check, the lint and the format check', () => {
    const scripts = (JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
    expect(scripts['test:unit']).toBe('vitest run --project unit');
    expect(scripts.test).toBe('npm run typecheck && npm run lint && npm run format:check && vitest run');
  });
});

describe('while a unit-tier file runs', () => {
  test('listening, connecting, spawning and starting a worker throw, naming the tier', () => {
    expect(() => net.createServer().listen(0, '127.0.0.1')).toThrow(REFUSAL);
    expect(() => net.connect(9, '127.0.0.1')).toThrow(REFUSAL);
    expect(() => childProcess.spawnSync(process.execPath, ['-e', ''])).toThrow(`child_process.spawnSync() ${REFUSAL}`);
    expect(() => childProcess.execFile(process.execPath, ['-e', ''])).toThrow(REFUSAL);
    expect(() => new workerThreads.Worker('', { eval: true })).toThrow(`new Worker() ${REFUSAL}`);
  });

  test('fetch is refused too (it connects through node:net)', async () => {
    await expect(fetch('http://127.0.0.1:8089/')).rejects.toThrow();
    const error = await fetch('http://127.0.0.1:8089/').catch((e: unknown) => e);
    expect(String((error as Error & { cause?: unknown }).cause)).toContain(REFUSAL);
  });
});
