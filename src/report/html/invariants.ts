/**
 * The "Invariants" section of the report page: the history checkers' verdict as a badge, a table
 * of invariants, every shown violation with its witness, and the oracle's comparison. Strings
 * are untrusted and escaped; nothing here draws a chart.
 */
import type { InvariantsSection, InvariantViolation, OracleSection, WitnessOperation } from '../model.js';
import { formatCount, formatInstant, plural, seqText } from '../format.js';
import { esc } from './svg.js';
import { invariantsHeadlineOf } from '../verdict.js';
import type { Tone } from './outcome-charts.js';
import { invariantStateText, promisesText } from '../promise-text.js';

function cell(html: string, cls = ''): string {
  return `<td${cls === '' ? '' : ` class="${cls}"`}>${html}</td>`;
}

function head(label: string, cls = ''): string {
  return `<th scope="col"${cls === '' ? '' : ` class="${cls}"`}>${esc(label)}</th>`;
}

const VERDICT_LABEL: Record<InvariantsSection['verdict'], string> = { clean: 'clean', violated: 'violated', 'not-checked': 'not checked' };

/** What the summary card shows: the verdict, a detail line and its tone. */
export function invariantsCard(section: InvariantsSection): { value: string; detail: string; tone: Tone } {
  const differs = section.oracle?.verdict === 'differs';
  const oracle = section.oracle === undefined || section.oracle.verdict === 'not-run' ? '' : ` · oracle ${section.oracle.verdict}`;
  // The large value is the verdict's word for the section: an oracle that differs is never shown as clean.
  const value = invariantsHeadlineOf(section);
  switch (section.verdict) {
    case 'clean':
      return { value, detail: `${section.invariants.length}/${section.invariants.length} held${oracle}`, tone: differs ? 'error' : 'ok' };
    case 'violated': {
      const broken = section.invariants.filter((inv) => !inv.passed).length;
      return {
        value: 'violated',
        detail: `${broken}/${section.invariants.length} broken · ${plural(section.violationsTotal, 'violation')}${oracle}`,
        tone: 'error',
      };
    }
    case 'not-checked':
      return { value, detail: `history of ${plural(section.operations, 'operation')}${oracle}`, tone: differs ? 'error' : 'warn' };
  }
}

/** Red badges beside the title when an invariant was violated or the oracle disagrees. */
export function invariantsBadges(section: InvariantsSection | undefined): string {
  if (section === undefined) return '';
  let out = section.verdict === 'violated' ? `<span class="status failed">invariants violated</span>` : '';
  if (section.oracle?.verdict === 'differs') out += `<span class="status failed">oracle differs</span>`;
  return out;
}

function verdictParagraph(section: InvariantsSection): string {
  switch (section.verdict) {
    case 'clean': {
      const checks = section.invariants.reduce((n, inv) => n + inv.checked, 0);
      return (
        `<p class="verdict clean"><strong>Clean.</strong> Every invariant held (${esc(plural(checks, 'check'))}): no answer in the history contradicts the service's rules, ` +
        `whatever the order in which concurrent operations took effect.</p>`
      );
    }
    case 'violated': {
      const broken = section.invariants.filter((inv) => !inv.passed).length;
      return (
        `<p class="verdict violated"><strong>Violated.</strong> ${esc(formatCount(broken))} of ${esc(plural(section.invariants.length, 'invariant'))} broken ` +
        `(${esc(plural(section.violationsTotal, 'violation'))}): the service gave answers that no correct service could give, whatever the order in which concurrent ` +
        `operations took effect. <code>keysim check</code> on the run folder re-checks the history.</p>`
      );
    }
    case 'not-checked':
      return (
        `<p class="verdict not-checked"><strong>Not checked.</strong> The history was saved but its invariants were not checked${section.notes.length > 0 ? ' (see the notes below)' : ''}; ` +
        `run <code>keysim check</code> on the run folder to check it.</p>`
      );
  }
}

