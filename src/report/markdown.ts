/**
 * `report.md`: the run as GitHub-flavoured Markdown tables, short enough to paste into a pull
 * request. Every string that comes from the report is untrusted and escaped, so a scenario name
 * or a note can neither break a table nor inject markup.
 */
import { type OperationStats, type Percentiles, type RunReport, TRANSPORT_ERROR_KINDS } from './model.js';
import {
  formatBytes,
  formatCount,
  formatDuration,
  formatMsValue,
  formatPercent,
  formatRate,
  formatValue,
  sortedCounts,
  sumCounts,
  unionKeys,
} from './format.js';
import { escapeMarkdown, escapeMarkdownBlock, mark, markdownTable as table } from './markdown-text.js';
import { invariantsMarkdown, invariantsStatus } from './markdown-invariants.js';
import { segmentBanner } from './segment-text.js';
import { statusBanner as runStatus } from './status-banner.js';
import { generatorBannerMarkdown, generatorMarkdown } from './markdown-generator.js';
import { type RunVerdict, runVerdict } from './verdict.js';
import { resourcesMarkdown } from './markdown-resources.js';
import { rulesMarkdown } from './rules-text.js';
import { MEASURES_NOTE, MEASURE_COLUMNS, measureCells } from './measures-text.js';
import { targetLabel } from './resources-text.js';
import { stageRowCells, stageRows, stagesSummary } from './stages-text.js';

export { escapeMarkdown } from './markdown-text.js';

/** The run's verdict in one line, as the terminal's final line and the HTML headline say it (`runVerdict`). */
function headlineLine(verdict: RunVerdict): string {
  const mark = verdict.headline === 'PASS' ? '✅' : verdict.headline === 'FAIL' ? '❌' : '⚠️';
  return `**${mark} ${verdict.headline}** — ${escapeMarkdown(verdict.reason)}`;
}

function statusLine(report: RunReport, verdict: RunVerdict): string {
  const failedThresholds = verdict.thresholdTally.failed;
  const inconclusive = verdict.thresholdTally.inconclusive;
  const passedThresholds = verdict.thresholdTally.passed;
  const failedChecks = verdict.checkTally.failed;
  const parts: string[] = [];
  parts.push(
    report.status === 'completed'
      ? '**Status:** ✅ completed'
      : report.status === 'interrupted'
        ? '**Status:** ⚠️ **INTERRUPTED**'
        : '**Status:** ❌ **FAILED**',
  );
  parts.push(
    report.thresholds.length === 0
      ? '**Thresholds:** none'
      : `**Thresholds:** ${inconclusive > 0 && failedThresholds === 0 ? '⚠️' : mark(failedThresholds === 0)} ${passedThresholds}/${report.thresholds.length} passed${inconclusive > 0 ? `, ${inconclusive} inconclusive` : ''}`,
  );
  parts.push(
    report.checks.length === 0
      ? '**Checks:** none'
      : `**Checks:** ${mark(failedChecks === 0)} ${report.checks.length - failedChecks}/${report.checks.length} passed`,
  );
  if (report.invariants !== undefined) parts.push(invariantsStatus(report.invariants));
  if (report.generator?.limited === true) parts.push('**Generator:** ⚠️ could not keep its schedule');
  return parts.join(' · ');
}

function banner(report: RunReport): string[] {
  const segments = segmentBanner(report);
  if (segments !== undefined)
    return [segments.partial ? '> [!CAUTION]' : '> [!NOTE]', `> ${segments.partial ? '**PARTIAL** — ' : ''}${segments.text}`, '', ...statusBanner(report)];
  return statusBanner(report);
}

/** A run that did not reach its planned end: a GitHub alert with the banner's text. */
function statusBanner(report: RunReport): string[] {
  const banner = runStatus(report);
  if (banner === undefined) return [];
  return [banner.kind === 'interrupted' ? '> [!WARNING]' : '> [!CAUTION]', `> **${banner.word.toUpperCase()}** — ${escapeMarkdown(banner.text)}`, ''];
}

/** The measures against the promises: one row each, then what they are (measures-text.ts). */
function measuresMarkdown(report: RunReport): string[] {
  const rows = (report.measures ?? []).map((m) => measureCells(m).map((cell, i) => (i === 0 ? `\`${escapeMarkdown(cell)}\`` : escapeMarkdown(cell))));
  return [table(MEASURE_COLUMNS, rows, 'lrrrrrrll'), '', escapeMarkdownBlock(MEASURES_NOTE)];
}

