/**
 * The error catalogue as docs/errors.md#catalogue writes it: identifier → HTTP status and title.
 * The contract checks (service-client.ts) take what an error should look like from here, the
 * document, never from src/http/problems.ts: a check that read the source's own table could not
 * fail when that table is wrong. test/docs/error-catalogue.test.ts holds the two to each other.
 */
import { readFileSync } from 'node:fs';

export interface CatalogueEntry {
  status: number;
  title: string;
}

const ROW = /^\| `(err:[a-z_:]+)` \| (\d{3}) \| ([^|]+?) \|/;

/** Reads the first table under `## Catalogue`; `where` names the document in errors. */
export function catalogueOf(markdown: string, where: string): Readonly<Record<string, CatalogueEntry>> {
  const lines = markdown.split('\n');
  const heading = lines.indexOf('## Catalogue');
  if (heading === -1) throw new Error(`${where} has no "## Catalogue" section: the contract checks read the error catalogue from it.`);
  const catalogue: Record<string, CatalogueEntry> = {};
  let inTable = false;
  for (let i = heading + 1; i < lines.length; i++) {
    const line = lines[i] ?? '';
    if (!line.startsWith('|')) {
      if (inTable) break;
      continue;
    }
    inTable = true;
    if (line.startsWith('| identifier ') || line.startsWith('| ---')) continue;
    const match = ROW.exec(line);
    if (match === null) throw new Error(`${where}:${i + 1}: a catalogue row must read | \`err:…\` | status | title | …, got: ${line}`);
    const [, code, status, title] = match as unknown as [string, string, string, string];
    catalogue[code] = { status: Number(status), title: title.trim() };
  }
  if (Object.keys(catalogue).length === 0) throw new Error(`${where}: the "## Catalogue" section has no table of errors.`);
  return catalogue;
}

/** The catalogue of this repository's docs/errors.md. */
export const SPEC_CATALOGUE = catalogueOf(readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8'), 'docs/errors.md');
