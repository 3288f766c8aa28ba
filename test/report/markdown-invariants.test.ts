/**
 * report.md's "Invariants" section: the verdict and what it means, a row per invariant, every
 * shown violation with its witness (ISO times, service clock when known), the oracle's
 * differences — and nothing at all when the run recorded no history.
 */
import { describe, expect, it } from 'vitest';
import { renderMarkdown, type InvariantsSection, type RunReport, type WitnessOperation } from '../../src/report/index.js';
import { escapeMarkdown } from '../../src/report/markdown.js';
import { completedReport, hostileReport, interruptedReport, invariantsCleanReport, invariantsViolatedReport } from '../fixtures/reports.js';
import { tablesStartingWith } from './markdown-tables.js';

function sectionOf(report: RunReport): InvariantsSection {
  if (report.invariants === undefined) throw new Error('the fixture has an invariants section');
  return report.invariants;
}

/** The text of the "## Invariants" section, up to the next heading. */
function invariantsPart(md: string): string {
  const start = md.indexOf('\n## Invariants\n');
  expect(start).toBeGreaterThan(0);
  const end = md.indexOf('\n## ', start + 1);
  return md.slice(start, end === -1 ? undefined : end);
}

const iso = (ms: number) => new Date(ms).toISOString();

/** A witness row as the renderer must write it. */
function witnessRow(op: WitnessOperation): string[] {
  return [
    String(op.seq),
    escapeMarkdown(op.op),
    escapeMarkdown(op.request),
    escapeMarkdown(op.outcome),
    `${iso(op.invokeMs)} → ${iso(op.completeMs)}`,
    op.serviceInvokeMs === undefined || op.serviceCompleteMs === undefined ? '–' : `${iso(op.serviceInvokeMs)} → ${iso(op.serviceCompleteMs)}`,
  ];
}

