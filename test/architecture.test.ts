/**
 * The layers of docs/architecture.md, checked on the import statements of every .ts file under
 * src/ and scenarios/: the engine stands alone, the renderers depend on their model only, http
 * never reaches into load or cli, load never into cli, no import cycles among src files, the
 * scenarios use keysim's public API only, and src/load keeps its rooms: other layers enter by the
 * doors, rooms import each other by their doors and only as the table of rooms allows.
 * Each rule is also run on a small in-memory repository that breaks it, so none passes vacuously.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { importGraph, parseImports } from './helpers/import-graph.js';
import { describeViolation, importCycles, layerViolations } from './helpers/layer-rules.js';
import { type RoomTable, doorEdges, roomOf, roomViolations, scenarioImportProblems, tableEdges } from './helpers/room-rules.js';

const REPO = fileURLToPath(new URL('..', import.meta.url));

/**
 * The rooms of src/load and which other rooms each may import (by their doors), from the bottom
 * up: docs/architecture.md#the-rooms-of-srcload draws it. A new arrow is a design decision: add it
 * here and there, or find the room the code belongs in. The table must stay free of cycles.
 */
const ROOMS: RoomTable = {
  answers: [],
  plan: [],
  rules: [],
  promises: [],
  http1: ['answers'],
  scenario: ['answers', 'http1', 'plan', 'promises'],
  target: ['answers', 'http1', 'scenario'],
  time: ['scenario'],
  history: ['answers', 'scenario', 'target', 'time'],
  metrics: ['rules'],
  invariants: ['history', 'promises'],
  oracle: ['history', 'invariants', 'promises', 'scenario', 'target'],
  resources: ['answers', 'scenario', 'target'],
  executors: ['answers', 'history', 'http1', 'metrics', 'plan', 'scenario', 'target'],
  run: ['answers', 'executors', 'history', 'http1', 'invariants', 'metrics', 'oracle', 'plan', 'promises', 'resources', 'rules', 'scenario', 'target', 'time'],
};

/** Every .ts file under the given folders, repository-relative path → text. */
function sources(...folders: string[]): Map<string, string> {
  const files = new Map<string, string>();
  for (const folder of folders) {
    for (const entry of readdirSync(join(REPO, folder), { recursive: true, encoding: 'utf8' })) {
      if (!entry.endsWith('.ts')) continue;
      const path = `${folder}/${entry.split('\\').join('/')}`;
      files.set(path, readFileSync(join(REPO, path), 'utf8'));
    }
  }
  return files;
}

const inSrc = (path: string) => path.startsWith('src/');

describe('the layers of the repository', () => {
  const files = sources('src', 'scenarios');
  const edges = importGraph(files);

  it('reads the whole tree (the engine, the CLI and the scenarios are among the files)', () => {
    expect(files.has('src/engine/engine.ts')).toBe(true);
    expect(files.has('src/cli/main.ts')).toBe(true);
    expect(files.has('scenarios/index.ts')).toBe(true);
    expect(edges.length).toBeGreaterThan(files.size);
  });

  it('no import breaks a layer rule', () => {
    expect(layerViolations(edges).map(describeViolation)).toEqual([]);
  });

  it('no import cycle among src files', () => {
    expect(importCycles(edges, inSrc).map((cycle) => cycle.join(' → '))).toEqual([]);
  });

  it("scenarios import keysim's public API only (src/index.ts), builtins, packages and each other", () => {
    expect(scenarioImportProblems(edges)).toEqual([]);
  });

  it('src/load keeps its rooms: other layers use the doors, rooms import each other by their doors and as the table allows', () => {
    expect(new Set([...files.keys()].map(roomOf).filter((room) => room !== undefined))).toEqual(new Set(Object.keys(ROOMS)));
    expect(roomViolations(files.keys(), edges, ROOMS)).toEqual([]);
  });

  it('no cycle among the rooms, in the imports nor in the table', () => {
    expect(importCycles(doorEdges(edges), inSrc).map((cycle) => cycle.join(' → '))).toEqual([]);
    expect(importCycles(tableEdges(ROOMS), inSrc).map((cycle) => cycle.join(' → '))).toEqual([]);
  });
});

