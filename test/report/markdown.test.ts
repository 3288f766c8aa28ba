/**
 * report.md: the PR summary carries the run's figures, marks interrupted and failed runs where
 * nobody can miss them, and survives hostile strings without broken tables or injected markup.
 */
import { describe, expect, it } from 'vitest';
import { renderMarkdown, type RunReport } from '../../src/report/index.js';
import { escapeMarkdown } from '../../src/report/markdown.js';
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
import { cells, tableStartingWith, tables } from './markdown-tables.js';
import { itRendersEveryFixtureCleanly } from './renderer-basics.js';

describe('renderMarkdown', () => {
  const fixtures = allFixtureReports();
  itRendersEveryFixtureCleanly(renderMarkdown);

  it.each(fixtures)('$name: every table has the same number of cells in every row, and a rule row', ({ report }) => {
    const md = renderMarkdown(report);
    const blocks = tables(md);
    expect(blocks.length).toBeGreaterThanOrEqual(5);
    for (const block of blocks) {
      const widths = block.map((line) => cells(line).length);
      expect(new Set(widths).size, block.join('\n')).toBe(1);
      expect(block[1], block.join('\n')).toMatch(/^\| (-{3}:?|-{3}) (\| (-{3}:?|-{3}) )*\|$/);
    }
  });

  it('a completed run: header, settings, environment, per-operation figures, totals', () => {
    const report = completedReport();
    const md = renderMarkdown(report);
    expect(md.startsWith('# keysim run: verify-mixed\n')).toBe(true);
    expect(md).toContain('**Status:** ✅ completed');
    expect(md).not.toMatch(/INTERRUPTED|FAILED|\[!WARNING\]|\[!CAUTION\]/);
    expect(md).toContain('| Seed | 42 |');
    expect(md).toContain('| Target | simulator · http://127.0.0.1:41237 |');
    expect(md).toContain('open model, 300.0 req/s intended · 32 connections');
    expect(md).toContain('30 s measured (planned 30 s, warm-up 5.0 s)');
    expect(md).toContain('Node v20.19.5 · linux/x64 · 2 × AMD EPYC 7763 64-Core Processor · 7.8 GiB');

    const latency = tableStartingWith(md, 'Operation');
    expect(latency[0]).toEqual(['Operation', 'Requests', 'Rate (req/s)', 'p50', 'p90', 'p95', 'p99', 'p99.9', 'max', 'p99 uncorrected']);
    for (const op of report.operations) {
      const row = latency.find((r) => r[0] === escapeMarkdown(op.operation));
      const c = op.latency.corrected;
      expect(row).toEqual([
        escapeMarkdown(op.operation),
        op.requests.toLocaleString('en-US'),
        op.ratePerSec.toFixed(1),
        ...[c.p50, c.p90, c.p95 ?? Number.NaN, c.p99, c.p999, c.max].map(formatMsValue),
        formatMsValue(op.latency.uncorrected.p99),
      ]);
    }
    expect(latency.at(-1)?.[0]).toBe('**all**');
    expect(latency.at(-1)?.[1]).toBe(`**${report.totals.requests.toLocaleString('en-US')}**`);

    const totals = tableStartingWith(md, 'Requests');
    expect(totals[0]).toEqual(['Requests', 'Errors', 'Rate (req/s)', 'Late sends (> 10 ms)', 'Dropped sends']);
    expect(totals[2]?.[0]).toBe('9,001');
    expect(totals[2]?.[3]).toBe(`${report.totals.late} (0.8%)`);
    expect(totals[2]?.[4]).toBe('0 (0.0%)');
  });

  it('shows the corrected and the uncorrected distribution side by side', () => {
    const report = completedReport();
    const table = tableStartingWith(renderMarkdown(report), 'All operations (ms)');
    const corrected = table.find((r) => r[0]?.startsWith('corrected'));
    const uncorrected = table.find((r) => r[0]?.startsWith('uncorrected'));
    expect(corrected?.[6]).toBe(formatMsValue(report.overall.latency.corrected.max));
    expect(uncorrected?.[6]).toBe(formatMsValue(report.overall.latency.uncorrected.max));
    // p95 beside the other percentiles (k6 users read it first).
    expect(corrected?.[3]).toBe(formatMsValue(report.overall.latency.corrected.p95 ?? Number.NaN));
    // The stall shows in the corrected tail only.
    expect(report.overall.latency.corrected.p999).toBeGreaterThan(10 * report.overall.latency.uncorrected.p999);
  });

  it('outcome tables: statuses, verification codes, allow/deny and transport errors per operation', () => {
    const report = completedReport();
    const md = renderMarkdown(report);
    const verify = report.operations.find((o) => o.operation === 'keys.verifyKey');
    const create = report.operations.find((o) => o.operation === 'keys.createKey');
    const limit = report.operations.find((o) => o.operation === 'ratelimit.limit');
    if (verify === undefined || create === undefined || limit === undefined) throw new Error('fixture operations');
    expect(md).toContain('**HTTP statuses**');
    expect(md).toContain('| Operation | 200 | 429 | 500 |');
    expect(md).toContain(`| keys.createKey | ${create.statuses['200']} | ${create.statuses['429']} | ${create.statuses['500']} |`);
    expect(md).toContain('| Operation | EXPIRED | NOT\\_FOUND | RATE\\_LIMITED | USAGE\\_EXCEEDED | VALID |');
    expect(md).toContain(`| ${(verify.codes['VALID'] ?? 0).toLocaleString('en-US')} |`);
    expect(md).toContain(`| ratelimit.limit | ${limit.ratelimit.allowed.toLocaleString('en-US')} | ${limit.ratelimit.denied} |`);
    expect(md).toContain(`| keys.createKey | ${create.transportErrors.timeout} | ${create.transportErrors.reset} | 0 | 0 |`);
  });

  it('requests cut off at the end of a closed-model phase: one line beside the transport errors, only when there are some', () => {
    const md = renderMarkdown(closedCutOffReport());
    expect(md).toContain(
      "**Cut off at a phase's end:** 4 requests (keys.verifyKey 3, ratelimit.limit 1) — sent, but their answers were abandoned when a closed-model phase ended: not errors, their effect is unknown.",
    );
    expect(md.indexOf("**Cut off at a phase's end:**")).toBeGreaterThan(md.indexOf('**Transport errors:** none.'));
    for (const { report } of allFixtureReports().filter((f) => f.name !== 'closed-cut-off')) expect(renderMarkdown(report)).not.toContain('Cut off');
  });

  it('an interrupted run is marked in the title, with a warning and the dropped sends', () => {
    const md = renderMarkdown(interruptedReport());
    expect(md.split('\n')[0]).toBe('# keysim run: month-end-refill — ⚠️ INTERRUPTED');
    expect(md).toContain('> [!WARNING]\n> **INTERRUPTED**');
    expect(md).toContain('1.4 s that were measured, and 5,860 planned sends were never made');
    expect(md).toContain('**Status:** ⚠️ **INTERRUPTED**');
    expect(md).toContain('| Status | **INTERRUPTED** |');
  });

  it('a failed empty run: marked, no figures invented, thresholds without data', () => {
    const md = renderMarkdown(emptyReport());
    expect(md.split('\n')[0]).toBe('# keysim run: smoke — ❌ FAILED');
    expect(md).toContain('> [!CAUTION]\n> **FAILED**');
    expect(md).toContain('| keys.verifyKey | 0 | 0.0 | – | – | – | – | – | – |');
    expect(md).toContain('**HTTP statuses:** no HTTP answers.');
    expect(md).toContain('**Transport errors:** none.');
    expect(md).toContain('| ❌ | p99(keys.verifyKey) \\< 20ms | no data | no data |');
    expect(md).toContain('**Checks:** none run.');
    expect(md).toContain('_No phases ran._');
  });

  it('failed thresholds and checks get ❌ rows and a failing summary line', () => {
    const report = failedThresholdsReport();
    const md = renderMarkdown(report);
    expect(md).toContain('**Thresholds:** ❌ 2/4 passed');
    expect(md).toContain('**Checks:** ❌ 1/3 passed');
    const thresholds = tableStartingWith(md, '');
    expect(thresholds[0]).toEqual(['', 'Threshold', 'Actual', 'Detail']);
    expect(thresholds.slice(2).map((r) => r[0])).toEqual(report.thresholds.map((t) => (t.passed ? '✅' : '❌')));
    expect(thresholds[2]?.[1]).toBe('p99(ratelimit.limit) \\< 20ms');
    expect(thresholds[2]?.[2]).toBe(String(report.thresholds[0]?.actual));
    expect(md).toContain('| ❌ | rate limit never exceeded | window 2026-03-02T10:15:09Z: 104 allowed, limit 100 |');
    expect(md).toContain('| ✅ | override applied | 3 overrides |');
  });

  it('hostile strings: no raw HTML, no links, no broken cells, no injected headings', () => {
    const md = renderMarkdown(hostileReport());
    expect(md).not.toMatch(/(?<!\\)<[a-zA-Z/!]/);
    expect(md).not.toMatch(/(?<!\\)\]\(/);
    const headings = md.split('\n').filter((line) => /^#{1,6}\s/.test(line));
    expect(headings.slice(1)).toEqual(['## Totals', '## Latency (ms)', '## Outcomes', '## Thresholds and checks', '## Invariants', '## Phases', '## Notes']);
    expect(md).toContain('\\<script\\>alert("pwned")\\</script\\> \\| pipes & "quotes"');
    expect(md).toContain('- multi line \\# heading attempt');
    expect(md).toContain('| Target | live · https://evil.example/?q=\\<script\\>alert(3)\\</script\\>&a=\\|b\\| |');
    expect(md).toContain('| ❌ | check \\| with \\<b\\>markup\\</b\\> | \\<script\\>alert("pwned")\\</script\\> second line \\| cell |');
  });

  it('figures that are not numbers read "n/a", never NaN', () => {
    const report: RunReport = { ...completedReport(), totals: { ...completedReport().totals, ratePerSec: Number.NaN, late: Number.POSITIVE_INFINITY } };
    const md = renderMarkdown(report);
    expect(md).not.toMatch(/NaN|Infinity/);
    expect(tableStartingWith(md, 'Requests')[2]?.[2]).toBe('n/a');
  });
});

describe('escapeMarkdown', () => {
  it('escapes table pipes, HTML, emphasis, code, links and headings, and keeps one line', () => {
    expect(escapeMarkdown('a|b')).toBe('a\\|b');
    expect(escapeMarkdown('<b>x</b>')).toBe('\\<b\\>x\\</b\\>');
    expect(escapeMarkdown('*x* _y_ `z` ~~s~~')).toBe('\\*x\\* \\_y\\_ \\`z\\` \\~\\~s\\~\\~');
    expect(escapeMarkdown('[t](javascript:x)')).toBe('\\[t\\](javascript:x)');
    expect(escapeMarkdown('# h')).toBe('\\# h');
    expect(escapeMarkdown('a\\|b')).toBe('a\\\\\\|b');
    expect(escapeMarkdown('one\ntwo\r\nthree')).toBe('one two three');
    expect(escapeMarkdown('keys.verifyKey 0.1.0')).toBe('keys.verifyKey 0.1.0');
  });
});
