/** The page's inline CSS (no fonts or files to fetch). */

export const CSS = `
:root{--bg:#f8fafc;--panel:#fff;--fg:#0f172a;--muted:#475569;--line:#e2e8f0;--grid:#e5e7eb;--plot:#fbfdff;
--corrected:#2563eb;--uncorrected:#ea580c;--p50:#0891b2;--p99:#7c3aed;--req:#60a5fa;--ok:#16a34a;--warn:#d97706;--error:#dc2626;--neutral:#64748b;--track:#f1f5f9}
@media (prefers-color-scheme:dark){:root{--bg:#0b1120;--panel:#111827;--fg:#e5e7eb;--muted:#94a3b8;--line:#1f2937;--grid:#243042;--plot:#0f172a;--track:#1e293b;--req:#3b82f6}}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);font:14px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif}
main{max-width:1120px;margin:0 auto;padding:24px 20px 48px}
h1{font-size:24px;margin:0 0 4px;word-break:break-word}
h2{font-size:18px;margin:32px 0 12px;padding-bottom:6px;border-bottom:1px solid var(--line)}
h3{font-size:15px;margin:20px 0 8px}
p{margin:6px 0}
.muted,.description{color:var(--muted)}
.status{display:inline-block;padding:2px 10px;border-radius:999px;font-size:13px;font-weight:600;vertical-align:middle;margin-left:8px;color:#fff}
.status.completed{background:var(--ok)}.status.interrupted{background:var(--warn)}.status.failed{background:var(--error)}
.status.verdict-clean{background:var(--ok)}.status.verdict-violated{background:var(--error)}.status.verdict-not-checked{background:var(--warn)}
.verdict{margin:10px 0;padding:10px 14px;border-radius:8px;border-left:4px solid var(--line);background:var(--panel)}
.verdict.clean{border-left-color:var(--ok)}.verdict.violated{border-left-color:var(--error);background:rgba(220,38,38,.06)}.verdict.not-checked{border-left-color:var(--warn);background:rgba(217,119,6,.08)}
.violation p{margin:0 0 6px;word-break:break-word}
.time{white-space:nowrap;font-variant-numeric:tabular-nums}
td.op,td.op code{white-space:nowrap;word-break:normal}
td.summary{min-width:14ch}
.banner{margin:16px 0;padding:12px 16px;border-radius:8px;border:2px solid;font-size:15px}
.banner.interrupted{border-color:var(--warn);background:rgba(217,119,6,.1)}
.banner.failed{border-color:var(--error);background:rgba(220,38,38,.1)}
.banner.inconclusive{border-color:var(--warn);background:rgba(217,119,6,.1)}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(140px,1fr));gap:10px;margin:16px 0}
.card{background:var(--panel);border:1px solid var(--line);border-left:4px solid var(--line);border-radius:8px;padding:10px 12px}
.card.tone-ok{border-left-color:var(--ok)}.card.tone-warn{border-left-color:var(--warn)}.card.tone-error{border-left-color:var(--error)}
.card-label{font-size:12px;color:var(--muted);text-transform:uppercase;letter-spacing:.04em}
.card-value{font-size:22px;font-weight:650;font-variant-numeric:tabular-nums}
.card-detail{font-size:12px;color:var(--muted)}
.details{display:grid;grid-template-columns:max-content 1fr;gap:4px 16px;background:var(--panel);border:1px solid var(--line);border-radius:8px;padding:12px 16px;margin:0}
.details dt{color:var(--muted)}.details dd{margin:0;word-break:break-word}
.panel{background:var(--panel);border:1px solid var(--line);border-radius:8px;padding:12px;margin:12px 0}
.chart{display:block;width:100%;height:auto}
.chart.small{max-width:560px}
.grid-charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(380px,100%),1fr));gap:12px}
.grid-charts .panel{margin:0}
svg text{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;font-size:12px;fill:var(--muted)}
svg .chart-title,svg .section-title{font-size:13px;font-weight:600;fill:var(--fg)}
svg .axis-title{font-size:11px}
svg .legend{font-size:12px;fill:var(--fg)}
svg .value{fill:var(--fg);font-variant-numeric:tabular-nums}
svg .value.failed{fill:var(--error);font-weight:600}svg .value.passed{fill:var(--ok);font-weight:600}svg .value.inconclusive{fill:var(--warn);font-weight:600}
svg .no-data{font-size:14px;font-style:italic}
svg .plot-bg{fill:var(--plot);stroke:var(--line)}
svg .frame{fill:none;stroke:var(--line)}
svg .grid{stroke:var(--grid);stroke-width:1;fill:none}
svg .tick-mark{stroke:var(--muted)}
svg .line{fill:none;stroke-width:2.2;stroke-linejoin:round;stroke-linecap:round}
svg .line.corrected{stroke:var(--corrected)}
svg .line.uncorrected{stroke:var(--uncorrected);stroke-dasharray:6 4}
svg .line.p50{stroke:var(--p50);stroke-width:1.6}svg .line.p99{stroke:var(--p99)}
svg .dot.corrected{fill:var(--corrected)}svg .dot.uncorrected{fill:var(--uncorrected)}svg .dot.p50{fill:var(--p50)}svg .dot.p99{fill:var(--p99)}
svg .bar.requests{fill:var(--req)}svg .bar.errors{fill:var(--error)}
svg .line.target{stroke:var(--muted);stroke-width:1.5;stroke-dasharray:4 4}
svg .stage-boundary{stroke:var(--muted);stroke-width:1;stroke-dasharray:1 3;fill:none}
svg .track{fill:var(--track)}
svg .tone-ok{fill:var(--ok)}svg .tone-warn{fill:var(--warn)}svg .tone-error{fill:var(--error)}svg .tone-neutral{fill:var(--neutral)}
svg .segment-mark{fill:#fff;font-size:12px;font-weight:600}
.sr-only{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
.table-wrap{overflow-x:auto;margin:10px 0}
table{border-collapse:collapse;background:var(--panel);border:1px solid var(--line);font-variant-numeric:tabular-nums;min-width:50%}
caption{text-align:left;font-weight:600;padding:4px 0;caption-side:top}
th,td{padding:4px 10px;border-bottom:1px solid var(--line);text-align:left;vertical-align:top;word-break:break-word}
thead th{background:var(--track);font-weight:600}
.num{text-align:right;white-space:nowrap}
td.uncorr{color:var(--muted)}
th.group{text-align:center}.corrected-head{color:var(--corrected)}.uncorrected-head{color:var(--uncorrected)}
tfoot th,tfoot td{font-weight:650;border-top:2px solid var(--line)}
tr.fail td{background:rgba(220,38,38,.06)}
.badge{display:inline-block;padding:0 8px;border-radius:999px;font-size:12px;font-weight:600;color:#fff;white-space:nowrap}
.run-headline{margin:12px 0;padding:10px 16px;border-radius:8px;border-left:6px solid;font-size:15px}.run-headline-word{font-size:28px;margin-right:10px;vertical-align:middle}.run-headline.pass{border-color:var(--ok)}.run-headline.pass .run-headline-word{color:var(--ok)}.run-headline.fail{border-color:var(--error);background:rgba(220,38,38,.06)}.run-headline.fail .run-headline-word{color:var(--error)}.run-headline.inconclusive{border-color:var(--warn);background:rgba(217,119,6,.08)}.run-headline.inconclusive .run-headline-word{color:var(--warn)}
.badge.pass{background:var(--ok)}.badge.fail{background:var(--error)}.badge.neutral{background:var(--neutral)}.badge.inconclusive{background:var(--warn)}
code{font-family:ui-monospace,"DejaVu Sans Mono",monospace;font-size:13px;word-break:break-word}
details{margin:10px 0}summary{cursor:pointer;color:var(--muted)}
.notes li{margin:4px 0;white-space:pre-wrap;word-break:break-word}
footer{margin-top:40px;color:var(--muted);font-size:12px}
`;
