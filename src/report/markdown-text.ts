/**
 * Markdown primitives shared by the report's Markdown renderers: escaping of untrusted text and
 * GitHub-flavoured tables.
 */

/**
 * Escapes text for inline Markdown: a backslash before every character that could start
 * emphasis, code, a link, HTML or a table cell; line breaks become spaces so a value always
 * stays on its line (and in its cell).
 */
export function escapeMarkdown(text: string): string {
  return text.replace(/\r\n|[\r\n\u2028\u2029]/g, ' ').replace(/[\\`*_[\]<>#|~]/g, (ch) => `\\${ch}`);
}

/** Like {@link escapeMarkdown}, for text that starts a line: a leading list or heading marker is escaped too. */
export function escapeMarkdownBlock(text: string): string {
  return escapeMarkdown(text).replace(/^(\s*)(?:([-+=])|(\d+)(?=[.)]))/, (_m, space: string, marker: string | undefined, digits: string | undefined) =>
    marker !== undefined ? `${space}\\${marker}` : `${space}${digits ?? ''}\\`,
  );
}

function row(cells: readonly string[]): string {
  return `| ${cells.join(' | ')} |`;
}

/** A table; `align` per column: 'l' or 'r'. Cells must already be escaped. */
export function markdownTable(header: readonly string[], rows: ReadonlyArray<readonly string[]>, align: string): string {
  const rule = header.map((_, i) => (align[i] === 'r' ? '---:' : '---'));
  return [row(header), row(rule), ...rows.map(row)].join('\n');
}

/** ✅ or ❌. */
export const mark = (passed: boolean): string => (passed ? '✅' : '❌');