function environmentLine(env: RunReport['environment']): string {
  return [
    `keysim ${escapeMarkdown(env.keysimVersion)}`,
    `Node ${escapeMarkdown(env.node)}`,
    `${escapeMarkdown(env.platform)}/${escapeMarkdown(env.arch)}`,
    `${formatCount(env.cpus)} × ${escapeMarkdown(env.cpuModel)}`,
    formatBytes(env.totalMemoryBytes),
  ].join(' · ');
}

function settingsLine(report: RunReport): string {
  const s = report.settings;
  const load = s.model === 'open' ? `open model, ${stagesSummary(s) ?? `${formatRate(s.rate)} req/s intended`}` : `closed model`;
  return `${load} · ${formatCount(s.connections)} connections · pipelining ${formatCount(s.pipelining)} · timeout ${formatDuration(s.timeoutMs)}`;
}

function overview(report: RunReport): string {
  const rows: Array<[string, string]> = [
    ['Scenario', escapeMarkdown(report.scenario.name)],
    ['Status', report.status === 'completed' ? 'completed' : `**${report.status.toUpperCase()}**`],
    ['Seed', escapeMarkdown(String(report.seed))],
    ['Target', `${targetLabel(report.target)} · ${escapeMarkdown(report.target.url)}`],
    ['Load', settingsLine(report)],
    [
      'Duration',
      `${formatDuration(report.measuredMs)} measured (planned ${formatDuration(report.settings.durationMs)}, warm-up ${formatDuration(report.settings.warmupMs)})`,
    ],
    ['Started → finished', `${escapeMarkdown(report.startedAt)} → ${escapeMarkdown(report.finishedAt)}`],
    ['Environment', environmentLine(report.environment)],
  ];
  return table(['Run', ''], rows, 'll');
}

function totals(report: RunReport): string {
  const t = report.totals;
  return table(
    ['Requests', 'Errors', 'Rate (req/s)', `Late sends (> ${formatValue(t.lateThresholdMs)} ms)`, 'Dropped sends'],
    [
      [
        formatCount(t.requests),
        `${formatCount(t.errors)} (${formatPercent(t.errors, t.requests)})`,
        formatRate(t.ratePerSec),
        `${formatCount(t.late)} (${formatPercent(t.late, t.requests + t.dropped)})`,
        `${formatCount(t.dropped)} (${formatPercent(t.dropped, t.requests + t.dropped)})`,
      ],
    ],
    'rrrrr',
  );
}

function latencyRow(name: string, op: OperationStats): string[] {
  const c = op.latency.corrected;
  return [
    name,
    formatCount(op.requests),
    formatRate(op.ratePerSec),
    ...[c.p50, c.p90, c.p95, c.p99, c.p999, c.max].map((v) => (c.count > 0 && v !== undefined ? formatMsValue(v) : '–')),
    op.latency.uncorrected.count > 0 ? formatMsValue(op.latency.uncorrected.p99) : '–',
  ];
}

function latency(report: RunReport): string {
  // The closed model has no intended send times: one latency, from the actual send, no second column.
  const open = report.settings.model === 'open';
  const cut = (row: string[]) => (open ? row : row.slice(0, -1));
  const rows = report.operations.map((op) => cut(latencyRow(escapeMarkdown(op.operation), op)));
  rows.push(cut(latencyRow('**all**', report.overall).map((cell, i) => (i === 0 ? cell : `**${cell}**`))));
  const header = ['Operation', 'Requests', 'Rate (req/s)', 'p50', 'p90', 'p95', 'p99', 'p99.9', 'max'];
  return open ? table([...header, 'p99 uncorrected'], rows, 'lrrrrrrrrr') : table(header, rows, 'lrrrrrrrr');
}

function distribution(report: RunReport): string {
  const line = (label: string, p: Percentiles) => [
    label,
    ...[p.p50, p.p90, p.p95, p.p99, p.p999, p.max, p.mean].map((v) => (p.count > 0 && v !== undefined ? formatMsValue(v) : '–')),
    formatCount(p.count),
  ];
  const rows =
    report.settings.model === 'open'
      ? [line('corrected (from intended send)', report.overall.latency.corrected), line('uncorrected (from actual send)', report.overall.latency.uncorrected)]
      : [line('latency (from actual send)', report.overall.latency.uncorrected)];
  return table(['All operations (ms)', 'p50', 'p90', 'p95', 'p99', 'p99.9', 'max', 'mean', 'samples'], rows, 'lrrrrrrrr');
}

