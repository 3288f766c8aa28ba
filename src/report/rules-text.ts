/**
 * The rules a run covered ("rules exercised N of M"), as text: one line for the terminal summary
 * and the Markdown section. A pass says what it covered, and what it never touched.
 */
import type { RulesSection } from './model.js';
import { escapeMarkdownBlock } from './markdown-text.js';

/** "rules exercised 5 of 27", and how many the run declared but judged nothing of: "(2 not judged)". */
export function rulesHeadline(section: RulesSection): string {
  const notJudged = section.notJudged?.length ?? 0;
  return `rules exercised ${section.exercised.length} of ${section.total}${notJudged > 0 ? ` (${notJudged} not judged)` : ''}`;
}

/** The terminal summary's lines: the headline with the ids exercised, those not judged, then those untouched. */
export function rulesSummaryLines(section: RulesSection): string[] {
  const ids = (list: RulesSection['exercised']) => (list.length === 0 ? 'none' : list.map((r) => r.id).join(', '));
  const notJudged = section.notJudged ?? [];
  return [
    `note  ${rulesHeadline(section)}: ${ids(section.exercised)}`,
    ...(notJudged.length > 0 ? [`      not judged (nothing judging them came to a verdict): ${ids(notJudged)}`] : []),
    `      untouched: ${ids(section.untouched)}`,
  ];
}

/**
 * One section for the segments of a run (keysim merge): a rule exercised in any segment is
 * exercised; a declared rule no segment judged stays not judged. Sections of older reports (no
 * `notJudged`) hold the declared rules as exercised.
 */
export function mergeRulesSections(sections: readonly RulesSection[]): RulesSection | undefined {
  const first = sections[0];
  if (first === undefined) return undefined;
  const exercised = new Map(sections.flatMap((s) => s.exercised).map((r) => [r.id, r] as const));
  const notJudged = new Map(
    sections
      .flatMap((s) => s.notJudged ?? [])
      .filter((r) => !exercised.has(r.id))
      .map((r) => [r.id, r] as const),
  );
  const touched = (id: string) => exercised.has(id) || notJudged.has(id);
  // Keep the order of the segments' lists (RULES order), whatever segment a rule came from.
  const all = [...first.exercised, ...(first.notJudged ?? []), ...first.untouched];
  const order = new Map(all.map((r, i) => [r.id, i] as const));
  const sorted = (rules: Iterable<RulesSection['exercised'][number]>) => [...rules].sort((a, b) => (order.get(a.id) ?? 0) - (order.get(b.id) ?? 0));
  return {
    total: first.total,
    exercised: sorted(exercised.values()),
    ...(sections.some((s) => s.notJudged !== undefined) ? { notJudged: sorted(notJudged.values()) } : {}),
    untouched: first.untouched.filter((r) => !touched(r.id)),
  };
}

/** The Markdown section's lines (without its heading). */
export function rulesMarkdown(section: RulesSection): string[] {
  const item = (r: RulesSection['exercised'][number]) => `- \`${r.id}\` ${escapeMarkdownBlock(r.title)}`;
  return [
    `${rulesHeadline(section)} (the scenario's declared rules that its checks, or the invariant checkers, judged; docs/checking.md#rules).`,
    '',
    '**Exercised**',
    '',
    ...(section.exercised.length === 0 ? ['- none'] : section.exercised.map(item)),
    '',
    ...(section.notJudged === undefined || section.notJudged.length === 0
      ? []
      : ['**Not judged** (declared, but every check of them was not judged: answers that never came, checks skipped)', '', ...section.notJudged.map(item), '']),
    '**Never touched**',
    '',
    ...(section.untouched.length === 0 ? ['- none'] : section.untouched.map(item)),
  ];
}
