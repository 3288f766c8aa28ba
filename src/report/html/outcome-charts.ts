/** The outcome breakdown and the thresholds/checks strip. */
import { type OperationStats, type RunReport, TRANSPORT_ERROR_KINDS, type ThresholdResult } from '../model.js';
import { type Tally, runVerdict } from '../verdict.js';
import { formatCount, formatPercent, formatValue, sortedCounts, sumCounts } from '../format.js';
import { type Box, esc, linear, n, noData, plotHeight, plotWidth, svgOpen, truncate } from './svg.js';

export type Tone = 'ok' | 'warn' | 'error' | 'neutral';

export interface OutcomeRow {
  label: string;
  count: number;
  tone: Tone;
}

export interface OutcomeSection {
  title: string;
  rows: OutcomeRow[];
  /** Denominator for the percentages. */
  total: number;
}

export function statusTone(status: string): Tone {
  const code = Number(status);
  if (!Number.isInteger(code)) return 'neutral';
  if (code >= 200 && code < 300) return 'ok';
  if (code >= 500) return 'error';
  if (code >= 400) return 'warn';
  return 'neutral';
}

export function outcomeSections(op: OperationStats): OutcomeSection[] {
  const sections: OutcomeSection[] = [];
  const statuses = sortedCounts(op.statuses).filter(([, c]) => c > 0);
  const transport = TRANSPORT_ERROR_KINDS.filter((k) => op.transportErrors[k] > 0);
  const answeredOrFailed =
    sumCounts(op.statuses) + TRANSPORT_ERROR_KINDS.reduce((s, k) => s + (Number.isFinite(op.transportErrors[k]) ? op.transportErrors[k] : 0), 0);
  // Cut off at a closed-model phase's end: sent, not in `requests`, no answer and no error.
  const cutOff = Number.isFinite(op.cutOff) ? (op.cutOff ?? 0) : 0;
  if (statuses.length > 0 || transport.length > 0 || cutOff > 0) {
    sections.push({
      title: 'HTTP status / transport error',
      total: Math.max(answeredOrFailed, op.requests) + cutOff,
      rows: [
        ...statuses.map(([status, count]): OutcomeRow => ({ label: `HTTP ${status}`, count, tone: statusTone(status) })),
        ...transport.map((kind): OutcomeRow => ({ label: `${kind} (transport)`, count: op.transportErrors[kind], tone: 'error' })),
        ...(cutOff > 0 ? [{ label: 'cut off (phase end)', count: cutOff, tone: 'neutral' } satisfies OutcomeRow] : []),
      ],
    });
  }
  const codes = sortedCounts(op.codes)
    .filter(([, c]) => c > 0)
    .sort((a, b) => b[1] - a[1]);
  if (codes.length > 0) {
    sections.push({
      title: 'Verification code',
      total: sumCounts(op.codes),
      rows: codes.map(([code, count]): OutcomeRow => ({ label: code, count, tone: code === 'VALID' ? 'ok' : 'warn' })),
    });
  }
  const { allowed, denied } = op.ratelimit;
  if (allowed + denied > 0) {
    sections.push({
      title: 'Rate limit',
      total: allowed + denied,
      rows: [
        { label: 'allowed', count: allowed, tone: 'ok' },
        { label: 'denied', count: denied, tone: 'warn' },
      ],
    });
  }
  return sections;
}

export function outcomeChart(report: RunReport): string {
  const sections = outcomeSections(report.overall);
  const rowHeight = 22;
  const titleHeight = 28;
  const rows = sections.reduce((s, sec) => s + sec.rows.length, 0);
  const sectionGap = 12;
  const height = Math.max(120, 20 + sections.length * (titleHeight + sectionGap) - sectionGap + rows * rowHeight + 10);
  const box: Box = { width: 1000, height, left: 200, right: 170, top: 10, bottom: 10 };
  const label =
    sections.length === 0
      ? 'Outcome breakdown: no outcomes recorded'
      : `Outcome breakdown, all operations: ${sections
          .map((s) => `${s.title}: ${s.rows.map((r) => `${r.label} ${formatCount(r.count)}`).join(', ')}`)
          .join('; ')}`;
  let out = svgOpen(box, label, 'outcomes');
  if (sections.length === 0) {
    out += `<rect class="track" x="${n(box.left)}" y="${n(box.top)}" width="${n(plotWidth(box))}" height="${n(plotHeight(box))}" rx="4"/>`;
    out += noData(box, 'no requests were answered');
    return `${out}</svg>`;
  }
  const barX = linear(0, 1, box.left, box.width - box.right);
  let yPos = box.top + 10;
  sections.forEach((section, si) => {
    if (si > 0) yPos += sectionGap;
    out += `<text class="section-title" x="16" y="${n(yPos + 12)}">${esc(section.title)}</text>`;
    yPos += titleHeight;
    for (const row of section.rows) {
      const share = section.total > 0 ? Math.min(1, row.count / section.total) : 0;
      const w = barX(share) - box.left;
      const mid = yPos + rowHeight / 2 - 2;
      out += `<text class="tick" x="${n(box.left - 8)}" y="${n(mid)}" text-anchor="end" dominant-baseline="middle">${esc(truncate(row.label, 26))}<title>${esc(row.label)}</title></text>`;
      out += `<rect class="track" x="${n(box.left)}" y="${n(yPos + 2)}" width="${n(plotWidth(box))}" height="${n(rowHeight - 8)}" rx="3"/>`;
      out += `<rect class="bar tone-${row.tone}" x="${n(box.left)}" y="${n(yPos + 2)}" width="${n(Math.max(share > 0 ? 1.5 : 0, w))}" height="${n(rowHeight - 8)}" rx="3"><title>${esc(`${row.label}: ${formatCount(row.count)} (${formatPercent(row.count, section.total)})`)}</title></rect>`;
      out += `<text class="value" x="${n(box.width - box.right + 8)}" y="${n(mid)}" dominant-baseline="middle">${esc(`${formatCount(row.count)} (${formatPercent(row.count, section.total)})`)}</text>`;
      yPos += rowHeight;
    }
  });
  return `${out}</svg>`;
}

