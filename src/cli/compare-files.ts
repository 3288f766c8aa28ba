/**
 * Files of `keysim compare` and `keysim run --baseline`: reading run reports given as run folders
 * or report.json files (a bad one is a usage error naming it), and writing compare.{json,md,html}.
 */
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseReport } from '../report/index.js';
import type { CompareInput } from '../report/compare.js';
import type { Comparison } from '../report/compare-model.js';
import { renderCompareJson, renderCompareMarkdown } from '../report/compare-text.js';
import { renderCompareHtml } from '../report/compare-html.js';
import { UsageError } from './exit-codes.js';
import { writeFileChecked } from './report-files.js';

/** Reads a run folder's report.json, or a report.json given directly. */
export function readRunReport(path: string): CompareInput {
  if (!existsSync(path)) throw new UsageError(`${path} does not exist: give a run folder (reports/<run>) or its report.json.`);
  const file = statSync(path).isDirectory() ? join(path, 'report.json') : path;
  if (!existsSync(file)) throw new UsageError(`${path} has no report.json: give a run folder (reports/<run>) or a report.json.`);
  const parsed = parseReport(readFileSync(file, 'utf8'));
  if (!parsed.ok) throw new UsageError(`${file}: ${parsed.error}`);
  return { source: path, report: parsed.report };
}

/**
 * The baseline for `run --baseline DIR` and one scenario: DIR itself when it is a run folder or a
 * report.json; when it is a folder of run folders (an --out folder), the newest run of `scenario`
 * in it. Undefined when there is none.
 */
export function findBaseline(path: string, scenario: string): CompareInput | undefined {
  if (!existsSync(path))
    throw new UsageError(`--baseline ${path} does not exist: give a run folder, its report.json, or a folder of run folders (an --out folder).`);
  if (!statSync(path).isDirectory() || existsSync(join(path, 'report.json'))) {
    const input = readRunReport(path);
    return input.report.scenario.name === scenario ? input : undefined;
  }
  // Run folders start with their UTC start time: the last in name order is the newest.
  const folders = readdirSync(path, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(join(path, d.name, 'report.json')))
    .map((d) => d.name)
    .sort()
    .reverse();
  for (const name of folders) {
    const parsed = parseReport(readFileSync(join(path, name, 'report.json'), 'utf8'));
    if (parsed.ok && parsed.report.scenario.name === scenario) return { source: join(path, name), report: parsed.report };
  }
  return undefined;
}

export interface WrittenComparison {
  json: string;
  markdown: string;
  html: string;
}

/** Writes compare.json, compare.md and compare.html into `folder` (which exists). */
export function writeComparison(comparison: Comparison, folder: string): WrittenComparison {
  const files = { json: join(folder, 'compare.json'), markdown: join(folder, 'compare.md'), html: join(folder, 'compare.html') };
  writeFileChecked(files.json, renderCompareJson(comparison));
  writeFileChecked(files.markdown, renderCompareMarkdown(comparison));
  writeFileChecked(files.html, renderCompareHtml(comparison));
  return files;
}
