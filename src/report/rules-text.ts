/**
 * The rules a run covered ("rules exercised N of M"), as text: one line for the terminal summary
 * and the Markdown section. A pass says what it covered, and what it never touched.
 */
import type { RulesSection } from './model.js';
import { escapeMarkdownBlock } from './markdown-text.js';

/** "rules exercised 5 of 27". */
export function rulesHeadline(section: RulesSection): string {
  return `rules exercised ${section.exercised.length} of ${section.total}`;
}

/** The terminal summary's lines: the headline with the ids exercised, then those untouched. */
export function rulesSummaryLines(section: RulesSection): string[] {
  const ids = (list: RulesSection['exercised']) => (list.length === 0 ? 'none' : list.map((r) => r.id).join(', '));
  return [`note  ${rulesHeadline(section)}: ${ids(section.exercised)}`, `      untouched: ${ids(section.untouched)}`];
}

/** The Markdown section's lines (without its heading). */
export function rulesMarkdown(section: RulesSection): string[] {
  const item = (r: RulesSection['exercised'][number]) => `- \`${r.id}\` ${escapeMarkdownBlock(r.title)}`;
  return [
    `${rulesHeadline(section)} (the scenario's declared rules; docs/checking.md#rules).`,
    '',
    '**Exercised**',
    '',
    ...(section.exercised.length === 0 ? ['- none'] : section.exercised.map(item)),
    '',
    '**Never touched**',
    '',
    ...(section.untouched.length === 0 ? ['- none'] : section.untouched.map(item)),
  ];
}
