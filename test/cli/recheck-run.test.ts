/**
 * `keysim check`'s re-judgement of a run folder (src/cli/recheck-run.ts), on report.json files
 * written beside a saved journal: a re-check confirms or finds worse; when it cannot judge, the
 * run's own verdict stands and is said to be taken from the report.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { type JournalStart, createSimulator } from '../../src/http/index.js';
import { httpJsonClient } from '../../src/load/target/service-api.js';
import { EXIT } from '../../src/cli/exit-codes.js';
import { oracleVerdictOf, recheckRun, rejudgeThresholds, renderRecheck } from '../../src/cli/recheck-run.js';
import { JOURNAL_FILE, JournalFileWriter } from '../../src/load/history/journal-file.js';
import { renderJson } from '../../src/report/json.js';
import type { Measure, OracleSection, RunReport } from '../../src/report/model.js';
import { completedReport, invariantsCleanReport } from '../fixtures/reports.js';

/** A real journal start: the embedded simulator's answer to /_sim/journal.start. */
async function journalStart(): Promise<JournalStart> {
  const sim = await createSimulator({ seed: 1 });
  const client = httpJsonClient({ url: sim.url, rootKey: sim.rootKey });
  try {
    return ((await client.post('/_sim/journal.start', {}, 'root')).body as { data: JournalStart }).data;
  } finally {
    await client.close();
    await sim.close();
  }
}
const DIFFERS: OracleSection = {
  verdict: 'differs',
  compared: 10,
  skipped: 0,
  differences: 2,
  examples: [{ seq: 3, op: 'keys.verifyKey', field: 'credits', expected: '4', received: '5' }],
};

/** A run folder whose report says the oracle differs, and whose saved journal ended mid-run (a reset): its re-check cannot judge. */
async function folderWithUnjudgeableJournal(report: RunReport): Promise<string> {
  const folder = mkdtempSync(join(tmpdir(), 'keysim-recheck-'));
  writeFileSync(join(folder, 'report.json'), renderJson(report));
  const writer = await JournalFileWriter.create(join(folder, JOURNAL_FILE), await journalStart());
  await writer.close({ overflowed: false, endedBecause: 'the simulator was reset' });
  return folder;
}

describe('keysim check on a run folder', () => {
  test("check prefers a re-check that could not run (not-run) over the report's recorded differs, exiting 0 where run exited 100", async () => {
    const report = invariantsCleanReport();
    (report.invariants as NonNullable<RunReport['invariants']>).oracle = DIFFERS;
    const recheck = await recheckRun(await folderWithUnjudgeableJournal(report), [], true);
    expect(recheck.oracle.section?.verdict).toBe('not-run');
    expect(recheck.exitCode).toBe(EXIT.invariantViolated);
    expect(recheck.notRechecked.join('\n')).toMatch(/the run's report says the oracle differs \(2 differences\), and the verdict takes that from the report/);
    expect(renderRecheck(recheck).join('\n')).toMatch(/takes that from the report/);
  });

  test('a re-check confirms or finds worse; it never judges better than the run did', () => {
    const agrees: OracleSection = { verdict: 'agrees', compared: 10, skipped: 0, differences: 0, examples: [] };
    const notRun: OracleSection = { verdict: 'not-run', compared: 0, skipped: 0, differences: 0, examples: [], note: 'x' };
    expect(oracleVerdictOf(DIFFERS, agrees)).toEqual({ section: DIFFERS, fromReport: false });
    expect(oracleVerdictOf(agrees, agrees)).toEqual({ section: agrees, fromReport: false });
    expect(oracleVerdictOf(agrees, DIFFERS)).toEqual({ section: DIFFERS, fromReport: true });
    expect(oracleVerdictOf(notRun, DIFFERS)).toEqual({ section: DIFFERS, fromReport: true });
    expect(oracleVerdictOf(undefined, DIFFERS)).toEqual({ section: DIFFERS, fromReport: true });
    expect(oracleVerdictOf(notRun, undefined)).toEqual({ section: notRun, fromReport: false });
  });

  test("rejudgeThresholds silently drops a threshold expression it cannot parse: it keeps the report's result and says it was not re-judged", () => {
    const report = completedReport();
    report.thresholds = [
      { expression: 'p99(keys.verifyKey) < 1000ms', passed: true, actual: 5, detail: 'measured 5 ms' },
      { expression: 'p42 of the future < 1ms', passed: false, actual: 3, detail: 'measured 3 ms' },
    ];
    const rejudged = rejudgeThresholds(report);
    expect(rejudged.map((t) => t.expression)).toEqual(report.thresholds.map((t) => t.expression));
    expect(rejudged[1]).toMatchObject({ passed: false, actual: 3 });
    expect(rejudged[1]?.detail).toMatch(/not re-judged/);
  });
});

describe('keysim check keeps the scenario’s measures and measures the history’s again', () => {
  const lag: Measure = { name: 'lag.credits', title: 'lag', unit: 'ms', count: 3, p50: 0, p95: 11_000, max: 11_000, promise: 60_000, source: 'scenario' };
  const over: Measure = { name: 'credits.over-spend', title: 'over', unit: 'credits', count: 2, p50: 0, p95: 5, max: 5, source: 'history' };

  /** A run folder with a report (no journal) whose thresholds name both measures. */
  function folderWith(report: RunReport): string {
    const folder = mkdtempSync(join(tmpdir(), 'keysim-recheck-measures-'));
    writeFileSync(join(folder, 'report.json'), renderJson(report));
    return folder;
  }

  test('the history measures judged here replace the report’s; thresholds re-judged on them; the scenario’s kept', async () => {
    const report: RunReport = {
      ...completedReport(),
      measures: [lag, over],
      thresholds: [
        { expression: 'p95(lag.credits) < 60s', passed: true, actual: 11_000, detail: 'measured 11000 ms over 3 samples' },
        { expression: 'max(credits.over-spend) <= 5', passed: true, actual: 5, detail: 'measured 5 credits over 2 samples' },
      ],
    };
    const again: Measure = { ...over, count: 4, p95: 9, max: 9 };
    const recheck = await recheckRun(folderWith(report), [], true, [again]);
    expect(recheck.measures).toEqual([lag, again]);
    expect(recheck.thresholds?.map((t) => [t.expression, t.passed])).toEqual([
      ['p95(lag.credits) < 60s', true],
      ['max(credits.over-spend) <= 5', false],
    ]);
    expect(recheck.exitCode).toBe(EXIT.thresholdFailed);
    expect(renderRecheck(recheck).join('\n')).toContain(
      'measure  credits.over-spend p50 0 credits · p95 9 credits · max 9 credits — no promise, 4 samples (measured again over the history)',
    );
  });

  test('a history that measured nothing here leaves no history measure: a threshold on it fails, never passes on the report’s old figure', async () => {
    const report: RunReport = {
      ...completedReport(),
      measures: [over],
      thresholds: [{ expression: 'max(credits.over-spend) <= 5', passed: true, actual: 5, detail: 'measured 5 credits over 2 samples' }],
    };
    const recheck = await recheckRun(folderWith(report), [], true, []);
    expect(recheck.measures).toBeUndefined();
    expect(recheck.thresholds?.[0]).toMatchObject({ passed: false, actual: null });
  });
});
