/**
 * `keysim check --consistency` as a child process, on a history of a service with two regional
 * credit counters (an over-spend of 60 credits on a balance of 100, inside the production bound of
 * 100): within promise under production (exit 0), violated under exact (exit 100, the default).
 * A consistency or promise figure keysim does not know is a usage error (exit 2) naming it and what
 * is allowed.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { EXIT } from '../../src/cli/exit-codes.js';
import { HISTORY_FILE, HistoryWriter } from '../../src/load/history/history.js';
import { judgeInvariants } from '../../src/load/invariants/judge.js';
import { invariantsSection } from '../../src/load/invariants/invariants-section.js';
import { promiseSet } from '../../src/load/promises/index.js';
import { renderJson } from '../../src/report/json.js';
import { minimalReport } from '../helpers/report-fixture.js';
import { cleanUpCli, cli, tempDir } from '../helpers/cli.js';
import { twoRegionSpend } from '../helpers/promise-history.js';

let withinBound: string;
let beyondBound: string;
let runFolder: string;

async function write(file: string, events: ReturnType<typeof twoRegionSpend>['events']): Promise<void> {
  const writer = await HistoryWriter.create(file, { run: { scenario: 'credits-drain', seed: 1, target: 'live' } });
  for (const e of events) writer.record(e);
  await writer.close();
}

beforeAll(async () => {
  const dir = tempDir('keysim-consistency-');
  withinBound = join(dir, 'within.jsonl.gz');
  beyondBound = join(dir, 'beyond.jsonl.gz');
  await write(withinBound, twoRegionSpend(100, 100, 60).events);
  await write(beyondBound, twoRegionSpend(100, 100, 101).events);
  // A run folder whose report was judged under production, as `keysim run --consistency production` writes it.
  runFolder = join(dir, '20270115T120000Z-credits-drain');
  mkdirSync(runFolder);
  const events = twoRegionSpend(100, 100, 60).events;
  await write(join(runFolder, HISTORY_FILE), events);
  const judged = judgeInvariants(events, { wallSkewMs: 0, promises: promiseSet('production') });
  const report = { ...minimalReport({ operations: [] }), invariants: invariantsSection(judged, { operations: events.length }) };
  writeFileSync(join(runFolder, 'report.json'), renderJson(report));
});
afterAll(cleanUpCli);

test('check --consistency production: an over-spend within the bound is within promise, exit 0; exact (the default) exits 100', async () => {
  const production = await cli(['check', '--consistency', 'production', withinBound]);
  expect(production.stderr).toBe('');
  expect(production.code).toBe(EXIT.ok);
  expect(production.stdout).toMatch(/promise set: production \(regions 2, creditTtlMs 60000/);
  expect(production.stdout).toMatch(/credits\.no-over-spend\s+passed, within promise .*over-spend 60 credits ≤ bound 100/);
  const exact = await cli(['check', '--consistency', 'exact', withinBound]);
  expect(exact.code).toBe(EXIT.invariantViolated);
  expect((await cli(['check', withinBound])).code).toBe(EXIT.invariantViolated);
});

test('check --consistency production: an over-spend beyond the bound exits 100; --json names the state and the promise set', async () => {
  const text = await cli(['check', '--consistency', 'production', beyondBound]);
  expect(text.code).toBe(EXIT.invariantViolated);
  const json = await cli(['check', '--json', '--consistency', 'production', '--promise', 'regions=3', beyondBound]);
  // Three regions (overridden, but the history names two: the history's count wins).
  const verdict = JSON.parse(json.stdout) as {
    promises: { name: string; regions: number; regionsFrom: string };
    invariants: Array<{ id: string; state: string }>;
  };
  expect(verdict.promises).toMatchObject({ name: 'production', regions: 2, regionsFrom: 'history' });
  expect(verdict.invariants.find((i) => i.id === 'credits.no-over-spend')?.state).toBe('violated');
});

test('an unknown consistency or promise figure is a usage error naming it and what is allowed', async () => {
  const bogus = await cli(['check', '--consistency', 'bogus', withinBound]);
  expect(bogus.code).toBe(EXIT.usage);
  expect(bogus.stderr).toMatch(/--consistency bogus: unknown consistency model; use one of exact, production/);
  const nope = await cli(['check', '--consistency', 'production', '--promise', 'nope=1', withinBound]);
  expect(nope.code).toBe(EXIT.usage);
  expect(nope.stderr).toMatch(/--promise nope=1: unknown promise figure "nope"; use one of regions, creditTtlMs/);
  const notNumber = await cli(['check', '--promise', 'regions=two', withinBound]);
  expect(notNumber.code).toBe(EXIT.usage);
  expect(notNumber.stderr).toMatch(/--promise regions=two: the value of regions must be a number/);
});

test("check on a run folder judged under production: the same set gives the run's verdict; another set says how to judge as the run did", async () => {
  const same = await cli(['check', '--consistency', 'production', runFolder]);
  expect(same.code).toBe(EXIT.ok);
  expect(same.stdout).not.toMatch(/The run was judged against/);
  const other = await cli(['check', runFolder]);
  expect(other.code).toBe(EXIT.invariantViolated);
  expect(other.stdout).toMatch(
    /The run was judged against the promise set production .*this check judges against exact \(the default\)\. To judge as the run did, pass --consistency production/,
  );
});
