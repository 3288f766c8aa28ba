/**
 * One verdict, said the same everywhere: for each report, the terminal summary with its final
 * line, report.md, report.html and the JUnit file say the headline, the reason and each item's
 * state that `runVerdict` gives, and the exit code is the one its cause names.
 */
import { describe, expect, test } from 'vitest';
import { exitCodeOf } from '../../src/cli/exit-code-of.js';
import { EXIT } from '../../src/cli/exit-codes.js';
import { renderSummary } from '../../src/cli/summary.js';
import { headlineOfExit, verdictLine } from '../../src/cli/verdict-line.js';
import { renderHtml } from '../../src/report/html.js';
import { escapeHtml } from '../../src/report/html/svg.js';
import { tallyText } from '../../src/report/html/outcome-charts.js';
import { escapeXml, renderJunit } from '../../src/report/junit.js';
import { escapeMarkdown, renderMarkdown } from '../../src/report/markdown.js';
import type { RunReport } from '../../src/report/model.js';
import { runVerdict } from '../../src/report/verdict.js';
import { completedReport, invariantsCleanReport, invariantsViolatedReport } from '../fixtures/reports.js';

function generatorLimited(report: RunReport): RunReport {
  return {
    ...report,
    generator: { limited: true, reasons: ['41 % of the sends were late'], limits: { lateShare: 0.01, loopDelayP99Ms: 50 }, phases: [], loadAverage: 0 },
  };
}

const REPORTS: Array<{ name: string; report: () => RunReport; headline: 'PASS' | 'FAIL' | 'INCONCLUSIVE'; code: number }> = [
  { name: 'pass', report: completedReport, headline: 'PASS', code: EXIT.ok },
  {
    name: 'threshold failed',
    report: () => {
      const r = completedReport();
      r.thresholds[0] = { expression: 'p99(keys.verifyKey) < 50ms', passed: false, actual: 67, detail: 'p99 was 67 ms' };
      return r;
    },
    headline: 'FAIL',
    code: EXIT.thresholdFailed,
  },
  {
    name: 'threshold inconclusive',
    report: () => {
      const r = generatorLimited(completedReport());
      r.thresholds[0] = {
        expression: 'p99(keys.verifyKey) < 50ms',
        passed: false,
        inconclusive: true,
        actual: 67,
        detail: 'not judged: the generator was limited',
      };
      return r;
    },
    headline: 'INCONCLUSIVE',
    code: EXIT.generatorLimited,
  },
  {
    name: 'oracle differs',
    report: () => {
      const r = invariantsCleanReport();
      const inv = r.invariants as NonNullable<RunReport['invariants']>;
      inv.oracle = {
        verdict: 'differs',
        compared: 1_003,
        skipped: 0,
        differences: 2,
        examples: [{ seq: 7, op: 'keys.verifyKey', field: 'credits', expected: '4', received: '5' }],
      };
      return r;
    },
    headline: 'FAIL',
    code: EXIT.invariantViolated,
  },
  { name: 'invariants violated', report: invariantsViolatedReport, headline: 'FAIL', code: EXIT.invariantViolated },
  {
    name: 'check failed',
    report: () => {
      const r = completedReport();
      r.checks[1] = { name: 'monthly refill applied once per key', passed: false, detail: '3 keys refilled twice' };
      return r;
    },
    headline: 'FAIL',
    code: EXIT.checkFailed,
  },
  {
    name: 'a check with nothing judged passes: every answer of the per-response check was lost',
    report: () => {
      const r = completedReport();
      r.checks[0] = {
        name: 'per-response checks',
        passed: true,
        detail: '0 answers passed; 40 requests got no answer (unknown)',
        counts: { failed: 0, total: 40, unanswered: 40 },
      };
      return r;
    },
    headline: 'INCONCLUSIVE',
    code: EXIT.generatorLimited,
  },
  {
    name: "a check with nothing judged passes: a scenario's check says it was not judged",
    report: () => {
      const r = completedReport();
      r.checks[1] = { name: 'walk: completed', passed: true, detail: 'not judged: 1 answer never came (504 from a gateway)' };
      return r;
    },
    headline: 'INCONCLUSIVE',
    code: EXIT.generatorLimited,
  },
  {
    name: 'a check with nothing judged passes: an oracle that compared no answer of a recorded history',
    report: () => {
      const r = invariantsCleanReport();
      const inv = r.invariants as NonNullable<RunReport['invariants']>;
      inv.oracle = { verdict: 'not-run', compared: 0, skipped: 12, differences: 0, examples: [], note: 'no recorded answer could be compared' };
      return r;
    },
    headline: 'INCONCLUSIVE',
    code: EXIT.generatorLimited,
  },
  {
    name: 'a check not judged does not hide a failed one',
    report: () => {
      const r = completedReport();
      r.checks[0] = { name: 'per-response checks', passed: true, detail: 'all lost', counts: { failed: 0, total: 40, unanswered: 40 } };
      r.checks[1] = { name: 'monthly refill applied once per key', passed: false, detail: '3 keys refilled twice' };
      return r;
    },
    headline: 'FAIL',
    code: EXIT.checkFailed,
  },
];

