/** The report page's resources section: what the run created on its target, deleted and left. */
import type { ResourcesSection } from '../model.js';
import { kindLabel, leftReason, resourcesVerdict } from '../resources-text.js';
import { esc } from './svg.js';

/** The section, or nothing for a report written before keysim counted resources. */
export function resourcesSectionHtml(section: ResourcesSection | undefined): string {
  if (section === undefined) return '';
  const bad = section.unexpectedlyLeft > 0;
  const rows = section.kinds
    .map(
      (k) =>
        `<tr><td>${esc(kindLabel(k.kind))}</td><td class="num">${k.created}</td><td class="num">${k.deleted}</td>` +
        `<td class="num${k.left > k.leftExpected ? ' error' : ''}">${k.left}</td><td>${esc(leftReason(section, k))}</td></tr>`,
    )
    .join('');
  return [
    `<section aria-labelledby="h-resources"><h2 id="h-resources">Resources${bad ? ' <span class="status failed">LEFT BEHIND</span>' : ''}</h2>`,
    `<p>${esc(resourcesVerdict(section))} Tag: <code>${esc(section.tag)}</code>.</p>`,
    section.kinds.length === 0
      ? ''
      : `<div class="table-wrap"><table><caption>Created, deleted and left, per kind</caption><thead><tr><th>Kind</th><th class="num">Created</th><th class="num">Deleted</th><th class="num">Left</th><th>Why left</th></tr></thead><tbody>${rows}</tbody></table></div>`,
    section.notes.length === 0 ? '' : `<ul class="notes">${section.notes.map((note) => `<li>${esc(note)}</li>`).join('')}</ul>`,
    `</section>`,
  ].join('');
}