/** An in-memory repository: path → text. */
const repo = (entries: Record<string, string>) => importGraph(new Map(Object.entries(entries)));
const violations = (entries: Record<string, string>) => layerViolations(repo(entries)).map(describeViolation);

describe('the checker on small repositories that break each rule', () => {
  it('reads import, export … from, import(…) and import type nodes, and which of them are erased', () => {
    const text = [
      "import { a } from './a.js';",
      "import type { B } from './b.js';",
      "import { type C } from './c.js';",
      "export { d } from './d.js';",
      "export type { E } from './e.js';",
      "import './f.js';",
      "const g = await import('./g.js');",
      "let h: import('./h.js').H;",
      "import { i } from 'node:fs';",
    ].join('\n');
    const edges = parseImports('src/x/y.ts', text, new Set(['src/x/a.ts']));
    expect(edges.map((edge) => [edge.specifier, edge.to, edge.typeOnly, edge.line])).toEqual([
      ['./a.js', 'src/x/a.ts', false, 1],
      ['./b.js', 'src/x/b.js', true, 2],
      // Under verbatimModuleSyntax `import { type C }` stays as `import {} from './c.js'`.
      ['./c.js', 'src/x/c.js', false, 3],
      ['./d.js', 'src/x/d.js', false, 4],
      ['./e.js', 'src/x/e.js', true, 5],
      ['./f.js', 'src/x/f.js', false, 6],
      ['./g.js', 'src/x/g.js', false, 7],
      ['./h.js', 'src/x/h.js', true, 8],
      ['node:fs', undefined, false, 9],
    ]);
  });

  it('the engine importing another layer or a package is reported; node: builtins and itself are not', () => {
    expect(
      violations({
        'src/engine/a.ts':
          "import { b } from './b.js';\nimport { createHash } from 'node:crypto';\nimport { server } from '../http/server.js';\nimport { z } from 'zod';",
        'src/engine/b.ts': '',
        'src/http/server.ts': '',
      }),
    ).toEqual([
      "src/engine/a.ts:3 imports '../http/server.js': src/engine imports only src/engine and node: builtins (the engine is pure and stands alone)",
      "src/engine/a.ts:4 imports 'zod': src/engine imports only src/engine and node: builtins (the engine is pure and stands alone)",
    ]);
  });

  it('report importing a value from the engine, load or a node: builtin is reported; import type from the engine is not', () => {
    const found = layerViolations(
      repo({
        'src/report/a.ts': [
          "import type { Engine } from '../engine/engine.js';",
          "import { Random } from '../engine/random.js';",
          "import { type Clock } from '../engine/clock.js';",
          "import { run } from '../load/runner.js';",
          "import { writeFileSync } from 'node:fs';",
          "import { build } from 'hdr-histogram-js';",
          "import { b } from './html/b.js';",
        ].join('\n'),
        'src/report/html/b.ts': '',
      }),
    );
    expect(found.map((violation) => violation.edge.line)).toEqual([2, 3, 4, 5]);
  });

  it('http importing load or cli is reported, even for a type', () => {
    expect(
      violations({
        'src/http/a.ts': "import type { Run } from '../load/runner.js';\nimport { main } from '../cli/main.js';\nimport { e } from '../engine/index.js';",
      }),
    ).toEqual([
      "src/http/a.ts:1 imports '../load/runner.js' (type only): src/http never imports src/load or src/cli",
      "src/http/a.ts:2 imports '../cli/main.js': src/http never imports src/load or src/cli",
    ]);
  });

  it('load importing cli is reported, http is not', () => {
    expect(violations({ 'src/load/invariants/a.ts': "import { x } from '../../cli/config.js';\nimport { s } from '../../http/index.js';" })).toEqual([
      "src/load/invariants/a.ts:1 imports '../../cli/config.js': src/load never imports src/cli",
    ]);
  });

  it('a cycle is found with its path, a self-import too, a chain or a cycle outside src is not', () => {
    const edges = repo({
      'src/a.ts': "import './b.js';",
      'src/b.ts': "import type { C } from './c.js';\nimport './d.js';",
      'src/c.ts': "import './a.js';",
      'src/d.ts': '',
      'src/e.ts': "import './e.js';",
      'scenarios/x.ts': "import './y.js';",
      'scenarios/y.ts': "import './x.js';",
    });
    expect(importCycles(edges, inSrc)).toEqual([
      ['src/a.ts', 'src/b.ts', 'src/c.ts', 'src/a.ts'],
      ['src/e.ts', 'src/e.ts'],
    ]);
    expect(importCycles(repo({ 'src/a.ts': "import './b.js';", 'src/b.ts': "import './c.js';", 'src/c.ts': '' }), inSrc)).toEqual([]);
  });

  it('a scenario importing anything but the public API, builtins, packages and scenario files is reported', () => {
    const edges = repo({
      'src/index.ts': '',
      'src/load/scenario/scenario.ts': '',
      'scenarios/old.ts': "import { defineScenario } from '../src/load/scenario/scenario.js';\nimport { x } from '../src/index.js';",
      'scenarios/new.ts': "import { common } from './support/common.js';\nimport { readFileSync } from 'node:fs';",
      'scenarios/support/common.ts':
        "import { defineScenario } from '../../src/index.js';\nimport { request } from 'undici';\nimport { e } from '../../src/engine/index.js';",
    });
    expect(scenarioImportProblems(edges)).toEqual([
      "scenarios/old.ts:1 imports '../src/load/scenario/scenario.js': a scenario imports keysim's public API (src/index.ts, `keysim` for a user's scenario); export what it needs from there",
      "scenarios/support/common.ts:3 imports '../../src/engine/index.js': a scenario imports keysim's public API (src/index.ts, `keysim` for a user's scenario); export what it needs from there",
    ]);
  });

  it('a room entered past its door, its own door imported, a room not in the table and a file outside the rooms are reported', () => {
    const table: RoomTable = { low: [], high: ['low'] };
    const entries = {
      'src/load/index.ts': "export * from './low/index.js';\nexport * from './high/index.js';",
      'src/load/low/index.ts': "export * from './a.js';",
      'src/load/low/a.ts': "import { b } from './b.js';",
      'src/load/low/b.ts': "import { c } from './index.js';\nimport { h } from '../high/index.js';",
      'src/load/high/index.ts': "export * from './h.js';",
      'src/load/high/h.ts': "import { a } from '../low/index.js';\nimport { b } from '../low/b.js';\nimport { l } from '../index.js';",
      'src/load/flat.ts': '',
      'src/cli/x.ts': "import { a } from '../load/low/index.js';\nimport { h } from '../load/index.js';\nimport { b } from '../load/low/b.js';",
    };
    expect(roomViolations(Object.keys(entries), repo(entries), table)).toEqual([
      'src/load/flat.ts lies in src/load outside any room: move it into the room of its concept (and list it in the rooms map)',
      "src/load/low/b.ts:1 imports './index.js': a room's files import their siblings directly, never their own door",
      "src/load/low/b.ts:2 imports '../high/index.js': room low may import only no other room (the table of rooms in test/architecture.test.ts)",
      "src/load/high/h.ts:2 imports '../low/b.js': another room is entered by its door, src/load/low/index.ts",
      "src/load/high/h.ts:3 imports '../index.js': a room never imports the layer's door (it re-exports this room too); import the room's door",
      "src/cli/x.ts:3 imports '../load/low/b.js': from outside src/load, import a room's door (src/load/<room>/index.ts) or src/load/index.ts",
    ]);
    expect(importCycles(doorEdges(repo(entries)), inSrc)).toEqual([['src/load/high/index.ts', 'src/load/low/index.ts', 'src/load/high/index.ts']]);
    expect(importCycles(tableEdges({ low: ['high'], high: ['low'] }), inSrc)).toEqual([
      ['src/load/high/index.ts', 'src/load/low/index.ts', 'src/load/high/index.ts'],
    ]);
    expect(importCycles(tableEdges(table), inSrc)).toEqual([]);
  });
});
