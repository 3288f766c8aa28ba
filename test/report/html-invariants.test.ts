/**
 * report.html's "Invariants" section: a verdict badge (and header badges when violated), a row
 * per invariant, every shown violation with its witness table (ISO times, service clock when
 * known), the oracle's differences; nothing when no history was recorded; still one
 * self-contained page, with no chart added and every string escaped.
 */
import { describe, expect, it } from 'vitest';
import { renderHtml, type InvariantsSection, type RunReport } from '../../src/report/index.js';
import { escapeHtml } from '../../src/report/html.js';
import { completedReport, hostileReport, interruptedReport, invariantsCleanReport, invariantsViolatedReport } from '../fixtures/reports.js';

function sectionOf(report: RunReport): InvariantsSection {
  if (report.invariants === undefined) throw new Error('the fixture has an invariants section');
  return report.invariants;
}

/** The `<section>` of the invariants. */
function invariantsPart(html: string): string {
  const match = html.match(/<section aria-labelledby="h-invariants">[\s\S]*?<\/section>/);
  if (match === null) throw new Error('no invariants section');
  return match[0];
}

/** Text content of the cells of every row of the tables with the given class. */
function rowsOf(html: string, tableClass: string): string[][] {
  const rows: string[][] = [];
  for (const [table] of html.matchAll(new RegExp(`<table class="${tableClass}">[\\s\\S]*?</table>`, 'g'))) {
    const body = table.match(/<tbody>([\s\S]*?)<\/tbody>/)?.[1] ?? '';
    for (const [, row] of body.matchAll(/<tr[^>]*>([\s\S]*?)<\/tr>/g)) {
      rows.push([...(row ?? '').matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)].map((m) => (m[1] ?? '').replace(/<[^>]+>/g, '')));
    }
  }
  return rows;
}

const iso = (ms: number) => new Date(ms).toISOString();

