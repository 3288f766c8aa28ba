/** The tables, cards and banners of the report page (every chart has a table for accessibility). */
import { type OperationStats, type Percentiles, type RunReport, TRANSPORT_ERROR_KINDS } from '../model.js';
import { runVerdict } from '../verdict.js';
import {
  formatBytes,
  formatCount,
  formatDuration,
  formatMs,
  formatMsValue,
  formatPercent,
  formatRate,
  formatValue,
  sortedCounts,
  sumCounts,
  unionKeys,
} from '../format.js';
import { esc } from './svg.js';
import { type Tone } from './outcome-charts.js';
import { invariantsBadges, invariantsCard } from './invariants.js';
import { targetLabel } from '../resources-text.js';
import { stagesSummary } from '../stages-text.js';
import { segmentBanner } from '../segment-text.js';
import { statusBanner as runStatus } from '../status-banner.js';

export function td(text: string, cls = ''): string {
  return `<td${cls === '' ? '' : ` class="${cls}"`}>${text}</td>`;
}

export function latencyTable(report: RunReport): string {
  // The closed model has no intended send times: one group, from the actual send, never "corrected".
  const open = report.settings.model === 'open';
  const cols = (p: Percentiles) =>
    [p.p50, p.p90, p.p95, p.p99, p.p999, p.max, p.mean].map((v) => td(p.count > 0 && v !== undefined ? formatMsValue(v) : '—', 'num')).join('');
  const groups = (op: OperationStats) =>
    open ? `${cols(op.latency.corrected)}${cols(op.latency.uncorrected).replace(/class="num"/g, 'class="num uncorr"')}` : cols(op.latency.uncorrected);
  const row = (name: string, op: OperationStats, cls = '') =>
    `<tr${cls === '' ? '' : ` class="${cls}"`}><th scope="row">${name}</th>${td(formatCount(op.requests), 'num')}${td(formatRate(op.ratePerSec), 'num')}${groups(op)}</tr>`;
  const pcts = ['p50', 'p90', 'p95', 'p99', 'p99.9', 'max', 'mean'].map((p) => `<th scope="col" class="num">${p}</th>`).join('');
  const caption = open
    ? 'Latency by operation, ms — corrected (from the intended send time) beside uncorrected (from the actual send)'
    : 'Latency by operation, ms — from the actual send (the closed model has no intended send times)';
  const groupHeads = open
    ? `<th colspan="7" scope="colgroup" class="group corrected-head">corrected</th><th colspan="7" scope="colgroup" class="group uncorrected-head">uncorrected</th>`
    : `<th colspan="7" scope="colgroup" class="group">latency</th>`;
  return (
    `<div class="table-wrap"><table class="latency"><caption>${caption}</caption>` +
    `<thead><tr><th rowspan="2" scope="col">Operation</th><th rowspan="2" scope="col" class="num">Requests</th><th rowspan="2" scope="col" class="num">req/s</th>` +
    `${groupHeads}</tr>` +
    `<tr>${open ? pcts + pcts : pcts}</tr></thead><tbody>` +
    report.operations.map((op) => row(esc(op.operation), op)).join('') +
    `</tbody><tfoot>${row('all operations', report.overall, 'total')}</tfoot></table></div>`
  );
}

export function countsTable(
  caption: string,
  ops: readonly OperationStats[],
  pick: (op: OperationStats) => Record<string, number>,
  order?: readonly string[],
): string {
  const used = ops.filter((op) => sumCounts(pick(op)) > 0);
  if (used.length === 0) return '';
  const keys = order ?? unionKeys(used.map(pick));
  const head = keys.map((k) => `<th scope="col" class="num">${esc(k)}</th>`).join('');
  const body = used
    .map((op) => {
      const counts = new Map(sortedCounts(pick(op)));
      return `<tr><th scope="row">${esc(op.operation)}</th>${keys.map((k) => td(formatCount(counts.get(k) ?? 0), 'num')).join('')}</tr>`;
    })
    .join('');
  return `<div class="table-wrap"><table><caption>${esc(caption)}</caption><thead><tr><th scope="col">Operation</th>${head}</tr></thead><tbody>${body}</tbody></table></div>`;
}

