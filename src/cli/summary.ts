/** The summary a run prints on the terminal: one line per operation, then checks and thresholds. */
import type { InvariantsSection, ResourcesSection, RunReport } from '../report/model.js';
import { generatorBanner, generatorSummaryText } from '../report/generator-text.js';
import { rulesSummaryLines } from '../report/rules-text.js';
import { measureLine } from '../report/measures-text.js';
import { runVerdict } from '../report/verdict.js';
import { invariantStateText, promisesText } from '../report/promise-text.js';
import { resourceCountText, resourcesVerdict, targetLabel } from '../report/resources-text.js';

const pad = (text: string, width: number, right = false) => (right ? text.padStart(width) : text.padEnd(width));
const ms = (value: number) => (value >= 100 ? value.toFixed(0) : value >= 10 ? value.toFixed(1) : value.toFixed(2));

export function renderSummary(report: RunReport): string {
  const lines: string[] = [];
  // A generator-limited run says so first: its latency figures are not the service's alone.
  const banner = generatorBanner(report);
  if (banner !== undefined) lines.push(`!!! ${banner.headline}`, `!!! ${banner.detail}`, '');
  const status = report.status === 'completed' ? '' : ` — ${report.status.toUpperCase()}`;
  const cutOff = report.totals.cutOff ?? 0;
  // Cut-off requests (closed model) are no errors, but the service may have executed them.
  const cutOffText = cutOff > 0 ? `, ${cutOff} cut off at a phase's end (effect unknown)` : '';
  lines.push(
    `${report.scenario.name}${status}: ${report.totals.requests} requests in ${(report.measuredMs / 1000).toFixed(1)} s (${report.totals.ratePerSec}/s), ${report.totals.errors} errors${cutOffText}, ${report.totals.late} late, ${report.totals.dropped} dropped`,
  );
  // The closed model has no intended send times: its latency is from the actual send, uncorrected,
  // so it has no second column to compare with.
  const open = report.settings.model === 'open';
  const header = ['operation', 'requests', 'rps', 'p50 ms', 'p90 ms', 'p95 ms', 'p99 ms', 'max ms', ...(open ? ['p99 uncorr.'] : []), 'outcomes'];
  const rows = [...report.operations, ...(report.operations.length > 1 ? [report.overall] : [])].map((o) => {
    const outcomes = [
      ...Object.entries(o.codes).map(([k, v]) => `${k} ${v}`),
      ...(o.ratelimit.allowed + o.ratelimit.denied > 0 ? [`allowed ${o.ratelimit.allowed}`, `denied ${o.ratelimit.denied}`] : []),
      ...Object.entries(o.statuses)
        .filter(([s]) => s !== '200')
        .map(([s, n]) => `HTTP ${s} ${n}`),
      ...Object.entries(o.transportErrors)
        .filter(([, n]) => n > 0)
        .map(([k, n]) => `${k} ${n}`),
      ...((o.cutOff ?? 0) > 0 ? [`cut off ${o.cutOff ?? 0}`] : []),
    ].join(', ');
    const c = o.latency.corrected;
    return [
      o.operation,
      String(o.requests),
      String(o.ratePerSec),
      ms(c.p50),
      ms(c.p90),
      c.p95 === undefined ? '-' : ms(c.p95),
      ms(c.p99),
      ms(c.max),
      ...(open ? [ms(o.latency.uncorrected.p99)] : []),
      outcomes,
    ];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => pad(cell, widths[i] ?? 0, i > 0 && i < header.length - 1))
      .join('  ')
      .trimEnd();
  lines.push(line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line));
  // The states are the run verdict's (runVerdict), as in the reports and the JUnit file.
  const verdict = runVerdict(report);
  const mark = { passed: 'pass', failed: 'FAIL', inconclusive: 'INCONCLUSIVE' } as const;
  report.checks.forEach((check, i) => lines.push(`${mark[verdict.checks[i]?.state ?? 'failed']}  check ${check.name}: ${check.detail}`));
  report.thresholds.forEach((t, i) => lines.push(`${mark[verdict.thresholds[i]?.state ?? 'failed']}  threshold ${t.expression}: ${t.detail}`));
  // Figures, not verdicts: shown with their promise, judged only by the thresholds that name them.
  for (const m of report.measures ?? []) lines.push(`note  measure ${measureLine(m)}`);
  if (report.invariants !== undefined) lines.push(...invariantLines(report.invariants));
  // One line, not one per phase (a clock scenario has 19): the reports have the table.
  const generator = report.generator === undefined ? undefined : generatorSummaryText(report.generator);
  if (generator !== undefined)
    lines.push(`note  generator ${report.generator?.limited === true ? 'could not keep its schedule' : 'kept its schedule'}: ${generator}`);
  if (report.resources !== undefined) lines.push(...resourceLines(report, report.resources));
  if (report.rules !== undefined) lines.push(...rulesSummaryLines(report.rules));
  for (const note of report.notes) lines.push(`note  ${note}`);
  return lines.join('\n');
}

/** The invariants verdict: one line per invariant, the first violation of each with its witness, the oracle. */
function invariantLines(section: InvariantsSection): string[] {
  const lines: string[] = [];
  if (section.verdict === 'not-checked') {
    lines.push(`note  invariants not checked: ${section.notes.join(' ')}`);
    return lines;
  }
  if (section.promises !== undefined) lines.push(`note  promise set: ${promisesText(section.promises)}`);
  for (const invariant of section.invariants) {
    const first = section.violations.find((v) => v.invariant === invariant.id);
    // Under a promise set, the state (exact / within promise / violated) and its measured size.
    const state = section.promises === undefined ? '' : ` — ${invariantStateText(invariant)}`;
    lines.push(
      `${invariant.passed ? 'pass' : 'FAIL'}  invariant ${invariant.title}: ${invariant.passed ? `${invariant.checked} checks` : `${invariant.violations} broke it`}${state}`,
    );
    if (first !== undefined) {
      lines.push(`        ${first.subject}: ${first.message}`);
      for (const w of first.witness) lines.push(`          #${w.seq} ${w.op} ${w.request} → ${w.outcome}`);
    }
  }
  const oracle = section.oracle;
  if (oracle !== undefined) {
    const example = oracle.examples[0];
    const verdict = oracle.verdict === 'differs' ? 'FAIL' : oracle.verdict === 'agrees' ? 'pass' : 'note';
    const detail =
      oracle.verdict === 'not-run'
        ? `not run: ${oracle.note ?? ''}`
        : `${oracle.compared} answers compared with a replay through a fresh engine, ${oracle.differences} differ` +
          (example === undefined ? '' : `; first: #${example.seq} ${example.op} ${example.field} expected ${example.expected}, received ${example.received}`);
    lines.push(`${verdict}  oracle: ${detail}`);
  }
  return lines;
}

/** What the run created on its target, deleted and left (shown whatever --quiet says: the summary always prints). */
function resourceLines(report: RunReport, section: ResourcesSection): string[] {
  // The embedded simulator is discarded with the run: its accounting is in the report only.
  if (section.disposal === 'discarded') return [];
  const verdict = section.unexpectedlyLeft > 0 ? 'FAIL' : section.disposal === 'kept' && section.cleanupCommand !== undefined ? 'note' : 'pass';
  return [
    `${verdict}  resources on ${targetLabel(report.target)} ${report.target.url} (tag ${section.tag}): ${section.kinds.map(resourceCountText).join('; ') || 'none created'}`,
    `        ${resourcesVerdict(section)}`,
    ...section.notes.map((note) => `        ${note}`),
  ];
}