describe('renderHtml: invariants', () => {
  it('no history recorded: no section, no card, no badge', () => {
    const body = renderHtml(completedReport()).split('</style>')[1] ?? '';
    expect(body).toContain('<h2 id="h-phases">');
    expect(body).not.toMatch(/h-invariants|Invariants|invariants violated|oracle differs|verdict-/);
  });

  it('the section sits between the thresholds and checks and the phases, and adds no chart', () => {
    const report = invariantsViolatedReport();
    const html = renderHtml(report);
    const at = (id: string) => html.indexOf(`<h2 id="${id}">`);
    expect(at('h-verdicts')).toBeGreaterThan(0);
    expect(at('h-invariants')).toBeGreaterThan(at('h-verdicts'));
    expect(at('h-phases')).toBeGreaterThan(at('h-invariants'));
    expect(html.match(/<svg /g)).toHaveLength(report.operations.length + 5);
  });

  it('violated: badges by the title, a red card, and the verdict badge and meaning in the section', () => {
    const html = renderHtml(invariantsViolatedReport());
    expect(html).toContain(
      '<span class="status completed">completed</span><span class="status failed">invariants violated</span><span class="status failed">oracle differs</span></h1>',
    );
    expect(html).toContain(
      '<div class="card tone-error"><div class="card-label">Invariants</div><div class="card-value">violated</div><div class="card-detail">2/6 broken · 2 violations · oracle differs</div></div>',
    );
    const part = invariantsPart(html);
    expect(part).toContain('<h2 id="h-invariants">Invariants <span class="status verdict-violated">violated</span></h2>');
    expect(part).toContain(
      '<p class="verdict violated"><strong>Violated.</strong> 2 of 6 invariants broken (2 violations): the service gave answers that no correct service could give',
    );
    expect(part).toContain(
      'Checked 40 keys, 1,980 verifications and 410 rate-limit decisions over 2,412 operations recorded in <code>history.jsonl.gz</code>.',
    );
  });

  it('violated: a row per invariant, the broken ones marked', () => {
    const report = invariantsViolatedReport();
    const part = invariantsPart(renderHtml(report));
    expect(rowsOf(part, 'invariants')).toEqual(
      sectionOf(report).invariants.map((inv) => [
        inv.passed ? '✓ held' : '✗ violated',
        `${inv.id}${inv.title}`,
        inv.checked.toLocaleString('en-US'),
        String(inv.violations),
      ]),
    );
    expect(part.match(/<tr class="fail">/g)).toHaveLength(2 + 2); // two invariants, two oracle differences
  });

  it('violated: every violation with its message and a witness table with ISO times', () => {
    const report = invariantsViolatedReport();
    const section = sectionOf(report);
    const part = invariantsPart(renderHtml(report));
    expect(part).toContain('<h3>Violations</h3>');
    expect(part.match(/<div class="panel violation">/g)).toHaveLength(section.violations.length);
    expect(part).toContain(
      '<span class="badge fail">credits.no-over-spend</span> <code>key_3xk9</code> — #1817 keys.verifyKey was granted although at most 0 credits could be left (budget 2, 2 VALID answers before it) <span class="muted">(3 answers broke it; the earliest is shown)</span>',
    );
    expect(rowsOf(part, 'witness')).toEqual(
      section.violations.flatMap((v) =>
        v.witness.map((op) => [
          String(op.seq),
          op.op,
          op.request,
          op.outcome,
          `${iso(op.invokeMs)} → ${iso(op.completeMs)}`,
          op.serviceInvokeMs === undefined || op.serviceCompleteMs === undefined ? '—' : `${iso(op.serviceInvokeMs)} → ${iso(op.serviceCompleteMs)}`,
        ]),
      ),
    );
    expect(rowsOf(part, 'witness')).toContainEqual([
      '1817',
      'keys.verifyKey',
      'key_3xk9 cost 1',
      'VALID credits 0',
      '2026-03-02T10:15:09.375Z → 2026-03-02T10:15:09.379Z',
      '2026-01-31T23:59:34.375Z → 2026-01-31T23:59:34.379Z',
    ]);
  });

  it('violated: the oracle badge, line and differences', () => {
    const part = invariantsPart(renderHtml(invariantsViolatedReport()));
    expect(part).toContain('<h3>Oracle <span class="badge fail">✗ differs</span></h3>');
    expect(part).toContain('gives different answers for 3 of 2,318 compared operations (94 skipped). Operations with unknown outcomes were skipped.</p>');
    expect(part).toContain('<caption>Differences: 2 of 3, the earliest first</caption>');
    expect(rowsOf(part, 'oracle')).toEqual([
      ['1817', 'keys.verifyKey', 'code', 'USAGE_EXCEEDED', 'VALID'],
      ['1910', 'ratelimit.limit', 'success', 'false', 'true'],
    ]);
    expect(part).toContain('<h3>Notes</h3><ul class="notes"><li>3 verifications of keys created before the history started were not checked.</li></ul>');
  });

  it('clean: a green badge and card, nothing-to-check marked apart, the oracle agreeing, no violations', () => {
    const html = renderHtml(invariantsCleanReport());
    expect(html).not.toMatch(/invariants violated|oracle differs/);
    expect(html).toContain(
      '<div class="card tone-ok"><div class="card-label">Invariants</div><div class="card-value">clean</div><div class="card-detail">6/6 held · oracle agrees</div></div>',
    );
    const part = invariantsPart(html);
    expect(part).toContain('<span class="status verdict-clean">clean</span>');
    expect(part).toContain('<strong>Clean.</strong> Every invariant held (1,357 checks)');
    expect(rowsOf(part, 'invariants').find((row) => row[1]?.startsWith('credits.refill'))?.[0]).toBe('– nothing to check');
    expect(part).toContain('<h3>Oracle <span class="badge pass">✓ agrees</span></h3>');
    expect(part).not.toMatch(/class="panel violation"|<table class="witness"|<table class="oracle"/);
  });

  it("a segment's own verdict names what it left to the verdict across segments; a whole run's names nothing", () => {
    const whole = invariantsPart(renderHtml(invariantsCleanReport()));
    expect(whole).not.toMatch(/Not judged in one segment/);
    const report = invariantsCleanReport();
    const section = sectionOf(report);
    section.invariants = section.invariants.map((inv) =>
      inv.id === 'ratelimit.no-false-denial'
        ? { ...inv, notJudged: 1234 }
        : inv.id === 'credits.no-over-spend'
          ? { ...inv, notJudged: 7 }
          : { ...inv, notJudged: 0 },
    );
    const part = invariantsPart(renderHtml(report));
    expect(part).toContain(
      '<p class="muted not-judged">Not judged in one segment, left to the verdict across segments (<code>keysim merge</code> / <code>keysim check</code>): <code>credits.no-over-spend</code> (7), <code>ratelimit.no-false-denial</code> (1,234).</p>',
    );
  });

  it('not checked: an amber badge and how to check it, no invariants table', () => {
    const html = renderHtml(interruptedReport());
    expect(html).toContain('<div class="card tone-warn"><div class="card-label">Invariants</div><div class="card-value">not checked</div>');
    const part = invariantsPart(html);
    expect(part).toContain('<span class="status verdict-not-checked">not checked</span>');
    expect(part).toContain(
      '<strong>Not checked.</strong> The history was saved but its invariants were not checked (see the notes below); run <code>keysim check</code>',
    );
    expect(part).not.toContain('<table');
  });

  it.each([
    { name: 'violated', report: invariantsViolatedReport() },
    { name: 'clean', report: invariantsCleanReport() },
    { name: 'hostile', report: hostileReport() },
  ])('$name: still one self-contained page with nothing to fetch and no NaN', ({ report }) => {
    const html = renderHtml(report);
    expect(html).toContain(`<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">`);
    expect(html).not.toMatch(/<(script|iframe|img|object|embed|audio|video|base|form|link rel="stylesheet")\b|@import|url\(/i);
    expect(html.match(/<style>/g)).toHaveLength(1);
    for (const [tag] of html.matchAll(/<[a-z][^>]*>/gi)) {
      for (const [, attr, value] of tag.matchAll(/\s(src|href|xlink:href|action|srcset|xmlns)="([^"]*)"/gi)) {
        expect(attr === 'xmlns' ? value : `${attr}=${value}`, tag).toMatch(/^(href=data:,|http:\/\/www\.w3\.org\/2000\/svg)$/);
      }
    }
    expect(invariantsPart(html)).not.toMatch(/NaN|undefined|Infinity|\[object/);
  });

  it('hostile strings in the section are escaped', () => {
    const report = hostileReport();
    const section = sectionOf(report);
    const part = invariantsPart(renderHtml(report));
    expect(part).not.toMatch(/<(script|iframe|img|b|i|a|svg onload|style)[\s>]/i);
    const first = section.violations[0];
    const op = first?.witness[1];
    if (first === undefined || op === undefined) throw new Error('the hostile section has a witness');
    for (const text of [
      first.subject,
      first.message,
      op.request,
      op.outcome,
      op.op,
      section.history,
      section.oracle?.note ?? '',
      section.invariants[0]?.title ?? '',
    ]) {
      expect(part).toContain(escapeHtml(text));
    }
  });
});