export function outcomeTables(report: RunReport): string {
  const tables = [
    countsTable('HTTP statuses by operation', report.operations, (op) => op.statuses),
    countsTable('Verification codes by operation', report.operations, (op) => op.codes),
    countsTable('Rate-limit decisions by operation', report.operations, (op) => ({ allowed: op.ratelimit.allowed, denied: op.ratelimit.denied }), [
      'allowed',
      'denied',
    ]),
    countsTable('Transport errors by operation', report.operations, (op) => ({ ...op.transportErrors }), TRANSPORT_ERROR_KINDS),
    countsTable("Cut off at a phase's end: sent, answer abandoned when a closed-model phase ended (not errors; effect unknown)", report.operations, (op) => ({
      'cut off': op.cutOff ?? 0,
    })),
    countsTable("Responses failing the scenario's check", report.operations, (op) => ({ responses: op.checkFailures })),
  ].filter((t) => t !== '');
  return tables.length === 0 ? '<p class="muted">No outcomes recorded.</p>' : tables.join('');
}

export function verdictTables(report: RunReport): string {
  const badge = (passed: boolean) => `<span class="badge ${passed ? 'pass' : 'fail'}">${passed ? '✓ passed' : '✗ failed'}</span>`;
  const { thresholds: states, checks: checkStates } = runVerdict(report);
  const checkStateOf = (i: number) => checkStates[i]?.state ?? 'failed';
  const checkBadge = (i: number) =>
    checkStateOf(i) === 'inconclusive' ? '<span class="badge inconclusive">? not judged</span>' : badge(checkStateOf(i) === 'passed');
  const stateOf = (i: number) => states[i]?.state ?? 'failed';
  const thresholdBadge = (i: number) =>
    stateOf(i) === 'inconclusive' ? '<span class="badge inconclusive">? inconclusive</span>' : badge(stateOf(i) === 'passed');
  const thresholds =
    report.thresholds.length === 0
      ? '<p class="muted">No thresholds defined.</p>'
      : `<div class="table-wrap"><table><caption>Thresholds</caption><thead><tr><th scope="col">Result</th><th scope="col">Threshold</th><th scope="col" class="num">Actual</th><th scope="col">Detail</th></tr></thead><tbody>` +
        report.thresholds
          .map(
            (t, i) =>
              `<tr class="${stateOf(i) === 'failed' ? 'fail' : stateOf(i) === 'inconclusive' ? 'inconclusive' : 'pass'}">${td(thresholdBadge(i))}${td(`<code>${esc(t.expression)}</code>`)}${td(t.actual === null ? 'no data' : esc(formatValue(t.actual)), 'num')}${td(esc(t.detail))}</tr>`,
          )
          .join('') +
        `</tbody></table></div>`;
  const checks =
    report.checks.length === 0
      ? '<p class="muted">No checks were run.</p>'
      : `<div class="table-wrap"><table><caption>Checks</caption><thead><tr><th scope="col">Result</th><th scope="col">Check</th><th scope="col">Detail</th></tr></thead><tbody>` +
        report.checks
          .map(
            (c, i) =>
              `<tr class="${checkStateOf(i) === 'failed' ? 'fail' : checkStateOf(i) === 'inconclusive' ? 'inconclusive' : 'pass'}">${td(checkBadge(i))}${td(esc(c.name))}${td(esc(c.detail))}</tr>`,
          )
          .join('') +
        `</tbody></table></div>`;
  return thresholds + checks;
}

export function timelineTable(report: RunReport): string {
  if (report.timeline.length === 0) return '<p class="muted">No per-second data.</p>';
  const rows = report.timeline
    .map(
      (p) =>
        `<tr>${td(formatCount(p.second), 'num')}${td(formatCount(p.requests), 'num')}${td(formatCount(p.errors), 'num')}${td(formatMsValue(p.p50Ms), 'num')}${td(formatMsValue(p.p99Ms), 'num')}</tr>`,
    )
    .join('');
  return (
    `<details><summary>Per-second figures (${formatCount(report.timeline.length)} ${report.timeline.length === 1 ? 'row' : 'rows'})</summary><div class="table-wrap"><table><caption>Per second of the measured part</caption>` +
    `<thead><tr><th scope="col" class="num">Second</th><th scope="col" class="num">Requests</th><th scope="col" class="num">Errors</th><th scope="col" class="num">p50 (ms)</th><th scope="col" class="num">p99 (ms)</th></tr></thead>` +
    `<tbody>${rows}</tbody></table></div></details>`
  );
}

