/**
 * The load generator in `report.md`: the banner of a generator-limited (inconclusive) run, which
 * goes at the top, and the table of the generator's own figures per measured phase.
 */
import type { RunReport } from './model.js';
import { generatorBanner } from './generator-text.js';
import { formatValue } from './format.js';
import { escapeMarkdown, markdownTable as table } from './markdown-text.js';

/** A GitHub alert saying the generator was the bottleneck, or nothing. */
export function generatorBannerMarkdown(report: RunReport): string[] {
  const banner = generatorBanner(report);
  if (banner === undefined) return [];
  return ['> [!WARNING]', `> **${escapeMarkdown(banner.headline)}**`, `> ${escapeMarkdown(banner.detail)}`, ''];
}

/** The generator's figures per measured phase, and the limits they were judged against. */
export function generatorMarkdown(report: RunReport): string[] {
  const generator = report.generator;
  if (generator === undefined) return [];
  const limits = generator.limits;
  const loopLimit = limits.loopDelayP99Ms >= Number.MAX_VALUE ? 'not judged' : `${formatValue(limits.loopDelayP99Ms)} ms`;
  const verdict = generator.limited
    ? `**It could not keep its schedule** — a latency or throughput threshold its lag may explain is inconclusive: ${escapeMarkdown(generator.reasons.join('; '))}.`
    : 'It kept its schedule.';
  const rows = generator.phases.map((p) => [
    escapeMarkdown(p.name),
    p.scheduledSends === null || p.lateSends === null ? '– (closed model)' : `${formatValue(p.lateSends)} / ${formatValue(p.scheduledSends)}`,
    formatValue(p.loopDelayMs.p50),
    formatValue(p.loopDelayMs.p99),
    formatValue(p.loopDelayMs.max),
    `${Math.round(p.mainThreadBusy * 100)} %`,
    formatValue(p.processCpuCores),
  ]);
  return [
    `${verdict} Limits: late sends over ${formatValue(limits.lateShare * 100)} % of a phase's sends, or an event-loop delay p99 over ${loopLimit}. ` +
      `Process CPU includes the embedded simulator (a worker thread of the same process); main-thread busy is the generator's own share. ` +
      `Load average at the end: ${formatValue(generator.loadAverage)}.`,
    '',
    rows.length === 0
      ? '_No measured phase ran._'
      : table(['Phase', 'Late sends', 'Loop delay p50 (ms)', 'p99', 'max', 'Main thread busy', 'Process CPU (cores)'], rows, 'lrrrrrr'),
  ];
}
