/**
 * The promise set in force and each invariant's verdict state in every report: built from a real
 * judgement of a 2-region over-spend within the production bound, rendered to JSON (read back),
 * Markdown, HTML and JUnit. Without a promise set the Markdown table keeps its five columns.
 */
import { describe, expect, test } from 'vitest';
import { judgeInvariants } from '../../src/load/invariants/judge.js';
import { invariantsSection } from '../../src/load/invariants/invariants-section.js';
import { promiseSet } from '../../src/load/promises/index.js';
import { parseReport, renderHtml, renderJson, renderJunit, renderMarkdown } from '../../src/report/index.js';
import type { RunReport } from '../../src/report/model.js';
import { twoRegionSpend } from '../helpers/promise-history.js';
import { minimalReport } from '../helpers/report-fixture.js';

function reportJudged(production: boolean): RunReport {
  const events = twoRegionSpend(100, 100, 60).events;
  const judged = judgeInvariants(events, { wallSkewMs: 0, ...(production ? { promises: promiseSet('production') } : {}) });
  return { ...minimalReport({ operations: [] }), invariants: invariantsSection(judged, { operations: events.length }) };
}

describe('under the production promise set', () => {
  const report = reportJudged(true);

  test('report.json carries the promise set and each state, and reads back', () => {
    const parsed = parseReport(renderJson(report));
    if (!parsed.ok) throw new Error(parsed.error);
    const section = parsed.report.invariants;
    expect(section?.promises).toMatchObject({ name: 'production', regions: 2, regionsFrom: 'history' });
    const overSpend = section?.invariants.find((i) => i.id === 'credits.no-over-spend');
    expect(overSpend).toMatchObject({ passed: true, state: 'within-promise' });
    expect(overSpend?.measured).toMatch(/over-spend 60 credits ≤ bound 100/);
    expect(section?.invariants.find((i) => i.id === 'ratelimit.no-over-admission')?.state).toBe('unknown');
    expect(section?.verdict).toBe('clean');
  });

  test('report.md names the set and gives each invariant its verdict', () => {
    const md = renderMarkdown(report);
    expect(md).toMatch(/Promise set: production \(regions 2/);
    expect(md).toMatch(/\| Verdict \|/);
    expect(md).toMatch(/within promise: over-spend 60 credits ≤ bound 100/);
  });

  test('report.html names the set and gives each invariant its verdict', () => {
    const html = renderHtml(report);
    expect(html).toMatch(/Promise set: production \(regions 2/);
    expect(html).toMatch(/within promise: over-spend 60 credits ≤ bound 100/);
  });

  test('JUnit passes a within-promise invariant, says by how much in system-out, and names the set', () => {
    const xml = renderJunit([{ report }]);
    expect(xml).toMatch(/<property name="consistency" value="production \(regions 2/);
    expect(xml).toMatch(/credits\.no-over-spend[^>]*>\s*<system-out>within promise: over-spend 60 credits ≤ bound 100/);
    expect(xml).not.toMatch(/<failure/);
  });
});

test('without a promise set the reports name none and the Markdown table has no verdict column', () => {
  const report = reportJudged(false);
  expect(report.invariants?.promises).toBeUndefined();
  expect(renderMarkdown(report)).not.toMatch(/Promise set|\| Verdict \|/);
  expect(renderJunit([{ report }])).toMatch(/<failure/);
});
