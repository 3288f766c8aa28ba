/**
 * The "Invariants" part of `report.md`: the history checkers' verdict, a table of invariants,
 * every shown violation with its witness, and the oracle's comparison. Strings are untrusted and
 * escaped, like everywhere in the Markdown report.
 */
import type { InvariantsSection, InvariantViolation, OracleSection, WitnessOperation } from './model.js';
import { formatCount, formatInstant, plural, seqText } from './format.js';
import { escapeMarkdown, escapeMarkdownBlock, markdownTable } from './markdown-text.js';
import { invariantsHeadlineOf } from './verdict.js';
import { invariantStateText, promisesText } from './promise-text.js';

/** The part of the report's status line about invariants (and the oracle, when it ran). */
export function invariantsStatus(section: InvariantsSection): string {
  // The invariants' word of the run's verdict: a run its oracle failed is not called clean.
  const headline = invariantsHeadlineOf(section);
  const verdict =
    headline === 'clean'
      ? '✅ clean'
      : headline === 'violated'
        ? '❌ **VIOLATED**'
        : headline === 'oracle differs'
          ? '❌ **oracle differs**'
          : '⚠️ not checked';
  const oracle =
    section.oracle === undefined || section.oracle.verdict === 'not-run' || headline === 'oracle differs'
      ? ''
      : `, oracle ${section.oracle.verdict === 'agrees' ? '✅ agrees' : '❌ **differs**'}`;
  return `**Invariants:** ${verdict}${oracle}`;
}

function verdictLine(section: InvariantsSection): string {
  switch (section.verdict) {
    case 'clean': {
      const checks = section.invariants.reduce((n, inv) => n + inv.checked, 0);
      return `**Verdict:** ✅ clean — every invariant held (${plural(checks, 'check')}): no answer in the history contradicts the service's rules, whatever the order in which concurrent operations took effect.`;
    }
    case 'violated': {
      const broken = section.invariants.filter((inv) => !inv.passed).length;
      return (
        `**Verdict:** ❌ **VIOLATED** — ${formatCount(broken)} of ${plural(section.invariants.length, 'invariant')} broken (${plural(section.violationsTotal, 'violation')}): ` +
        'the service gave answers that no correct service could give, whatever the order in which concurrent operations took effect. `keysim check` on the run folder re-checks the history.'
      );
    }
    case 'not-checked':
      return `**Verdict:** ⚠️ not checked — the history was saved but its invariants were not checked${section.notes.length > 0 ? ' (see the notes below)' : ''}; run \`keysim check\` on the run folder to check it.`;
  }
}

function scopeLine(section: InvariantsSection): string {
  const c = section.checked;
  const where = `${plural(section.operations, 'operation')} recorded in ${escapeMarkdown(section.history)}`;
  if (section.verdict === 'not-checked') return `History: ${where}.`;
  return `Checked ${plural(c.keys, 'key')}, ${plural(c.verifications, 'verification')} and ${plural(c.rateLimitChecks, 'rate-limit decision')} over ${where}.`;
}

function invariantsTable(section: InvariantsSection): string[] {
  if (section.invariants.length === 0) return [];
  const promised = section.promises !== undefined;
  const rows = section.invariants.map((inv) => [
    inv.passed ? (inv.checked === 0 ? '➖' : '✅') : '❌',
    escapeMarkdown(inv.id),
    escapeMarkdown(inv.title),
    formatCount(inv.checked),
    formatCount(inv.violations),
    // Under a promise set, each invariant's state and measured size (docs/consistency.md).
    ...(promised ? [escapeMarkdown(invariantStateText(inv))] : []),
  ]);
  const out =
    section.promises === undefined
      ? [markdownTable(['', 'Invariant', 'Meaning', 'Checks', 'Violations'], rows, 'lllrr')]
      : [
          `Promise set: ${escapeMarkdown(promisesText(section.promises))}.`,
          '',
          markdownTable(['', 'Invariant', 'Meaning', 'Checks', 'Violations', 'Verdict'], rows, 'lllrrl'),
        ];
  if (section.invariants.some((inv) => inv.passed && inv.checked === 0)) out.push('', '➖ nothing in the history exercised it.');
  // A segment's own verdict (docs/checking.md#one-segments-own-verdict): what it could not judge alone.
  const left = section.invariants.filter((inv) => (inv.notJudged ?? 0) > 0).map((inv) => `${escapeMarkdown(inv.id)} (${formatCount(inv.notJudged ?? 0)})`);
  if (left.length > 0) out.push('', `Not judged in one segment, left to the verdict across segments (keysim merge / keysim check): ${left.join(', ')}.`);
  return out;
}

