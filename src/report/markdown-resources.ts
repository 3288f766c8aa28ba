/** The Markdown report's resources section: what the run created on its target, deleted and left. */
import type { ResourcesSection } from './model.js';
import { escapeMarkdown, escapeMarkdownBlock, markdownTable } from './markdown-text.js';
import { kindLabel, leftReason, resourcesVerdict } from './resources-text.js';

export function resourcesMarkdown(section: ResourcesSection): string[] {
  const lines: string[] = [];
  const verdict = `${section.unexpectedlyLeft > 0 ? '❌ ' : ''}${escapeMarkdownBlock(resourcesVerdict(section))} Tag: ${escapeMarkdown(section.tag)}.`;
  lines.push(verdict);
  if (section.kinds.length > 0) {
    const rows = section.kinds.map((k) => [
      kindLabel(k.kind),
      String(k.created),
      String(k.deleted),
      k.left > k.leftExpected ? `**${k.left}**` : String(k.left),
      escapeMarkdown(leftReason(section, k)),
    ]);
    lines.push('', markdownTable(['Kind', 'Created', 'Deleted', 'Left', 'Why left'], rows, 'lrrrl'));
  }
  if (section.notes.length > 0) lines.push('', ...section.notes.map((note) => `- ${escapeMarkdownBlock(note)}`));
  return lines;
}
