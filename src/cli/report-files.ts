/** Writes a report's three renderings into `<out>/<UTC timestamp>-<scenario>/`. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { renderHtml, renderJson, renderMarkdown } from '../report/index.js';
import type { RunReport } from '../report/model.js';

export interface WrittenReport {
  folder: string;
  json: string;
  markdown: string;
  html: string;
}

export function reportFolderName(report: RunReport): string {
  const stamp = report.startedAt.replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
  return `${stamp}-${report.scenario.name.replace(/[^A-Za-z0-9_.-]/g, '_')}`;
}

export function writeReport(report: RunReport, outDir: string): WrittenReport {
  const folder = resolve(outDir, reportFolderName(report));
  mkdirSync(folder, { recursive: true });
  const files = { json: join(folder, 'report.json'), markdown: join(folder, 'report.md'), html: join(folder, 'report.html') };
  writeFileSync(files.json, renderJson(report));
  writeFileSync(files.markdown, renderMarkdown(report));
  writeFileSync(files.html, renderHtml(report));
  return { folder, ...files };
}
