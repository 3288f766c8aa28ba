/** Reading GitHub-flavoured Markdown tables back, for the Markdown renderer tests. */

/** Cells of a table row, split on pipes that are not backslash-escaped. */
export function cells(line: string): string[] {
  return line
    .trim()
    .replace(/^\|/, '')
    .replace(/(?<!\\)\|$/, '')
    .split(/(?<!\\)\|/)
    .map((c) => c.trim());
}

/** Consecutive lines starting with `|`. */
export function tables(markdown: string): string[][] {
  const blocks: string[][] = [];
  let current: string[] = [];
  for (const line of markdown.split('\n')) {
    if (line.startsWith('|')) current.push(line);
    else if (current.length > 0) {
      blocks.push(current);
      current = [];
    }
  }
  if (current.length > 0) blocks.push(current);
  return blocks;
}

/** Every table (as rows of cells) whose header row starts with `firstHeader`. */
export function tablesStartingWith(markdown: string, firstHeader: string): string[][][] {
  return tables(markdown)
    .filter((t) => cells(t[0] ?? '')[0] === firstHeader)
    .map((t) => t.map(cells));
}

/** The first table whose header row starts with `firstHeader`. */
export function tableStartingWith(markdown: string, firstHeader: string): string[][] {
  const table = tablesStartingWith(markdown, firstHeader)[0];
  if (table === undefined) throw new Error(`no table with header ${firstHeader}`);
  return table;
}
