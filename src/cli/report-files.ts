/**
 * Writes a report's three renderings into its run folder (`<out>/<UTC timestamp>-<scenario>/`).
 * A write that fails (a full disk, a folder gone) is an error with the file and the reason, and
 * leaves no empty or half-written file that could pass for a report.
 */
import { closeSync, fsyncSync, lstatSync, openSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { renderHtml, renderJson, renderMarkdown } from '../report/index.js';
import type { RunReport } from '../report/model.js';

export interface WrittenReport {
  folder: string;
  json: string;
  markdown: string;
  html: string;
}

/** A report file could not be written: the message names it and why. */
export class ReportWriteError extends Error {
  constructor(
    readonly file: string,
    readonly code: string,
  ) {
    const hint =
      code === 'ENOSPC' ? ' (no space left on the device: free some space, or choose another --out)' : code === 'EDQUOT' ? ' (disk quota exceeded)' : '';
    super(`Writing ${file} failed: ${code}${hint}.`);
    this.name = 'ReportWriteError';
  }
}

/** The run folder's name for a run of `scenario` started at `startedAt` (ISO-8601). */
export function reportFolderName(startedAt: string, scenario: string): string {
  const stamp = startedAt.replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
  return `${stamp}-${scenario.replace(/[^A-Za-z0-9_.-]/g, '_')}`;
}

/**
 * Writes `text` to `path` and makes sure it reached the disk (fsync): writeFileSync alone can leave
 * a 0-byte file behind on a full disk. On failure the partial file is removed.
 */
export function writeFileChecked(path: string, text: string): void {
  const data = Buffer.from(text, 'utf8');
  let fd: number | undefined;
  try {
    fd = openSync(path, 'w');
    for (let offset = 0; offset < data.length;) offset += writeSync(fd, data, offset, data.length - offset);
    fsyncSync(fd);
    closeSync(fd);
    fd = undefined;
  } catch (error) {
    if (fd !== undefined) {
      try {
        closeSync(fd);
      } catch {
        // Already failing: the first error is the one to report.
      }
    }
    removePartial(path);
    const code = (error as { code?: unknown }).code;
    throw new ReportWriteError(path, typeof code === 'string' ? code : error instanceof Error ? error.message : String(error));
  }
}

/** Removes what a failed write left at `path`: a file or a link, never what a link points to (a device, say). */
function removePartial(path: string): void {
  try {
    const stat = lstatSync(path);
    if (stat.isFile() || stat.isSymbolicLink()) rmSync(path, { force: true });
  } catch {
    // Nothing there.
  }
}

/** Writes report.json, report.md and report.html into `folder` (which exists). */
export function writeReport(report: RunReport, folder: string): WrittenReport {
  const files = { json: join(folder, 'report.json'), markdown: join(folder, 'report.md'), html: join(folder, 'report.html') };
  writeFileChecked(files.json, renderJson(report));
  writeFileChecked(files.markdown, renderMarkdown(report));
  writeFileChecked(files.html, renderHtml(report));
  return { folder, ...files };
}
