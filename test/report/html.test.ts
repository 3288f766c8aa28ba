/**
 * report.html as text: one self-contained document (no scripts, nothing to fetch), accessible
 * SVG charts without NaN whatever the data, the run's figures, and every report string escaped.
 */
import { describe, expect, it } from 'vitest';
import { renderHtml, type RunReport, type TimelinePoint } from '../../src/report/index.js';
import { escapeHtml } from '../../src/report/html.js';
import { formatMsValue } from '../../src/report/format.js';
import {
  allFixtureReports,
  closedCutOffReport,
  completedReport,
  emptyReport,
  failedThresholdsReport,
  hostileReport,
  interruptedReport,
} from '../fixtures/reports.js';
import { itRendersEveryFixtureCleanly } from './renderer-basics.js';

function svgs(html: string): string[] {
  return html.match(/<svg[\s\S]*?<\/svg>/g) ?? [];
}

/** Charts: the overall spectrum, one per operation, throughput, latency over time, outcomes, verdicts. */
const expectedCharts = (report: RunReport) => report.operations.length + 5;

describe('renderHtml', () => {
  const fixtures = allFixtureReports();
  itRendersEveryFixtureCleanly(renderHtml);

  it.each(fixtures)('$name: a complete, self-contained document', ({ report }) => {
    const html = renderHtml(report);
    expect(html.startsWith('<!doctype html>\n<html lang="en">')).toBe(true);
    expect(html.trimEnd().endsWith('</html>')).toBe(true);
    expect(html).toContain('<meta charset="utf-8">');
    expect(html).toContain(`<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">`);
    expect(html).not.toMatch(/<(script|iframe|img|object|embed|audio|video|base|form)\b|@import|url\(/i);
    expect(html.match(/<style>/g)).toHaveLength(1);
    // No tag points anywhere: the only link is the empty data: icon, the only URL attribute the SVG namespace.
    for (const [tag] of html.matchAll(/<[a-z][^>]*>/gi)) {
      for (const [, attr, value] of tag.matchAll(/\s(src|href|xlink:href|action|srcset|xmlns)="([^"]*)"/gi)) {
        expect(attr === 'xmlns' ? value : `${attr}=${value}`, tag).toMatch(/^(href=data:,|http:\/\/www\.w3\.org\/2000\/svg)$/);
      }
    }
  });

  it.each(fixtures)('$name: every chart is an accessible SVG with something drawn', ({ report }) => {
    const charts = svgs(renderHtml(report));
    expect(charts).toHaveLength(expectedCharts(report));
    for (const svg of charts) {
      expect(svg).toMatch(/^<svg class="chart [^"]+" role="img" aria-label="[^"]+" viewBox="0 0 \d+ \d+"/);
      expect(svg).toMatch(/^<svg[^>]*><title>[^<]+<\/title>/);
      expect(svg).toMatch(/<(path|rect) /);
      // Coordinates are plain numbers.
      for (const [, value] of svg.matchAll(/ (?:x|y|width|height|cx|cy|r)="([^"]*)"/g)) expect(value).toMatch(/^-?\d+(\.\d+)?$/);
      for (const [, d] of svg.matchAll(/ d="([^"]*)"/g)) expect(d).toMatch(/^[MLHVhvZ0-9 .-]+$/);
    }
  });

  it('a completed run: title, figures per operation (corrected beside uncorrected), totals, late and dropped', () => {
    const report = completedReport();
    const html = renderHtml(report);
    expect(html).toContain('<title>keysim run: verify-mixed (completed)</title>');
    expect(html).toContain('<span class="status completed">completed</span>');
    expect(html).not.toContain('class="banner');
    expect(html).toContain('<div class="card-value">9,001</div>');
    expect(html).toContain(`<div class="card-label">Late sends</div><div class="card-value">${report.totals.late}</div>`);
    expect(html).toContain('<div class="card-label">Dropped sends</div><div class="card-value">0</div>');
    expect(html).toContain('simulator · http://127.0.0.1:41237');
    for (const op of report.operations) {
      const row = html.match(new RegExp(`<tr><th scope="row">${op.operation.replace('.', '\\.')}</th>(.*?)</tr>`))?.[1] ?? '';
      const values = [...row.matchAll(/<td class="num[^"]*">([^<]*)<\/td>/g)].map((m) => m[1]);
      const c = op.latency.corrected;
      const u = op.latency.uncorrected;
      expect(values).toEqual([
        op.requests.toLocaleString('en-US'),
        op.ratePerSec.toFixed(1),
        ...[c.p50, c.p90, c.p95, c.p99, c.p999, c.max, c.mean, u.p50, u.p90, u.p95, u.p99, u.p999, u.max, u.mean].map((v) => formatMsValue(v ?? Number.NaN)),
      ]);
    }
    // Spectrum: one corrected and one uncorrected curve per operation plus the overall ones, on each latency axis (log and linear).
    expect(html.match(/<path class="line corrected"/g)).toHaveLength(2 * (report.operations.length + 1));
    expect(html.match(/<path class="line uncorrected"/g)).toHaveLength(2 * (report.operations.length + 1));
    // Throughput: one bar per second; and the intended rate.
    expect(html.match(/<rect class="bar requests"/g)).toHaveLength(report.timeline.length);
    expect(html).toContain('intended 300.0/s');
    // Outcomes: every status and code of the overall breakdown.
    for (const label of ['HTTP 200', 'HTTP 429', 'HTTP 500', 'timeout (transport)', 'VALID', 'USAGE_EXCEEDED', 'allowed', 'denied']) {
      expect(html).toContain(`>${label}<title>`);
    }
    expect(html).toContain('3/3 passed');
  });

  it('requests cut off at the end of a closed-model phase: a table beside the transport errors, a bar, the errors card; only when there are some', () => {
    const html = renderHtml(closedCutOffReport());
    expect(html).toContain(
      '<caption>Cut off at a phase&#39;s end: sent, answer abandoned when a closed-model phase ended (not errors; effect unknown)</caption>',
    );
    expect(html).toContain(
      '<tr><th scope="row">keys.verifyKey</th><td class="num">3</td></tr><tr><th scope="row">ratelimit.limit</th><td class="num">1</td></tr>',
    );
    expect(html).toContain('>cut off (phase end)<title>');
    expect(html).toContain('4 cut off at a phase&#39;s end (not errors)');
    for (const { report } of allFixtureReports().filter((f) => f.name !== 'closed-cut-off')) expect(renderHtml(report)).not.toMatch(/cut off/i);
  });

  it('the spectrum axis runs in nines up to what the sample count resolves', () => {
    const html = renderHtml(completedReport());
    const overall = svgs(html)[0] ?? '';
    expect(overall).toContain('aria-label="Latency percentile spectrum, All operations:');
    for (const label of ['0%', '90%', '99%', '99.9%', '99.99%']) expect(overall).toContain(`>${label}</text>`);
    expect(overall).not.toContain('>99.999%<');
  });

  it('an interrupted run: banner, status and the dropped sends', () => {
    const html = renderHtml(interruptedReport());
    expect(html).toContain('<title>keysim run: month-end-refill (INTERRUPTED)</title>');
    expect(html).toContain('<span class="status interrupted">INTERRUPTED</span>');
    expect(html).toContain('<div class="banner interrupted" role="alert"><strong>Interrupted.</strong>');
    expect(html).toContain('1.4 s that were measured, and 5,860 planned sends were never made');
    // One timeline point still draws: a bar and a dot per series (on each latency axis, log and linear).
    expect(html.match(/<rect class="bar requests"/g)).toHaveLength(1);
    expect(html.match(/<circle class="dot p99"/g)).toHaveLength(2);
  });

  it('an empty failed run: banner, "no samples" charts, dashes instead of zero latencies', () => {
    const report = emptyReport();
    const html = renderHtml(report);
    expect(html).toContain('<div class="banner failed" role="alert">');
    expect(html.match(/class="no-data"[^>]*>no samples</g)).toHaveLength(report.operations.length + 1);
    expect(html.match(/class="no-data"[^>]*>no per-second data</g)).toHaveLength(2);
    expect(html).toContain('>no requests were answered<');
    expect(html).toContain('<div class="card-label">p99 corrected</div><div class="card-value">—</div>');
    expect(html).not.toContain('class="line corrected"');
    expect(html).toContain('>none defined<');
  });

  it('failed thresholds and checks: red segments, failed badges and rows', () => {
    const report = failedThresholdsReport();
    const html = renderHtml(report);
    expect(html).toContain('<span class="status failed">2 thresholds failed</span><span class="status failed">2 checks failed</span>');
    expect(html.match(/class="segment tone-error"/g)).toHaveLength(4);
    expect(html.match(/class="segment tone-ok"/g)).toHaveLength(3);
    expect(html).toContain('2/4 passed · 2 failed');
    expect(html).toContain('1/3 passed · 2 failed');
    expect(html.match(/<tr class="fail">/g)).toHaveLength(4);
    expect(html).toContain('<code>p99(ratelimit.limit) &lt; 20ms</code>');
  });

  it('hostile strings are escaped everywhere: text, attributes, titles', () => {
    const report = hostileReport();
    const html = renderHtml(report);
    expect(html).not.toMatch(/<(script|iframe|img|b|i|a|svg onload|link rel="stylesheet")[\s>]/i);
    expect(html).not.toContain('</style><style>');
    expect(html).toContain(`<h1>keysim run: &lt;script&gt;alert(&quot;pwned&quot;)&lt;/script&gt; | pipes &amp; &quot;quotes&quot; &#39;single&#39;<span`);
    expect(html).toContain('<title>keysim run: &lt;script&gt;alert(&quot;pwned&quot;)&lt;/script&gt;');
    expect(html).toContain('live · https://evil.example/?q=&lt;script&gt;alert(3)&lt;/script&gt;&amp;a=|b|');
    expect(html).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(html).toContain('<li>multi\nline\n# heading attempt</li>');
    // Every aria-label is a single well-formed attribute.
    for (const [, label] of html.matchAll(/aria-label="([^"]*)"/g)) expect(label).not.toMatch(/[<>]/);
  });

  it('a histogram that cannot be decoded falls back to the summary percentiles', () => {
    const report = completedReport();
    const op = report.operations[0];
    if (op === undefined) throw new Error('fixture has operations');
    op.histograms = { corrected: 'garbage', uncorrected: '' };
    const html = renderHtml(report);
    const chart = svgs(html)[1] ?? '';
    expect(chart).toContain('uncorrected (from summary percentiles)');
    expect(chart).toContain('<path class="line corrected"');
    expect(chart.match(/<circle class="dot corrected"/g)?.length).toBeGreaterThanOrEqual(4);
    expect(html).not.toMatch(/NaN|undefined|Infinity/);
  });

  it('an hour-long timeline is drawn as an area, in minutes', () => {
    const timeline: TimelinePoint[] = Array.from({ length: 3600 }, (_, second) => ({
      second,
      requests: 200 + (second % 17),
      errors: second % 97 === 0 ? 3 : 0,
      p50Ms: 1.2,
      p99Ms: 4 + (second % 13),
    }));
    const html = renderHtml({ ...completedReport(), timeline, measuredMs: 3_600_000 });
    expect(html).not.toContain('<rect class="bar requests"');
    expect(html).toContain('<path class="bar requests" d="M');
    expect(html).toContain('>60 min</text>');
    expect(html).not.toMatch(/NaN|undefined|Infinity/);
  });

  it('figures that are not numbers never reach the SVG or the text as NaN', () => {
    const base = completedReport();
    const report: RunReport = {
      ...base,
      measuredMs: Number.NaN,
      totals: { ...base.totals, ratePerSec: Number.NaN, late: Number.POSITIVE_INFINITY },
      timeline: [
        { second: Number.NaN, requests: 5, errors: 0, p50Ms: Number.NaN, p99Ms: 3 },
        { second: 1, requests: Number.NaN, errors: 0, p50Ms: 1, p99Ms: Number.POSITIVE_INFINITY },
      ],
      overall: { ...base.overall, latency: { ...base.overall.latency, corrected: { ...base.overall.latency.corrected, p99: Number.NaN } } },
    };
    const html = renderHtml(report);
    expect(html).not.toMatch(/NaN|undefined|Infinity/);
    expect(html).toContain('n/a');
  });
});

describe('escapeHtml', () => {
  it('escapes the five characters that matter in text and quoted attributes', () => {
    expect(escapeHtml(`<a href="x" title='y'>&amp;</a>`)).toBe('&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;amp;&lt;/a&gt;');
    expect(escapeHtml('plain text 1.0')).toBe('plain text 1.0');
  });
});