describe('renderMarkdown: invariants', () => {
  it('no history recorded: no section, no invariants in the status line', () => {
    const md = renderMarkdown(completedReport());
    expect(md).not.toMatch(/Invariants|Verdict|Oracle|Witness/);
  });

  it('the section sits between the thresholds and checks and the phases', () => {
    const headings = renderMarkdown(invariantsViolatedReport())
      .split('\n')
      .filter((line) => line.startsWith('## '));
    expect(headings).toEqual(['## Totals', '## Latency (ms)', '## Outcomes', '## Thresholds and checks', '## Invariants', '## Phases']);
  });

  it('violated: the verdict and what it means, in the section and in the status line', () => {
    const md = renderMarkdown(invariantsViolatedReport());
    expect(md).toContain('**Invariants:** ❌ **VIOLATED**, oracle ❌ **differs**');
    const part = invariantsPart(md);
    expect(part).toContain(
      '**Verdict:** ❌ **VIOLATED** — 2 of 6 invariants broken (2 violations): the service gave answers that no correct service could give',
    );
    expect(part).toContain('`keysim check` on the run folder re-checks the history.');
    expect(part).toContain('Checked 40 keys, 1,980 verifications and 410 rate-limit decisions over 2,412 operations recorded in history.jsonl.gz.');
  });

  it('violated: a row per invariant with its result, checks and violations', () => {
    const report = invariantsViolatedReport();
    const table = tablesStartingWith(invariantsPart(renderMarkdown(report)), '')[0] ?? [];
    expect(table[0]).toEqual(['', 'Invariant', 'Meaning', 'Checks', 'Violations']);
    expect(table.slice(2)).toEqual(
      sectionOf(report).invariants.map((inv) => [
        inv.passed ? '✅' : '❌',
        escapeMarkdown(inv.id),
        escapeMarkdown(inv.title),
        inv.checked.toLocaleString('en-US'),
        String(inv.violations),
      ]),
    );
    expect(
      table
        .slice(2)
        .filter((row) => row[0] === '❌')
        .map((row) => row[1]),
    ).toEqual(['credits.no-over-spend', 'ratelimit.no-over-admission']);
  });

  it('violated: every violation with its message, occurrences and a witness table with ISO times', () => {
    const report = invariantsViolatedReport();
    const section = sectionOf(report);
    const part = invariantsPart(renderMarkdown(report));
    expect(part).toContain('**Violations** (the earliest first, each with the operations that prove it)');
    expect(part).toContain(
      '**1. credits.no-over-spend** · key\\_3xk9: \\#1817 keys.verifyKey was granted although at most 0 credits could be left (budget 2, 2 VALID answers before it) (3 answers broke it; the earliest is shown)',
    );
    expect(part).toContain(
      '**2. ratelimit.no-over-admission** · burst/user\\_42: window from 2026-01-31T23:59:00.000Z: 4 admitted with an effective limit of 3\n',
    );
    const witnesses = tablesStartingWith(part, 'Seq').filter((t) => t[0]?.[1] === 'Operation' && t[0]?.[2] === 'Request');
    expect(witnesses).toHaveLength(section.violations.length);
    for (const [i, violation] of section.violations.entries()) {
      const table = witnesses[i] ?? [];
      expect(table[0]).toEqual(['Seq', 'Operation', 'Request', 'Outcome', 'Wall clock (sent → answered)', 'Service clock']);
      expect(table.slice(2)).toEqual(violation.witness.map(witnessRow));
    }
    // The exact rows of two witness operations: one with service times, one lost (wall times only).
    expect(part).toContain(
      '| 1790 | keys.verifyKey | key\\_3xk9 cost 1 | VALID credits 1 | 2026-03-02T10:15:09.310Z → 2026-03-02T10:15:09.312Z | 2026-01-31T23:59:34.310Z → 2026-01-31T23:59:34.312Z |',
    );
    expect(part).toContain(
      '| 1906 | ratelimit.limit | burst/user\\_42 limit 3/60000 ms cost 1 | unknown (no answer) | 2026-03-02T10:15:09.503Z → 2026-03-02T10:15:19.503Z | – |',
    );
  });

  it('violated: the oracle line and its differences', () => {
    const part = invariantsPart(renderMarkdown(invariantsViolatedReport()));
    expect(part).toContain(
      '**Oracle:** ❌ **differs** — replaying the realised order through a fresh engine gives different answers for 3 of 2,318 compared operations (94 skipped). Operations with unknown outcomes were skipped.',
    );
    expect(part).toContain('_Showing 2 of 3 differences, the earliest first._');
    const oracle = tablesStartingWith(part, 'Seq').find((t) => t[0]?.[2] === 'Field');
    expect(oracle).toEqual([
      ['Seq', 'Operation', 'Field', 'Expected (oracle)', 'Received (service)'],
      ['---:', '---', '---', '---', '---'],
      ['1817', 'keys.verifyKey', 'code', 'USAGE\\_EXCEEDED', 'VALID'],
      ['1910', 'ratelimit.limit', 'success', 'false', 'true'],
    ]);
    expect(part).toContain('**Notes**\n\n- 3 verifications of keys created before the history started were not checked.');
  });

  it('more violations than shown: says how many of how many', () => {
    const report = invariantsViolatedReport();
    const section = sectionOf(report);
    const part = invariantsPart(renderMarkdown({ ...report, invariants: { ...section, violationsTotal: 25 } }));
    expect(part).toContain('**Violations** (showing 2 of 25, the earliest first)');
    expect(part).toContain('(25 violations)');
  });

  it('clean: the verdict, an invariant with nothing to check marked apart, the oracle agreeing, no violations', () => {
    const report = invariantsCleanReport();
    const md = renderMarkdown(report);
    expect(md).toContain('**Invariants:** ✅ clean, oracle ✅ agrees');
    const part = invariantsPart(md);
    expect(part).toContain('**Verdict:** ✅ clean — every invariant held (1,357 checks)');
    expect(part).toContain('| ➖ | credits.refill | refills take effect at their boundary and replace the balance | 0 | 0 |');
    expect(part).toContain('➖ nothing in the history exercised it.');
    expect(part).toContain(
      '**Oracle:** ✅ agrees — replaying the realised order through a fresh engine gives the same answers for all 1,003 compared operations.',
    );
    expect(part).not.toMatch(/Violations\*\*|Witness|Wall clock|Expected \(oracle\)/);
  });

  it('not checked: says so and how to check it, without an invariants table', () => {
    const md = renderMarkdown(interruptedReport());
    expect(md).toContain('**Invariants:** ⚠️ not checked');
    const part = invariantsPart(md);
    expect(part).toContain(
      '**Verdict:** ⚠️ not checked — the history was saved but its invariants were not checked (see the notes below); run `keysim check` on the run folder',
    );
    expect(part).toContain('History: 141 operations recorded in history.jsonl.gz.');
    expect(part).toContain('- Interrupted: the history was saved but not checked (run keysim check on it).');
    expect(tablesStartingWith(part, '')).toEqual([]);
  });

  it('the oracle not run: says so, with its note', () => {
    const report = invariantsCleanReport();
    const section = sectionOf(report);
    const md = renderMarkdown({
      ...report,
      invariants: { ...section, oracle: { verdict: 'not-run', compared: 0, skipped: 0, differences: 0, examples: [], note: 'The target is live.' } },
    });
    expect(md.split('\n').find((line) => line.startsWith('**Status:**'))).toMatch(/ · \*\*Invariants:\*\* ✅ clean$/);
    expect(invariantsPart(md)).toContain('**Oracle:** ➖ not run. The target is live.');
  });

  it('hostile strings in the section are escaped: no raw HTML, no links, no extra cells or headings', () => {
    const part = invariantsPart(renderMarkdown(hostileReport()));
    expect(part).not.toMatch(/(?<!\\)<[a-zA-Z/!]/);
    expect(part).not.toMatch(/(?<!\\)\]\(/);
    expect(part.split('\n').filter((line) => /^#{1,6}\s/.test(line))).toEqual(['## Invariants']);
    expect(part).toContain('· key\\_\\<b\\>x\\</b\\>\\|y: \\<script\\>alert("pwned")\\</script\\> \\# not a heading \\| cell');
    expect(part).toContain('| key\\_\\<i\\>x\\</i\\> cost 1 \\| \\[link\\](javascript:alert(1)) | \\<img src=x onerror=alert(1)\\> \\| \\*VALID\\* |');
    expect(part).toContain('- \\- \\<script\\>');
    expect(part).toContain('- \\#\\# heading attempt');
  });
});
