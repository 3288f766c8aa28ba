/**
 * The closed model's latency was labelled "corrected" in the summary, the Markdown, the HTML and
 * the JSON field docs, though the closed model has no intended send times to correct from: its
 * only latency is from the actual send. Now no rendering of a closed-model run says "corrected"
 * (nor shows a second, identical "uncorrected" column); an open-model run still shows both.
 */
import { describe, expect, test } from 'vitest';
import { renderSummary } from '../../src/cli/summary.js';
import { renderHtml, renderMarkdown } from '../../src/report/index.js';
import { closedCutOffReport, completedReport } from '../fixtures/reports.js';

/** What a reader of the page sees: no styles, no tags (class names are not labels). */
const visibleText = (html: string) => html.replace(/<style>[\s\S]*?<\/style>/g, '').replace(/<[^>]+>/g, ' ');

describe('the closed model has no intended send times: its latency is never labelled corrected', () => {
  const closed = closedCutOffReport();

  test('the summary, the Markdown and the HTML of a closed-model run never say corrected', () => {
    expect(closed.settings.model).toBe('closed');
    expect(renderSummary(closed)).not.toMatch(/corr/i);
    expect(renderMarkdown(closed)).not.toMatch(/corrected/i);
    expect(visibleText(renderHtml(closed))).not.toMatch(/corrected/i);
  });

  test('they say the latency is from the actual send', () => {
    expect(renderMarkdown(closed)).toContain('latency (from actual send)');
    expect(renderMarkdown(closed)).toContain('the closed model has no intended send times');
    const html = visibleText(renderHtml(closed));
    expect(html).toContain('from the actual send (the closed model has no intended send times)');
    expect(html).toContain('latency, from the actual send');
  });

  test('an open-model run still shows corrected beside uncorrected', () => {
    const open = completedReport();
    expect(open.settings.model).toBe('open');
    expect(renderSummary(open)).toContain('p99 uncorr.');
    expect(renderMarkdown(open)).toContain('corrected (from intended send)');
    expect(renderMarkdown(open)).toContain('p99 uncorrected');
    expect(visibleText(renderHtml(open))).toMatch(/p99 corrected/);
  });
});
