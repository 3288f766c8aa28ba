/** The report page's rules section: the service's rules the run exercised and those it never touched. */
import type { RulesSection } from '../model.js';
import { rulesHeadline } from '../rules-text.js';
import { esc } from './svg.js';

/** The section, or nothing for a report written before keysim listed rules. */
export function rulesSectionHtml(section: RulesSection | undefined): string {
  if (section === undefined) return '';
  const list = (rules: RulesSection['exercised']) =>
    rules.length === 0
      ? '<p class="muted">none</p>'
      : `<ul class="notes">${rules.map((r) => `<li><code>${esc(r.id)}</code> ${esc(r.title)}</li>`).join('')}</ul>`;
  return [
    `<section aria-labelledby="h-rules"><h2 id="h-rules">Rules covered</h2>`,
    `<p>${esc(rulesHeadline(section))}: a pass covers these rules of the service, and says nothing of the others.</p>`,
    `<h3>Exercised</h3>${list(section.exercised)}`,
    section.notJudged === undefined || section.notJudged.length === 0
      ? ''
      : `<h3>Not judged</h3><p class="muted">Declared by the scenario, but every check of them was not judged (answers that never came, checks skipped).</p>${list(section.notJudged)}`,
    `<h3>Never touched</h3>${list(section.untouched)}`,
    `</section>`,
  ].join('');
}