const MD_MARK = { PASS: '✅', FAIL: '❌', INCONCLUSIVE: '⚠️' } as const;
const HTML_MARK = { PASS: '✓', FAIL: '✗', INCONCLUSIVE: '?' } as const;

describe('one verdict in every rendering', () => {
  for (const c of REPORTS) {
    test(`${c.name}: the summary's final line, report.md, report.html and the JUnit file say the headline and reason of the exit code`, () => {
      const report = c.report();
      const v = runVerdict(report);
      const code = exitCodeOf(report);
      expect(code).toBe(c.code);
      expect(v.headline).toBe(c.headline);
      expect(headlineOfExit(code)).toBe(v.headline);

      const terminal = `${renderSummary(report)}\n${verdictLine(code, v.reason, { marks: false, color: false })}`;
      expect(terminal.split('\n').at(-1)).toBe(`${v.headline} (exit ${code}): ${v.reason}`);
      expect(renderMarkdown(report)).toContain(`**${MD_MARK[v.headline]} ${v.headline}** — ${escapeMarkdown(v.reason)}`);
      const html = renderHtml(report);
      expect(html).toContain(`${HTML_MARK[v.headline]} ${v.headline}</strong> <span class="run-headline-reason">${escapeHtml(v.reason)}</span>`);
      const junit = renderJunit([{ report }]);
      expect(junit).toContain(`<property name="verdict" value="${escapeXml(`${v.headline}: ${v.reason}`)}"/>`);

      // Item by item: as many failed and inconclusive thresholds and checks in each.
      const { thresholdTally: t, checkTally: k } = v;
      const summaryCount = (state: string, what: string) => terminal.split('\n').filter((l) => l.startsWith(`${state}  ${what} `)).length;
      expect(summaryCount('FAIL', 'threshold')).toBe(t.failed);
      expect(summaryCount('INCONCLUSIVE', 'threshold')).toBe(t.inconclusive);
      expect(summaryCount('FAIL', 'check')).toBe(k.failed);
      if (t.total > 0) expect(html).toContain(`Thresholds: ${tallyText(t)}`);
      if (k.total > 0) expect(html).toContain(`Checks: ${tallyText(k)}`);
      if (t.total > 0) expect(renderMarkdown(report)).toContain(`${t.passed}/${t.total} passed${t.inconclusive > 0 ? `, ${t.inconclusive} inconclusive` : ''}`);
      const brokenInvariants = v.invariants?.each.filter((i) => i.state === 'failed').length ?? 0;
      const failures = t.failed + k.failed + brokenInvariants + (v.oracle === 'differs' ? 1 : 0);
      expect(junit).toContain(`failures="${failures}"`);
      expect((junit.match(/<skipped message="inconclusive/g) ?? []).length).toBe(t.inconclusive);
      expect(summaryCount('INCONCLUSIVE', 'check')).toBe(k.inconclusive);
      expect((junit.match(/classname="[^"]*\.checks"[^>]*>\s*<skipped message="not judged/g) ?? []).length).toBe(k.inconclusive);
      // Every invariant's JUnit case is the state runVerdict gives it.
      const skippedInvariants = (junit.match(/classname="[^"]*\.invariants" name="(?!oracle:)[^"]*:[^"]*"[^>]*>\s*<skipped/g) ?? []).length;
      expect(skippedInvariants).toBe(v.invariants?.each.filter((i) => i.state === 'unexercised').length ?? 0);
    });
  }
});

test('an inconclusive threshold is not shown as a failed one in the HTML strip', () => {
  const report = REPORTS.find((c) => c.name === 'threshold inconclusive')?.report() as RunReport;
  const html = renderHtml(report);
  const strip = html.slice(html.indexOf('<svg class="chart verdicts"'), html.indexOf('</svg>', html.indexOf('<svg class="chart verdicts"')));
  expect(strip).toContain('<rect class="segment tone-warn"');
  expect(strip).toContain('p99(keys.verifyKey) &lt; 50ms: inconclusive');
  expect(strip).toContain('2/3 passed · 1 inconclusive');
  expect(strip).not.toMatch(/1 failed|tone-error/);
});

test('a run failed by its oracle is not headlined "clean" in the HTML report', () => {
  const report = REPORTS.find((c) => c.name === 'oracle differs')?.report() as RunReport;
  const html = renderHtml(report);
  expect(html).toContain('<div class="card-value">oracle differs</div>');
  expect(html).not.toContain('<div class="card-value">clean</div>');
  expect(renderMarkdown(report)).toContain('**Invariants:** ❌ **oracle differs**');
});
