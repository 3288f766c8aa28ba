/**
 * `--out` is checked before any load: a folder (created if missing), writable, with room for the
 * reports and, with `--history`, the history at the planned rate. Each run gets its own folder at
 * its start, so that a history written during the run is findable even if the run is killed.
 *
 * Folders are created one level at a time: Node's recursive mkdir loops forever (and deaf to
 * Ctrl-C) under a path such as /proc/x, where every level but the last exists.
 */
import { constants, accessSync, mkdirSync, statSync, statfsSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { UsageError } from './exit-codes.js';
import type { LoadSettings } from '../load/scenario/index.js';
import { planStages, stagedCount } from '../load/plan/index.js';

/**
 * Bytes one request takes in a history (gzip level 1), with margin: measured runs of `mixed`,
 * `credits-drain` and `verify-hot-keys` wrote 20–32 bytes per operation; long metadata writes more.
 */
export const HISTORY_BYTES_PER_REQUEST = 120;
/** Room kept for the three report files of one run, bytes. */
export const REPORT_BYTES = 16 * 1024 * 1024;

/**
 * Requests a closed-model run is assumed to send per second and connection, for the space check
 * (it has no planned rate): about what one connection gets from the simulator on loopback.
 */
const CLOSED_MODEL_REQUESTS_PER_CONNECTION_S = 2_000;

/** Bytes the runs need in --out: the reports, and with --history the history at the planned rate. */
export function bytesNeeded(settings: readonly LoadSettings[], history: boolean): number {
  let bytes = 0;
  for (const s of settings) {
    const seconds = (s.durationMs + s.warmupMs) / 1000;
    const staged = s.stages === undefined ? undefined : stagedCount(planStages(s.startRate ?? 0, s.stages)) + (s.rate * s.warmupMs) / 1000;
    const requests = s.model === 'open' ? (staged ?? s.rate * seconds) : s.connections * CLOSED_MODEL_REQUESTS_PER_CONNECTION_S * seconds;
    bytes += REPORT_BYTES + (history ? Math.ceil(requests) * HISTORY_BYTES_PER_REQUEST : 0);
  }
  return bytes;
}

function codeOf(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' ? code : error instanceof Error ? error.message : String(error);
}

function mib(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(bytes < 10 * 1024 * 1024 ? 1 : 0)} MiB`;
}

/**
 * Makes sure `out` is a folder this process can write into, creating the missing levels, and that
 * its file system has `needBytes` free. Returns its absolute path; throws a UsageError naming what
 * is wrong otherwise.
 */
export function prepareOutFolder(out: string, needBytes: number): string {
  const folder = resolve(out);
  const missing: string[] = [];
  for (let p = folder; ;) {
    let isDirectory: boolean;
    try {
      isDirectory = statSync(p).isDirectory();
    } catch (error) {
      const code = codeOf(error);
      // ENOTDIR: a level above is a file; walking up finds it and says so.
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw new UsageError(`--out ${out}: ${p} cannot be used (${code}). Name a folder you can write to.`);
      missing.unshift(p);
      const parent = dirname(p);
      if (parent === p) break;
      p = parent;
      continue;
    }
    if (!isDirectory) {
      throw new UsageError(
        p === folder
          ? `--out ${out} is a file, not a folder: name a folder (it is created if missing), e.g. --out reports.`
          : `--out ${out}: ${p} is a file, so no folder can be created under it. Name a folder, e.g. --out reports.`,
      );
    }
    break;
  }
  for (const level of missing) {
    try {
      mkdirSync(level);
    } catch (error) {
      if (codeOf(error) === 'EEXIST' && statSync(level).isDirectory()) continue;
      throw new UsageError(`--out ${out}: the folder ${level} cannot be created (${codeOf(error)}). Name a folder you can write to.`);
    }
  }
  // access() says yes to root everywhere; a real file says whether writing works (read-only mounts, /proc).
  const probe = join(folder, `.keysim-write-test-${process.pid}`);
  try {
    accessSync(folder, constants.W_OK);
    writeFileSync(probe, 'keysim');
    unlinkSync(probe);
  } catch (error) {
    throw new UsageError(`--out ${out}: cannot write into ${folder} (${codeOf(error)}). Name a folder you can write to.`);
  }
  let freeBytes: number | undefined;
  try {
    const fs = statfsSync(folder);
    freeBytes = fs.bavail * fs.bsize;
  } catch {
    // No statfs for this file system: the write errors of the run itself will tell.
  }
  if (freeBytes !== undefined && freeBytes < needBytes) {
    throw new UsageError(
      `--out ${out}: ${mib(freeBytes)} free in ${folder}, but this run needs about ${mib(needBytes)} (reports, and with --history about ${HISTORY_BYTES_PER_REQUEST} bytes per planned request). Free some space, choose another --out, or shorten the run.`,
    );
  }
  return folder;
}

/**
 * Creates the folder of one run, `<out>/<name>`, exclusively: a second run started in the same
 * second gets `<name>-2`, and never writes over the first one's files.
 */
export function createRunFolder(outFolder: string, name: string): string {
  for (let n = 1; ; n++) {
    const folder = join(outFolder, n === 1 ? name : `${name}-${n}`);
    try {
      mkdirSync(folder);
      return folder;
    } catch (error) {
      if (codeOf(error) !== 'EEXIST' || n >= 1000) throw new UsageError(`The run folder ${folder} cannot be created (${codeOf(error)}).`);
    }
  }
}