function scopeParagraph(section: InvariantsSection): string {
  const c = section.checked;
  const where = `${esc(plural(section.operations, 'operation'))} recorded in <code>${esc(section.history)}</code>`;
  if (section.verdict === 'not-checked') return `<p class="muted">History: ${where}.</p>`;
  return (
    `<p class="muted">Checked ${esc(plural(c.keys, 'key'))}, ${esc(plural(c.verifications, 'verification'))} and ` +
    `${esc(plural(c.rateLimitChecks, 'rate-limit decision'))} over ${where}.</p>`
  );
}

function invariantsTable(section: InvariantsSection): string {
  if (section.invariants.length === 0) return '';
  const promised = section.promises !== undefined;
  const badge = (passed: boolean, checked: number) =>
    passed
      ? checked === 0
        ? '<span class="badge neutral">– nothing to check</span>'
        : '<span class="badge pass">✓ held</span>'
      : '<span class="badge fail">✗ violated</span>';
  const rows = section.invariants
    .map(
      (inv) =>
        `<tr class="${inv.passed ? 'pass' : 'fail'}">${cell(badge(inv.passed, inv.checked))}${cell(`<code>${esc(inv.id)}</code><div class="muted">${esc(inv.title)}</div>`)}` +
        `${cell(esc(formatCount(inv.checked)), 'num')}${cell(esc(formatCount(inv.violations)), 'num')}${promised ? cell(esc(invariantStateText(inv))) : ''}</tr>`,
    )
    .join('');
  return (
    (section.promises === undefined ? '' : `<p class="promises">Promise set: ${esc(promisesText(section.promises))}.</p>`) +
    `<div class="table-wrap"><table class="invariants"><caption>Invariants</caption><thead><tr>${head('Result')}${head('Invariant')}${head('Checks', 'num')}${head('Violations', 'num')}${promised ? head('Verdict') : ''}</tr></thead>` +
    `<tbody>${rows}</tbody></table></div>${notJudgedParagraph(section)}`
  );
}

/**
 * A segment's own verdict (docs/checking.md#one-segments-own-verdict): what it could not judge
 * alone and left to the verdict across segments; nothing outside a segment.
 */
function notJudgedParagraph(section: InvariantsSection): string {
  const left = section.invariants.filter((inv) => (inv.notJudged ?? 0) > 0);
  if (left.length === 0) return '';
  const items = left.map((inv) => `<code>${esc(inv.id)}</code> (${esc(formatCount(inv.notJudged ?? 0))})`).join(', ');
  return `<p class="muted not-judged">Not judged in one segment, left to the verdict across segments (<code>keysim merge</code> / <code>keysim check</code>): ${items}.</p>`;
}

/** A clock bracket as HTML; a line may break at the arrow only. */
function bracket(fromMs: number | undefined, toMs: number | undefined): string {
  if (fromMs === undefined && toMs === undefined) return '—';
  const at = (ms: number | undefined) => `<span class="time">${esc(ms === undefined ? '?' : formatInstant(ms))}</span>`;
  return `${at(fromMs)} → ${at(toMs)}`;
}

/** The operations that prove a violation, one row each, with wall and service times (ISO 8601). */
function witnessTable(witness: readonly WitnessOperation[]): string {
  if (witness.length === 0) return '<p class="muted">No witness recorded.</p>';
  const text = (s: string) => (s.trim() === '' ? '—' : esc(s));
  const rows = witness
    .map(
      (op) =>
        `<tr>${cell(esc(op.origin === undefined ? seqText(op.seq) : `${seqText(op.seq)} (${op.origin})`), 'num')}${cell(`<code>${esc(op.op)}</code>`, 'op')}${cell(text(op.request), 'summary')}${cell(text(op.outcome), 'summary')}` +
        `${cell(bracket(op.invokeMs, op.completeMs))}${cell(bracket(op.serviceInvokeMs, op.serviceCompleteMs))}</tr>`,
    )
    .join('');
  return (
    `<div class="table-wrap"><table class="witness"><caption>Witness: the operations that prove it</caption><thead><tr>` +
    `${head('Seq', 'num')}${head('Operation')}${head('Request')}${head('Outcome')}${head('Wall clock (sent → answered)')}${head('Service clock')}</tr></thead>` +
    `<tbody>${rows}</tbody></table></div>`
  );
}

