/**
 * A run with stages: report.json keeps them (and a report without them still reads), the HTML
 * throughput chart draws the ramping target and the stage boundaries, Markdown a stages table.
 */
import { describe, expect, test } from 'vitest';
import { parseReport, renderHtml, renderJson, renderMarkdown, type RunReport } from '../../src/report/index.js';
import { completedReport } from '../fixtures/reports.js';

const STAGES = [
  { durationMs: 10_000, target: 300 },
  { durationMs: 15_000, target: 300 },
  { durationMs: 5_000, target: 0 },
];

function stagedReport(): RunReport {
  const base = completedReport();
  return {
    ...base,
    settings: { ...base.settings, durationMs: 30_000, warmupMs: 0, startRate: 0, stages: STAGES },
    phases: [{ name: 'load', startMs: 0, durationMs: 30_000, rate: 225, warmup: false, startRate: 0, stages: STAGES }],
  };
}

describe('a report with stages', () => {
  test('report.json keeps the stages of the settings and of the phase', () => {
    const parsed = parseReport(renderJson(stagedReport()));
    if (!parsed.ok) throw new Error(parsed.error);
    expect(parsed.report.settings.stages).toEqual(STAGES);
    expect(parsed.report.settings.startRate).toBe(0);
    expect(parsed.report.phases[0]?.stages).toEqual(STAGES);
  });

  test('a report written before stages existed still reads', () => {
    const parsed = parseReport(renderJson(completedReport()));
    expect(parsed.ok).toBe(true);
    if (parsed.ok) expect(parsed.report.settings.stages).toBeUndefined();
  });

  test('a stage with a negative target is refused by the reader', () => {
    const json = JSON.parse(renderJson(stagedReport())) as { settings: { stages: Array<{ target: number }> } };
    (json.settings.stages[0] as { target: number }).target = -1;
    expect(parseReport(JSON.stringify(json)).ok).toBe(false);
  });

  test('the HTML throughput chart draws the target rate through the stages and their boundaries', () => {
    const html = renderHtml(stagedReport());
    expect(html).toContain('class="line target stages"');
    expect(html.match(/class="stage-boundary"/g)?.length).toBe(2);
    expect(html).toContain('target rate (stages)');
    expect(html).toContain('225.0 req/s mean (stages)');
    expect(html).toContain('stages 10s:300 15s:300 5s:0 from 0 req/s');
    // The constant run keeps its flat line and draws no boundaries.
    const flat = renderHtml(completedReport());
    expect(flat).not.toContain('class="stage-boundary"');
    expect(flat).not.toContain('line target stages');
  });

  test('Markdown lists the stages in a table', () => {
    const md = renderMarkdown(stagedReport());
    expect(md).toContain('Stages of load');
    expect(md).toContain('225.0 req/s mean (stages)');
    expect(md).toMatch(/\| 1 \| \+0 ?ms \| 10(\.0)? ?s \| 0 → 300 req\/s \|/);
    expect(md).toMatch(/\| 3 \|.*\| 300 → 0 req\/s \|/);
    expect(md).toContain('open model, stages 10s:300 15s:300 5s:0 from 0 req/s');
    expect(renderMarkdown(completedReport())).not.toContain('Stages of');
  });
});
