/**
 * The layers of docs/architecture.md, checked on the import statements of every .ts file under
 * src/ and scenarios/: the engine stands alone, the renderers depend on their model only, http
 * never reaches into load or cli, load never into cli, no import cycles among src files, and the
 * scenarios use keysim's public API (today's exceptions are a known list that may only shrink).
 * Each rule is also run on a small in-memory repository that breaks it, so none passes vacuously.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { importGraph, parseImports } from './helpers/import-graph.js';
import { describeViolation, importCycles, knownListProblems, layerViolations, scenarioInternals } from './helpers/layer-rules.js';

const REPO = fileURLToPath(new URL('..', import.meta.url));

/**
 * Scenarios that import keysim's internals instead of src/index.ts, as they do today: the
 * built-in scenarios predate the public API. A file or import not listed here fails the test,
 * and so does an entry that no longer offends, so that this list only ever shrinks.
 */
const KNOWN_SCENARIO_INTERNALS: Readonly<Record<string, readonly string[]>> = {
  'scenarios/credits-drain.ts': ['src/load/scenario-checks.ts', 'src/load/scenario-fixtures.ts', 'src/load/scenario.ts'],
  'scenarios/identities-crud.ts': ['src/load/scenario-checks.ts', 'src/load/scenario-fixtures.ts', 'src/load/scenario.ts'],
  'scenarios/index.ts': ['src/load/scenario.ts'],
  'scenarios/key-states.ts': ['src/load/scenario-checks.ts', 'src/load/scenario-fixtures.ts', 'src/load/scenario.ts'],
  'scenarios/limited-keys.ts': ['src/load/scenario-checks.ts', 'src/load/scenario-fixtures.ts', 'src/load/scenario.ts'],
  'scenarios/mixed.ts': [
    'src/engine/index.ts',
    'src/load/distributions.ts',
    'src/load/scenario-checks.ts',
    'src/load/scenario-fixtures.ts',
    'src/load/scenario.ts',
  ],
  'scenarios/plan-change.ts': ['src/load/scenario-checks.ts', 'src/load/scenario-fixtures.ts', 'src/load/scenario.ts'],
  'scenarios/ratelimit-live-edges.ts': ['src/load/scenario-checks.ts', 'src/load/scenario-clock.ts', 'src/load/scenario-fixtures.ts', 'src/load/scenario.ts'],
  'scenarios/ratelimit-rules.ts': ['src/load/scenario-checks.ts', 'src/load/scenario-fixtures.ts', 'src/load/scenario.ts'],
  'scenarios/ratelimit-window-edge.ts': ['src/load/scenario-checks.ts', 'src/load/scenario-clock.ts', 'src/load/scenario-fixtures.ts', 'src/load/scenario.ts'],
  'scenarios/refill-midnight.ts': ['src/load/scenario-checks.ts', 'src/load/scenario-clock.ts', 'src/load/scenario-fixtures.ts', 'src/load/scenario.ts'],
  'scenarios/refill-month-end.ts': ['src/load/scenario-checks.ts', 'src/load/scenario-clock.ts', 'src/load/scenario-fixtures.ts', 'src/load/scenario.ts'],
  'scenarios/smoke.ts': ['src/load/scenario-checks.ts', 'src/load/scenario-fixtures.ts', 'src/load/scenario.ts'],
  'scenarios/support/common.ts': ['src/load/scenario-checks.ts'],
  'scenarios/support/smoke-walk.ts': ['src/load/scenario-checks.ts', 'src/load/scenario-fixtures.ts', 'src/load/scenario.ts'],
  // Reads the target's Date with keysim's own HTTP client (its --ca, identity encoding): not public API yet.
  'scenarios/support/target-time.ts': [
    'src/load/http1/answer-body.ts',
    'src/load/http1/client.ts',
    'src/load/plan.ts',
    'src/load/scenario-checks.ts',
    'src/load/scenario-fixtures.ts',
    'src/load/scenario.ts',
  ],
  'scenarios/support/window-sweep.ts': ['src/load/scenario-checks.ts', 'src/load/scenario-clock.ts', 'src/load/scenario.ts'],
  'scenarios/verify-hot-keys.ts': [
    'src/engine/index.ts',
    'src/load/distributions.ts',
    'src/load/scenario-checks.ts',
    'src/load/scenario-fixtures.ts',
    'src/load/scenario.ts',
  ],
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

  it("scenarios import keysim's public API only, except the known list (which may only shrink)", () => {
    expect(knownListProblems(scenarioInternals(edges), KNOWN_SCENARIO_INTERNALS)).toEqual([]);
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
    expect(violations({ 'src/load/checks/a.ts': "import { x } from '../../cli/config.js';\nimport { s } from '../../http/index.js';" })).toEqual([
      "src/load/checks/a.ts:1 imports '../../cli/config.js': src/load never imports src/cli",
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

  it('a new scenario offender fails, and so does a known one that no longer offends', () => {
    const edges = repo({
      'src/index.ts': '',
      'src/load/scenario.ts': '',
      'src/load/checks.ts': '',
      'scenarios/old.ts': "import { defineScenario } from '../src/load/scenario/scenario.js';\nimport { x } from '../src/index.js';",
      'scenarios/new.ts': "import { okData } from '../src/load/checks.js';\nimport { common } from './support/common.js';",
      'scenarios/support/common.ts': "import { defineScenario } from '../../src/index.js';\nimport { request } from 'undici';",
    });
    const known = { 'scenarios/old.ts': ['src/load/scenario.ts', 'src/load/checks.ts'] };
    expect(knownListProblems(scenarioInternals(edges), known)).toEqual([
      "scenarios/new.ts imports src/load/checks.ts: a scenario imports keysim's public API (src/index.ts); export what it needs from there",
      'scenarios/old.ts no longer imports src/load/checks.ts: remove it from the known list of scenario internals',
    ]);
    expect(
      knownListProblems(scenarioInternals(edges), { ...known, 'scenarios/old.ts': ['src/load/scenario.ts'], 'scenarios/new.ts': ['src/load/checks.ts'] }),
    ).toEqual([]);
  });
});
