/**
 * `compare.html`: one self-contained page (inline CSS and SVG, no scripts, nothing fetched) with
 * the verdicts and, per operation, the latency percentile spectra of baseline and candidate
 * overlaid. A pure function of the {@link Comparison}.
 */
import { type Comparison, type SpectrumCurve } from './compare-model.js';
import { comparisonSummary, figureLabel, formatChange, formatFigureValue, formatInterval, operationLabel, verdictLabel } from './compare-text.js';
import { decadeLabel } from './html/spectrum-chart.js';
import { CSS } from './html/style.js';
import { type Box, esc, legend, linePath, linear, n, niceTicks, noData, plotWidth, svgOpen, truncate, yGrid } from './html/svg.js';

const COMPARE_CSS = `
.verdict-worse{color:var(--error);font-weight:700}.verdict-better{color:var(--ok);font-weight:600}
.verdict-inconclusive,.verdict-not-judged{color:var(--warn)}
.summary.worse{border-left-color:var(--error);background:rgba(220,38,38,.06)}.summary.ok{border-left-color:var(--ok)}
td,th{padding:4px 10px;border-bottom:1px solid var(--line);text-align:left}
`;

/** Baseline (solid) and candidate (dashed) spectra of one operation on one log-of-nines axis. */
export function overlaidSpectrumChart(title: string, baseline: SpectrumCurve, candidate: SpectrumCurve): string {
  const box: Box = { width: 500, height: 276, left: 58, right: 30, top: 52, bottom: 40 };
  const decades = Math.max(2, ...[baseline, candidate].map((c) => Math.ceil(c.points[c.points.length - 1]?.x ?? 0)));
  const maxMs = Math.max(0, ...baseline.points.map((p) => p.ms), ...candidate.points.map((p) => p.ms));
  const yAxis = niceTicks(maxMs);
  const x = linear(0, decades, box.left, box.width - box.right);
  const y = linear(0, yAxis.max, box.height - box.bottom, box.top);
  let out = svgOpen(box, `Latency percentile spectrum of ${title}: baseline and candidate`, 'spectrum small');
  out += `<text class="chart-title" x="${n(box.left)}" y="16">${esc(truncate(title, 54))}</text>`;
  out += yGrid(box, yAxis.ticks, yAxis.decimals, y, 'latency (ms)');
  for (let d = 0; d <= decades; d++) {
    out += `<path class="grid" d="M${n(x(d))} ${n(box.top)}V${n(box.height - box.bottom)}"/>`;
    out += `<text class="tick" x="${n(x(d))}" y="${n(box.height - box.bottom + 16)}" text-anchor="middle">${decadeLabel(d)}</text>`;
  }
  out += `<text class="axis-title" x="${n(box.left + plotWidth(box) / 2)}" y="${n(box.height - 6)}" text-anchor="middle">percentile</text>`;
  if (baseline.points.length === 0 && candidate.points.length === 0) out += noData(box, 'no samples');
  for (const [curve, cls, name] of [
    [baseline, 'corrected', 'baseline'],
    [candidate, 'uncorrected', 'candidate'],
  ] as const) {
    if (curve.points.length === 0) continue;
    out += `<path class="line ${cls}" d="${linePath(curve.points.map((p) => ({ x: x(p.x), y: y(p.ms) })))}"><title>${name}</title></path>`;
  }
  out += legend(box.left, 36, [
    { label: 'baseline', cls: 'corrected', kind: 'line' },
    { label: 'candidate', cls: 'uncorrected', kind: 'line' },
  ]);
  return `${out}</svg>`;
}