export function phasesTable(report: RunReport): string {
  if (report.phases.length === 0) return '<p class="muted">No phases ran.</p>';
  const rows = report.phases
    .map(
      (p) =>
        `<tr><th scope="row">${esc(p.name)}</th>${td(`+${esc(formatDuration(p.startMs))}`, 'num')}${td(esc(formatDuration(p.durationMs)), 'num')}` +
        `${td(report.settings.model === 'open' ? `${formatRate(p.rate)} req/s${p.stages === undefined ? '' : ' mean (stages)'}` : `${formatCount(p.rate)} conn.`, 'num')}${td(p.warmup ? 'warm-up' : 'measured')}` +
        `${td(p.serviceClockFrom === undefined && p.serviceClockTo === undefined ? '—' : `${esc(p.serviceClockFrom ?? '?')} → ${esc(p.serviceClockTo ?? '?')}`)}</tr>`,
    )
    .join('');
  return (
    `<div class="table-wrap"><table><caption class="sr-only">Phases</caption><thead><tr><th scope="col">Phase</th><th scope="col" class="num">Start</th><th scope="col" class="num">Duration</th>` +
    `<th scope="col" class="num">Rate</th><th scope="col">Kind</th><th scope="col">Service clock</th></tr></thead><tbody>${rows}</tbody></table></div>`
  );
}

/* --------------------------------------------------------------------------------- page */

export function statusBanner(report: RunReport): string {
  const segments = segmentBanner(report);
  const segmentsHtml =
    segments === undefined
      ? ''
      : `<div class="banner ${segments.partial ? 'failed' : 'interrupted'}" role="${segments.partial ? 'alert' : 'note'}">${segments.partial ? '<strong>Partial.</strong> ' : ''}${esc(segments.text)}</div>`;
  return segmentsHtml + runStatusBanner(report);
}

function runStatusBanner(report: RunReport): string {
  const banner = runStatus(report);
  return banner === undefined ? '' : `<div class="banner ${banner.kind}" role="alert"><strong>${banner.word}.</strong> ${esc(banner.text)}</div>`;
}

/**
 * The run's verdict in large type at the top, with its reason: the same headline and reason as the
 * terminal's final line, the Markdown's and the JUnit file's (`runVerdict`).
 */
export function verdictHeadline(report: RunReport): string {
  const verdict = runVerdict(report);
  const tone = verdict.headline === 'PASS' ? 'pass' : verdict.headline === 'FAIL' ? 'fail' : 'inconclusive';
  const mark = verdict.headline === 'PASS' ? '✓' : verdict.headline === 'FAIL' ? '✗' : '?';
  return `<div class="run-headline ${tone}" role="status"><strong class="run-headline-word">${mark} ${verdict.headline}</strong> <span class="run-headline-reason">${esc(verdict.reason)}</span></div>`;
}

/** Red badges beside the status when thresholds, checks or invariants failed: a completed run can still be a failing one. */
export function verdictBadges(report: RunReport): string {
  const verdict = runVerdict(report);
  const thresholds = verdict.thresholdTally.failed;
  const checks = verdict.checkTally.failed;
  let out = '';
  if (report.generator?.limited === true) out += `<span class="status interrupted">generator-limited</span>`;
  if (thresholds > 0) out += `<span class="status failed">${thresholds} ${thresholds === 1 ? 'threshold' : 'thresholds'} failed</span>`;
  if (checks > 0) out += `<span class="status failed">${checks} ${checks === 1 ? 'check' : 'checks'} failed</span>`;
  return out + invariantsBadges(report.invariants);
}

export function card(label: string, value: string, detail: string, tone: Tone | '' = ''): string {
  return `<div class="card${tone === '' ? '' : ` tone-${tone}`}"><div class="card-label">${esc(label)}</div><div class="card-value">${esc(value)}</div><div class="card-detail">${esc(detail)}</div></div>`;
}

