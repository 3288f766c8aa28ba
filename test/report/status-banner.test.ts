/**
 * The banner of a run that did not reach its planned end: one text, shown word for word by
 * report.md and report.html, and "interrupted" exactly when the run's verdict says so.
 */
import { describe, expect, it } from 'vitest';
import { renderHtml, renderMarkdown } from '../../src/report/index.js';
import { statusBanner } from '../../src/report/status-banner.js';
import { runVerdict } from '../../src/report/verdict.js';
import { allFixtureReports, completedReport, emptyReport, interruptedReport } from '../fixtures/reports.js';

describe('statusBanner', () => {
  it('an interrupted run: what was measured and the sends never made', () => {
    expect(statusBanner(interruptedReport())).toEqual({
      kind: 'interrupted',
      word: 'Interrupted',
      text: 'The run was stopped before its end: the figures cover only the 1.4 s that were measured, and 5,860 planned sends were never made.',
    });
  });

  it('a run that could not go on: its figures are partial; a completed run has no banner', () => {
    expect(statusBanner(emptyReport())).toEqual({
      kind: 'failed',
      word: 'Failed',
      text: 'The run could not go on; the figures are partial or empty. See the notes.',
    });
    expect(statusBanner(completedReport())).toBeUndefined();
  });

  it.each(allFixtureReports())('$name: says interrupted exactly when the verdict does, in the same words in report.md and report.html', ({ report }) => {
    const banner = statusBanner(report);
    expect(banner?.kind === 'interrupted').toBe(runVerdict(report).cause === 'interrupted');
    const md = renderMarkdown(report);
    const html = renderHtml(report);
    if (banner === undefined) {
      expect(md).not.toMatch(/\*\*(INTERRUPTED|FAILED)\*\* —/);
      expect(html).not.toMatch(/class="banner (interrupted|failed)"/);
      return;
    }
    expect(md).toContain(`> **${banner.word.toUpperCase()}** — ${banner.text}\n`);
    expect(html).toContain(`<div class="banner ${banner.kind}" role="alert"><strong>${banner.word}.</strong> ${banner.text}</div>`);
  });
});
