/** The report page's measures section: each figure measured against the promise set in force, in a table. */
import type { Measure } from '../model.js';
import { MEASURES_NOTE, MEASURE_COLUMNS, measureCells } from '../measures-text.js';
import { esc } from './svg.js';

/** The columns that hold figures, right-aligned. */
const NUMERIC: ReadonlySet<number> = new Set([1, 2, 3, 4, 5, 6]);

/** The section, or nothing when the run measured nothing. */
export function measuresSectionHtml(measures: readonly Measure[] | undefined): string {
  if (measures === undefined || measures.length === 0) return '';
  const head = MEASURE_COLUMNS.map((c, i) => `<th scope="col"${NUMERIC.has(i) ? ' class="num"' : ''}>${esc(c)}</th>`).join('');
  const rows = measures
    .map(
      (m) =>
        `<tr>${measureCells(m)
          .map((cell, i) => (i === 0 ? `<th scope="row"><code>${esc(cell)}</code></th>` : `<td${NUMERIC.has(i) ? ' class="num"' : ''}>${esc(cell)}</td>`))
          .join('')}</tr>`,
    )
    .join('');
  return [
    `<section aria-labelledby="h-measures"><h2 id="h-measures">Measures</h2>`,
    `<p class="muted">${esc(MEASURES_NOTE)}</p>`,
    `<div class="table-wrap"><table class="measures"><caption>Measures against the promises</caption><thead><tr>${head}</tr></thead><tbody>${rows}</tbody></table></div>`,
    `</section>`,
  ].join('');
}