function violationPanel(v: InvariantViolation): string {
  const more = v.occurrences > 1 ? ` <span class="muted">(${esc(formatCount(v.occurrences))} answers broke it; the earliest is shown)</span>` : '';
  return (
    `<div class="panel violation"><p><span class="badge fail">${esc(v.invariant)}</span> <code>${esc(v.subject)}</code> — ${esc(v.message)}${more}</p>` +
    `${witnessTable(v.witness)}</div>`
  );
}

function violationsPart(section: InvariantsSection): string {
  if (section.violations.length === 0) return '';
  const shown =
    section.violationsTotal > section.violations.length
      ? `Showing ${formatCount(section.violations.length)} of ${formatCount(section.violationsTotal)}, the earliest first.`
      : 'The earliest first, each with the operations that prove it.';
  return `<h3>Violations</h3><p class="muted">${esc(shown)}</p>${section.violations.map(violationPanel).join('')}`;
}

function oraclePart(o: OracleSection): string {
  const badge =
    o.verdict === 'agrees'
      ? '<span class="badge pass">✓ agrees</span>'
      : o.verdict === 'differs'
        ? '<span class="badge fail">✗ differs</span>'
        : '<span class="badge neutral">not run</span>';
  const skipped = o.skipped > 0 ? ` (${formatCount(o.skipped)} skipped)` : '';
  const text =
    o.verdict === 'agrees'
      ? `Replaying the realised order through a fresh engine gives the same answers for all ${plural(o.compared, 'compared operation')}${skipped}.`
      : o.verdict === 'differs'
        ? `Replaying the realised order through a fresh engine gives different answers for ${formatCount(o.differences)} of ${plural(o.compared, 'compared operation')}${skipped}.`
        : 'The realised order was not replayed through a fresh engine.';
  const note = o.note === undefined || o.note.trim() === '' ? '' : ` ${esc(o.note)}`;
  let out = `<h3>Oracle ${badge}</h3><p>${esc(text)}${note}</p>`;
  if (o.examples.length > 0) {
    const caption =
      o.differences > o.examples.length ? `Differences: ${formatCount(o.examples.length)} of ${formatCount(o.differences)}, the earliest first` : 'Differences';
    const rows = o.examples
      .map(
        (d) =>
          `<tr class="fail">${cell(esc(seqText(d.seq)), 'num')}${cell(`<code>${esc(d.op)}</code>`, 'op')}${cell(`<code>${esc(d.field)}</code>`)}` +
          `${cell(esc(d.expected))}${cell(esc(d.received))}</tr>`,
      )
      .join('');
    out +=
      `<div class="table-wrap"><table class="oracle"><caption>${esc(caption)}</caption><thead><tr>${head('Seq', 'num')}${head('Operation')}${head('Field')}` +
      `${head('Expected (oracle)')}${head('Received (service)')}</tr></thead><tbody>${rows}</tbody></table></div>`;
  }
  return out;
}

/** The whole section, or nothing when the run recorded no history. */
export function invariantsSectionHtml(section: InvariantsSection | undefined): string {
  if (section === undefined) return '';
  return [
    `<section aria-labelledby="h-invariants"><h2 id="h-invariants">Invariants <span class="status verdict-${section.verdict}">${esc(VERDICT_LABEL[section.verdict])}</span></h2>`,
    verdictParagraph(section),
    scopeParagraph(section),
    invariantsTable(section),
    violationsPart(section),
    section.oracle === undefined ? '' : oraclePart(section.oracle),
    section.notes.length === 0 ? '' : `<h3>Notes</h3><ul class="notes">${section.notes.map((note) => `<li>${esc(note)}</li>`).join('')}</ul>`,
    `</section>`,
  ].join('');
}