/** A wide table: one row per operation with a non-zero count, one column per key. */
function countTable(report: RunReport, title: string, pick: (op: OperationStats) => Record<string, number>, empty: string): string {
  const ops = report.operations.filter((op) => sumCounts(pick(op)) > 0);
  if (ops.length === 0) return `**${title}:** ${empty}`;
  const keys = unionKeys(ops.map(pick));
  const rows = ops.map((op) => {
    const counts = new Map(sortedCounts(pick(op)));
    return [escapeMarkdown(op.operation), ...keys.map((k) => formatCount(counts.get(k) ?? 0))];
  });
  return `**${title}**\n\n${table(['Operation', ...keys.map(escapeMarkdown)], rows, `l${'r'.repeat(keys.length)}`)}`;
}

function outcomes(report: RunReport): string[] {
  const sections: string[] = [];
  sections.push(countTable(report, 'HTTP statuses', (op) => op.statuses, 'no HTTP answers.'));
  sections.push(countTable(report, 'Verification codes', (op) => op.codes, 'no verifications.'));
  const limited = report.operations.filter((op) => op.ratelimit.allowed + op.ratelimit.denied > 0);
  sections.push(
    limited.length === 0
      ? '**Rate limit:** no rate-limit decisions.'
      : `**Rate limit**\n\n${table(
          ['Operation', 'Allowed', 'Denied', 'Denied %'],
          limited.map((op) => [
            escapeMarkdown(op.operation),
            formatCount(op.ratelimit.allowed),
            formatCount(op.ratelimit.denied),
            formatPercent(op.ratelimit.denied, op.ratelimit.allowed + op.ratelimit.denied),
          ]),
          'lrrr',
        )}`,
  );
  const failing = report.operations.filter((op) => TRANSPORT_ERROR_KINDS.some((k) => op.transportErrors[k] > 0));
  sections.push(
    failing.length === 0
      ? '**Transport errors:** none.'
      : `**Transport errors**\n\n${table(
          ['Operation', ...TRANSPORT_ERROR_KINDS],
          failing.map((op) => [escapeMarkdown(op.operation), ...TRANSPORT_ERROR_KINDS.map((k) => formatCount(op.transportErrors[k]))]),
          'lrrrr',
        )}`,
  );
  const cutOff = report.operations.filter((op) => (op.cutOff ?? 0) > 0);
  if (cutOff.length > 0) {
    sections.push(
      `**Cut off at a phase's end:** ${formatCount(cutOff.reduce((n, op) => n + (op.cutOff ?? 0), 0))} requests (${cutOff
        .map((op) => `${escapeMarkdown(op.operation)} ${formatCount(op.cutOff ?? 0)}`)
        .join(', ')}) — sent, but their answers were abandoned when a closed-model phase ended: not errors, their effect is unknown.`,
    );
  }
  const checkFailures = report.operations.filter((op) => op.checkFailures > 0);
  if (checkFailures.length > 0) {
    sections.push(
      `**Responses failing the scenario's check**\n\n${table(
        ['Operation', 'Responses', 'Share'],
        checkFailures.map((op) => [escapeMarkdown(op.operation), formatCount(op.checkFailures), formatPercent(op.checkFailures, op.requests)]),
        'lrr',
      )}`,
    );
  }
  return sections;
}

function thresholdsAndChecks(report: RunReport): string[] {
  const { thresholds: states, checks: checkStates } = runVerdict(report);
  const out: string[] = [];
  out.push(
    report.thresholds.length === 0
      ? '**Thresholds:** none defined.'
      : `**Thresholds**\n\n${table(
          ['', 'Threshold', 'Actual', 'Detail'],
          report.thresholds.map((t, i) => [
            states[i]?.state === 'inconclusive' ? '⚠️ inconclusive' : mark(states[i]?.state === 'passed'),
            escapeMarkdown(t.expression),
            t.actual === null ? 'no data' : formatValue(t.actual),
            escapeMarkdown(t.detail),
          ]),
          'llrl',
        )}`,
  );
  out.push(
    report.checks.length === 0
      ? '**Checks:** none run.'
      : `**Checks**\n\n${table(
          ['', 'Check', 'Detail'],
          report.checks.map((c, i) => [
            checkStates[i]?.state === 'inconclusive' ? '⚠️ not judged' : mark(checkStates[i]?.state === 'passed'),
            escapeMarkdown(c.name),
            escapeMarkdown(c.detail),
          ]),
          'lll',
        )}`,
  );
  return out;
}