/** A clock bracket: `sent → answered` in ISO 8601, `–` when unknown. */
function bracket(fromMs: number | undefined, toMs: number | undefined): string {
  if (fromMs === undefined && toMs === undefined) return '–';
  const at = (ms: number | undefined) => (ms === undefined ? '?' : formatInstant(ms));
  return `${at(fromMs)} → ${at(toMs)}`;
}

/** The operations that prove a violation, one row each, with wall and service times (ISO 8601). */
function witnessTable(witness: readonly WitnessOperation[]): string {
  if (witness.length === 0) return '_No witness recorded._';
  const text = (s: string) => (s.trim() === '' ? '–' : escapeMarkdown(s));
  return markdownTable(
    ['Seq', 'Operation', 'Request', 'Outcome', 'Wall clock (sent → answered)', 'Service clock'],
    witness.map((op) => [
      op.origin === undefined ? seqText(op.seq) : `${seqText(op.seq)} (${text(op.origin)})`,
      text(op.op),
      text(op.request),
      text(op.outcome),
      bracket(op.invokeMs, op.completeMs),
      bracket(op.serviceInvokeMs, op.serviceCompleteMs),
    ]),
    'rlllll',
  );
}

function violation(v: InvariantViolation, index: number): string[] {
  const more = v.occurrences > 1 ? ` (${formatCount(v.occurrences)} answers broke it; the earliest is shown)` : '';
  return [
    `**${index + 1}. ${escapeMarkdown(v.invariant)}** · ${escapeMarkdown(v.subject)}: ${escapeMarkdown(v.message)}${more}`,
    '',
    witnessTable(v.witness),
    '',
  ];
}

function violations(section: InvariantsSection): string[] {
  if (section.violations.length === 0) return [];
  const shown =
    section.violationsTotal > section.violations.length
      ? `showing ${formatCount(section.violations.length)} of ${formatCount(section.violationsTotal)}, the earliest first`
      : section.violations.length === 1
        ? 'with the operations that prove it'
        : 'the earliest first, each with the operations that prove it';
  return [`**Violations** (${shown})`, '', ...section.violations.flatMap(violation)];
}

function oracle(o: OracleSection): string[] {
  const skipped = o.skipped > 0 ? ` (${formatCount(o.skipped)} skipped)` : '';
  const note = o.note === undefined || o.note.trim() === '' ? '' : ` ${escapeMarkdown(o.note)}`;
  const head =
    o.verdict === 'agrees'
      ? `**Oracle:** ✅ agrees — replaying the realised order through a fresh engine gives the same answers for all ${plural(o.compared, 'compared operation')}${skipped}.${note}`
      : o.verdict === 'differs'
        ? `**Oracle:** ❌ **differs** — replaying the realised order through a fresh engine gives different answers for ${formatCount(o.differences)} of ${plural(o.compared, 'compared operation')}${skipped}.${note}`
        : `**Oracle:** ➖ not run.${note}`;
  if (o.examples.length === 0) return [head, ''];
  const caption =
    o.differences > o.examples.length ? `_Showing ${formatCount(o.examples.length)} of ${formatCount(o.differences)} differences, the earliest first._` : '';
  const table = markdownTable(
    ['Seq', 'Operation', 'Field', 'Expected (oracle)', 'Received (service)'],
    o.examples.map((d) => [seqText(d.seq), escapeMarkdown(d.op), escapeMarkdown(d.field), escapeMarkdown(d.expected), escapeMarkdown(d.received)]),
    'rllll',
  );
  return [head, '', ...(caption === '' ? [] : [caption, '']), table, ''];
}

/** The lines of the "## Invariants" section (without its heading). */
export function invariantsMarkdown(section: InvariantsSection): string[] {
  const lines: string[] = [verdictLine(section), '', scopeLine(section), ''];
  const table = invariantsTable(section);
  if (table.length > 0) lines.push(...table, '');
  lines.push(...violations(section));
  if (section.oracle !== undefined) lines.push(...oracle(section.oracle));
  if (section.notes.length > 0) {
    lines.push('**Notes**', '');
    for (const note of section.notes) lines.push(`- ${escapeMarkdownBlock(note)}`);
    lines.push('');
  }
  return lines;
}
