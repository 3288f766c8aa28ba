/** The load generator on the report page: the banner of a generator-limited run and its figures per phase. */
import type { RunReport } from '../model.js';
import { generatorBanner } from '../generator-text.js';
import { formatValue } from '../format.js';
import { esc } from './svg.js';
import { td } from './tables.js';

/** At the top of the page when the generator could not keep its schedule: a banner (INCONCLUSIVE when a threshold is). */
export function generatorBannerHtml(report: RunReport): string {
  const banner = generatorBanner(report);
  if (banner === undefined) return '';
  return `<div class="banner inconclusive" role="alert"><strong>${esc(banner.headline)}</strong> ${esc(banner.detail)}</div>`;
}

/** The generator's own figures per measured phase, and the limits they were judged against. */
export function generatorSectionHtml(report: RunReport): string {
  const generator = report.generator;
  if (generator === undefined) return '';
  const limits = generator.limits;
  const loopLimit = limits.loopDelayP99Ms >= Number.MAX_VALUE ? 'not judged' : `${formatValue(limits.loopDelayP99Ms)} ms`;
  const verdict = generator.limited
    ? `<strong>It could not keep its schedule</strong>: a latency or throughput threshold its lag may explain is inconclusive (${esc(generator.reasons.join('; '))}).`
    : 'It kept its schedule.';
  const rows = generator.phases
    .map(
      (p) =>
        `<tr><th scope="row">${esc(p.name)}</th>` +
        td(
          p.scheduledSends === null || p.lateSends === null ? '— (closed model)' : `${esc(formatValue(p.lateSends))} / ${esc(formatValue(p.scheduledSends))}`,
          'num',
        ) +
        [p.loopDelayMs.p50, p.loopDelayMs.p99, p.loopDelayMs.max].map((v) => td(esc(formatValue(v)), 'num')).join('') +
        td(`${Math.round(p.mainThreadBusy * 100)} %`, 'num') +
        td(esc(formatValue(p.processCpuCores)), 'num') +
        `</tr>`,
    )
    .join('');
  const table =
    generator.phases.length === 0
      ? '<p class="muted">No measured phase ran.</p>'
      : `<div class="table-wrap"><table><caption>The generator's own figures per measured phase</caption><thead><tr><th scope="col">Phase</th><th scope="col" class="num">Late sends</th>` +
        `<th scope="col" class="num">Loop delay p50 (ms)</th><th scope="col" class="num">p99</th><th scope="col" class="num">max</th><th scope="col" class="num">Main thread busy</th><th scope="col" class="num">Process CPU (cores)</th></tr></thead><tbody>${rows}</tbody></table></div>`;
  return (
    `<section aria-labelledby="h-generator"><h2 id="h-generator">Load generator</h2>` +
    `<p>${verdict} Limits: late sends over ${esc(formatValue(limits.lateShare * 100))} % of a phase's sends, or an event-loop delay p99 over ${esc(loopLimit)}. ` +
    `Process CPU includes the embedded simulator (a worker thread of the same process); main-thread busy is the generator's own share. Load average at the end: ${esc(formatValue(generator.loadAverage))}.</p>` +
    `${table}</section>`
  );
}