/* ------------------------------------------------------------------- thresholds and checks */

/**
 * The thresholds/checks strip: one segment per threshold and check, in the states of the run's
 * verdict (`runVerdict`): passed ✓ green, failed ✗ red, inconclusive ? amber and counted apart.
 */
export function verdictChart(report: RunReport): string {
  const box: Box = { width: 1000, height: 116, left: 110, right: 190, top: 12, bottom: 12 };
  const verdict = runVerdict(report);
  const actual = (t: ThresholdResult) => (t.actual === null ? 'no data' : formatValue(t.actual));
  const groups: Array<{ title: string; tally: Tally; items: Array<{ state: StripState; name: string; label: string }> }> = [
    {
      title: 'Thresholds',
      tally: verdict.thresholdTally,
      items: report.thresholds.map((t, i) => {
        const state = verdict.thresholds[i]?.state ?? 'failed';
        return { state, name: t.expression, label: `${t.expression}: ${STATE_WORD[state]} (actual ${actual(t)})` };
      }),
    },
    {
      title: 'Checks',
      tally: verdict.checkTally,
      items: report.checks.map((c, i) => {
        const state = verdict.checks[i]?.state ?? 'failed';
        return { state, name: c.name, label: `${c.name}: ${STATE_WORD[state]}` };
      }),
    },
  ];
  const summary = groups.map((g) => (g.items.length === 0 ? `${g.title}: none` : `${g.title}: ${tallyText(g.tally)}`)).join('; ');
  let out = svgOpen(box, summary, 'verdicts');
  const width = plotWidth(box);
  groups.forEach((group, gi) => {
    const yTop = box.top + 8 + gi * 48;
    const h = 26;
    out += `<text class="section-title" x="16" y="${n(yTop + h / 2)}" dominant-baseline="middle">${group.title}</text>`;
    if (group.items.length === 0) {
      out += `<rect class="track" x="${n(box.left)}" y="${n(yTop)}" width="${n(width)}" height="${h}" rx="4"/>`;
      out += `<text class="no-data" x="${n(box.left + width / 2)}" y="${n(yTop + h / 2)}" text-anchor="middle" dominant-baseline="middle">none defined</text>`;
      out += `<text class="value" x="${n(box.width - box.right + 10)}" y="${n(yTop + h / 2)}" dominant-baseline="middle">—</text>`;
      return;
    }
    const gap = group.items.length > 40 ? 0.5 : 3;
    const segment = width / group.items.length;
    group.items.forEach((item, i) => {
      const x = box.left + i * segment;
      const mark = STATE_MARK[item.state];
      out += `<rect class="segment ${STATE_TONE[item.state]}" x="${n(x)}" y="${n(yTop)}" width="${n(Math.max(0.5, segment - gap))}" height="${h}" rx="3"><title>${esc(item.label)}</title></rect>`;
      if (segment >= 26) {
        const text = segment >= 80 ? `${mark} ${truncate(item.name, Math.floor((segment - gap - 28) / 7))}` : mark;
        out += `<text class="segment-mark" x="${n(x + (segment - gap) / 2)}" y="${n(yTop + h / 2)}" text-anchor="middle" dominant-baseline="central">${esc(text)}</text>`;
      }
    });
    const tone = group.tally.failed > 0 ? 'failed' : group.tally.inconclusive > 0 ? 'inconclusive' : 'passed';
    out += `<text class="value ${tone}" x="${n(box.width - box.right + 10)}" y="${n(yTop + h / 2)}" dominant-baseline="middle">${esc(tallyText(group.tally))}</text>`;
  });
  return `${out}</svg>`;
}

type StripState = 'passed' | 'failed' | 'inconclusive';
const STATE_MARK: Record<StripState, string> = { passed: '✓', failed: '✗', inconclusive: '?' };
const STATE_TONE: Record<StripState, string> = { passed: 'tone-ok', failed: 'tone-error', inconclusive: 'tone-warn' };
const STATE_WORD: Record<StripState, string> = { passed: 'passed', failed: 'FAILED', inconclusive: 'inconclusive' };

/** `2/3 passed · 1 failed · 1 inconclusive`: an inconclusive item is never counted as a failed one. */
export function tallyText(tally: Tally): string {
  return [
    `${tally.passed}/${tally.total} passed`,
    tally.failed > 0 ? `${tally.failed} failed` : '',
    tally.inconclusive > 0 ? `${tally.inconclusive} inconclusive` : '',
  ]
    .filter((x) => x !== '')
    .join(' · ');
}

/* ------------------------------------------------------------------------------- tables */