export function summaryCards(report: RunReport): string {
  const t = report.totals;
  const verdict = runVerdict(report);
  const failedThresholds = verdict.thresholdTally.failed;
  const inconclusive = verdict.thresholdTally.inconclusive;
  const failedChecks = verdict.checkTally.failed;
  const planned = t.requests + t.dropped;
  const open = report.settings.model === 'open';
  return (
    `<div class="cards">` +
    card('Requests', formatCount(t.requests), `${formatRate(t.ratePerSec)} req/s`) +
    card(
      'Errors',
      formatCount(t.errors),
      `${formatPercent(t.errors, t.requests)}${(t.cutOff ?? 0) > 0 ? ` · ${formatCount(t.cutOff ?? 0)} cut off at a phase's end (not errors)` : ''}`,
      t.errors > 0 ? 'warn' : '',
    ) +
    // Only the open model's latency is corrected (the closed model has no intended send times).
    (report.overall.latency.corrected.count === 0
      ? card(open ? 'p99 corrected' : 'p99', '—', 'no samples')
      : open
        ? card('p99 corrected', formatMs(report.overall.latency.corrected.p99), `uncorrected ${formatMs(report.overall.latency.uncorrected.p99)}`)
        : card('p99', formatMs(report.overall.latency.uncorrected.p99), 'from the actual send (closed model)')) +
    card('Late sends', formatCount(t.late), `> ${formatValue(t.lateThresholdMs)} ms late · ${formatPercent(t.late, planned)}`, t.late > 0 ? 'warn' : '') +
    card('Dropped sends', formatCount(t.dropped), `never sent · ${formatPercent(t.dropped, planned)}`, t.dropped > 0 ? 'warn' : '') +
    card(
      'Thresholds',
      report.thresholds.length === 0 ? 'none' : `${report.thresholds.length - failedThresholds - inconclusive}/${report.thresholds.length}`,
      report.thresholds.length === 0
        ? 'defined'
        : [failedThresholds > 0 ? `${failedThresholds} failed` : '', inconclusive > 0 ? `${inconclusive} inconclusive` : '']
            .filter((x) => x !== '')
            .join(' · ') || 'all passed',
      report.thresholds.length === 0 ? '' : failedThresholds > 0 ? 'error' : inconclusive > 0 ? 'warn' : 'ok',
    ) +
    card(
      'Checks',
      report.checks.length === 0 ? 'none' : `${report.checks.length - failedChecks}/${report.checks.length}`,
      report.checks.length === 0 ? 'run' : failedChecks === 0 ? 'all passed' : `${failedChecks} failed`,
      report.checks.length === 0 ? '' : failedChecks === 0 ? 'ok' : 'error',
    ) +
    invariantCard(report) +
    `</div>`
  );
}

function invariantCard(report: RunReport): string {
  if (report.invariants === undefined) return '';
  const { value, detail, tone } = invariantsCard(report.invariants);
  return card('Invariants', value, detail, tone);
}

export function detailsList(report: RunReport): string {
  const s = report.settings;
  const env = report.environment;
  const items: Array<[string, string]> = [
    ['Seed', String(report.seed)],
    ['Target', `${targetLabel(report.target)} · ${report.target.url}`],
    ['Load model', s.model === 'open' ? `open · ${stagesSummary(s) ?? `${formatRate(s.rate)} req/s intended`}` : 'closed'],
    ['Connections', `${formatCount(s.connections)} · pipelining ${formatCount(s.pipelining)} · timeout ${formatDuration(s.timeoutMs)}`],
    ['Duration', `${formatDuration(report.measuredMs)} measured (planned ${formatDuration(s.durationMs)} + ${formatDuration(s.warmupMs)} warm-up)`],
    ['Started', report.startedAt],
    ['Finished', report.finishedAt],
    [
      'Environment',
      `keysim ${env.keysimVersion} · Node ${env.node} · ${env.platform}/${env.arch} · ${formatCount(env.cpus)} × ${env.cpuModel} · ${formatBytes(env.totalMemoryBytes)}`,
    ],
  ];
  return `<dl class="details">${items.map(([k, v]) => `<dt>${esc(k)}</dt><dd>${esc(v)}</dd>`).join('')}</dl>`;
}