export function renderCompareHtml(c: Comparison): string {
  const summary = comparisonSummary(c);
  const rows = c.figures
    .map(
      (f) =>
        `<tr><td class="op">${f.watched ? '★ ' : ''}<code>${esc(operationLabel(f.operation))}</code></td><td>${esc(figureLabel(f))}</td>` +
        `<td class="num">${esc(formatFigureValue(f, f.baseline?.value))}</td><td class="num">${esc(formatFigureValue(f, f.candidate?.value))}</td>` +
        `<td class="num">${esc(formatChange(f, f.change))}</td><td class="num">${esc(formatInterval(f))}</td>` +
        `<td class="verdict-${f.verdict}">${esc(verdictLabel(f))}${f.note === undefined ? '' : ` <span class="muted">(${esc(f.note)})</span>`}</td></tr>`,
    )
    .join('');
  const runs = [...c.baseline.map((r) => ['baseline', r] as const), ...c.candidate.map((r) => ['candidate', r] as const)]
    .map(
      ([side, r]) =>
        `<tr><td>${side}</td><td><code>${esc(r.source)}</code></td><td>${esc(r.scenario)}</td><td class="time">${esc(r.startedAt)}</td><td class="num">${r.requests}</td></tr>`,
    )
    .join('');
  const s = c.settings;
  const method =
    c.method === 'bootstrap'
      ? `Block bootstrap over the per-second latency histograms: ${s.resamples ?? 0} resamples, blocks of ${s.blockSeconds?.baseline ?? '?'} s (baseline) and ${s.blockSeconds?.candidate ?? '?'} s (candidate), seed ${s.seed}${s.betweenRuns === true ? "; widened by the variation between runs that each side's parts show" : ''}.`
      : 'Run by run: one figure per run, Mann–Whitney U, medians with order-statistic intervals, Hodges–Lehmann interval of the ratio.';
  const body = [
    `<header><h1>keysim compare</h1></header>`,
    `<div class="verdict summary ${c.worse.length > 0 ? 'worse' : 'ok'}"><strong>${esc(summary)}</strong></div>`,
    `<p class="muted">${esc(method)} ${(s.confidence * 100).toFixed(0)} % intervals; a figure is worse only when its whole interval is beyond the noise threshold (±${(s.noise * 100).toFixed(1)} %). ★ watched.</p>`,
    `<section aria-labelledby="h-figures"><h2 id="h-figures">Figures</h2><div class="table-wrap"><table><thead><tr><th>operation</th><th>figure</th><th>baseline</th><th>candidate</th><th>change</th><th>interval</th><th>verdict</th></tr></thead><tbody>${rows}</tbody></table></div></section>`,
    `<section aria-labelledby="h-spectra"><h2 id="h-spectra">Latency percentile spectra</h2><p class="muted">Latency from the intended send time, all runs of a side merged. The x axis is logarithmic in nines.</p>`,
    `<div class="grid-charts">${c.spectra.map((sp) => `<div class="panel">${overlaidSpectrumChart(operationLabel(sp.operation), sp.baseline, sp.candidate)}</div>`).join('')}</div></section>`,
    `<section aria-labelledby="h-runs"><h2 id="h-runs">Runs</h2><div class="table-wrap"><table><thead><tr><th>side</th><th>source</th><th>scenario</th><th>started</th><th>requests</th></tr></thead><tbody>${runs}</tbody></table></div></section>`,
    c.notes.length === 0
      ? ''
      : `<section aria-labelledby="h-notes"><h2 id="h-notes">Notes</h2><ul class="notes">${c.notes.map((note) => `<li>${esc(note)}</li>`).join('')}</ul></section>`,
    `<footer>Generated by keysim compare. Self-contained: no scripts, nothing fetched.</footer>`,
  ].join('\n');
  return (
    `<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n` +
    `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">\n` +
    `<meta name="viewport" content="width=device-width, initial-scale=1">\n<link rel="icon" href="data:,">\n` +
    `<title>${esc(`keysim compare: ${summary}`)}</title>\n<style>${CSS}${COMPARE_CSS}</style>\n</head>\n<body>\n<main>\n${body}\n</main>\n</body>\n</html>\n`
  );
}