function phases(report: RunReport): string {
  if (report.phases.length === 0) return '_No phases ran._';
  return table(
    ['Phase', 'Start', 'Duration', 'Rate', 'Warm-up', 'Service clock'],
    report.phases.map((p) => [
      escapeMarkdown(p.name),
      `+${formatDuration(p.startMs)}`,
      formatDuration(p.durationMs),
      report.settings.model === 'open' ? `${formatRate(p.rate)} req/s${p.stages === undefined ? '' : ' mean (stages)'}` : `${formatCount(p.rate)} connections`,
      p.warmup ? 'yes' : 'no',
      p.serviceClockFrom === undefined && p.serviceClockTo === undefined
        ? '–'
        : `${escapeMarkdown(p.serviceClockFrom ?? '?')} → ${escapeMarkdown(p.serviceClockTo ?? '?')}`,
    ]),
    'lrrrll',
  );
}

/** A table per phase that ramped through stages: where each stage starts, how long, from which rate to which. */
function stagesTables(report: RunReport): string[] {
  return report.phases.flatMap((p) =>
    p.stages === undefined
      ? []
      : [
          `Stages of ${escapeMarkdown(p.name)} (the target rate ramps linearly within each stage):`,
          '',
          table(
            ['Stage', 'Start', 'Duration', 'Target rate'],
            stageRows(p.startRate ?? 0, p.stages).map((row, i) => [String(i + 1), ...stageRowCells(row)]),
            'rrrl',
          ),
          '',
        ],
  );
}

/** The run report as Markdown: a pure function of the report (the CLI writes the file). */
export function renderMarkdown(report: RunReport): string {
  const title = report.status === 'completed' ? '' : ` — ${report.status === 'interrupted' ? '⚠️ INTERRUPTED' : '❌ FAILED'}`;
  const lines: string[] = [`# keysim run: ${escapeMarkdown(report.scenario.name)}${title}`, '', ...banner(report), ...generatorBannerMarkdown(report)];
  if (report.scenario.description.trim() !== '') lines.push(escapeMarkdownBlock(report.scenario.description), '');
  const verdict = runVerdict(report);
  lines.push(headlineLine(verdict), '', statusLine(report, verdict), '', overview(report), '');
  lines.push('## Totals', '', totals(report), '');
  lines.push(
    '## Latency (ms)',
    '',
    report.settings.model === 'open'
      ? 'Corrected latency is measured from the intended send time, so a stalled server shows in it (coordinated omission); uncorrected from the actual send.'
      : 'Latency is measured from the actual send: the closed model has no intended send times, so it cannot account for coordinated omission (a stalled server slows the senders instead of showing in the figures).',
    '',
    latency(report),
    '',
    distribution(report),
    '',
  );
  lines.push('## Outcomes', '');
  for (const section of outcomes(report)) lines.push(section, '');
  lines.push('## Thresholds and checks', '');
  for (const section of thresholdsAndChecks(report)) lines.push(section, '');
  if (report.measures !== undefined && report.measures.length > 0) lines.push('## Measures', '', ...measuresMarkdown(report), '');
  if (report.invariants !== undefined) lines.push('## Invariants', '', ...invariantsMarkdown(report.invariants), '');
  if (report.resources !== undefined) lines.push('## Resources', '', ...resourcesMarkdown(report.resources), '');
  if (report.rules !== undefined) lines.push('## Rules covered', '', ...rulesMarkdown(report.rules), '');
  lines.push('## Phases', '', phases(report), '', ...stagesTables(report));
  if (report.generator !== undefined) lines.push('## Load generator', '', ...generatorMarkdown(report), '');
  if (report.notes.length > 0) {
    lines.push('## Notes', '');
    for (const note of report.notes) lines.push(`- ${escapeMarkdownBlock(note)}`);
    lines.push('');
  }
  return `${lines
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trimEnd()}\n`;
}
