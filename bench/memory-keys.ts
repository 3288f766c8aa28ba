/**
 * Figure 2: memory for 1,000,000 keys with credits and a monthly refill, created and then
 * restored from a snapshot. One fresh child process (bench/memory-keys-child.mjs) per run:
 * 1. create the keys through engine.keys.createKey (plaintexts dropped, as a client keeps them,
 *    not the engine), collect garbage, read RSS and heap, right away and once the process has
 *    been idle (V8 gives freed and fragmented pages back in the collections it starts when a
 *    program goes idle; the reading repeats every 5 s, from 25 s to at most 60 s, until RSS
 *    stops falling), which is what a simulator between bursts holds;
 * 2. take a snapshot and write it to a file as JSON text in pieces (time, size), drop the
 *    engine (the child checks through a WeakRef that it is gone), collect;
 * 3. restore: read the file into a fresh engine one record at a time, as `keysim serve --restore`
 *    does (readSnapshotFile: 64 KiB at a time into one reused buffer, then restoreChecked) — time; the peak RSS of this phase from the
 *    kernel's high-water mark, reset just before it on Linux; collect, read RSS and heap right
 *    away and once idle, as after creating.
 * A second fresh child restores the same file the same way, a process with no history of its own
 * as `keysim serve --restore` starts (the first child's restore follows the keys, their snapshot
 * and its writing in one process: what a simulator that snapshotted its keys then restores holds).
 * A third fresh child restores the same file into a simulator over HTTP: `POST /_sim/restore`
 * with the file streamed from disk as the body by a client in a process of its own (its 1 MB
 * read buffers are no part of the simulator; KEYSIM_MEMORY_HTTP_CLIENT=inline runs it in the
 * simulator's process, as until 2026-11-27) — time, peak, and RSS once idle.
 *
 * Every reading also gives the heap's committed size and the memory outside the heap
 * (`external`, of which `arrayBuffers`): what RSS holds beyond the live heap is those, the heap's
 * committed but free pages, the C heap's free chunks and node itself (the process before any key).
 *
 * The child runs the compiled engine (dist/, built by `npm run bench`) on plain node, as a
 * `keysim serve` process does: no TypeScript loader, whose ~35 MB would otherwise count. It uses
 * node:crypto's SHA-256, as the server does. It runs with --expose-gc (to collect before each
 * reading) and --max-old-space-size=3072, so that the figures do not depend on the heap limit V8
 * derives from the machine's memory (taking the snapshot holds the state and its plain copy).
 */
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runChild } from './subprocess.js';
import { type SummaryRow, fmtInt, fmtMB, median, textTable, yesNo } from './stats.js';

export const MEMORY_KEYS = 1_000_000;
export const MEMORY_TARGET_BYTES = 400e6;
export const MAX_OLD_SPACE_MB = 3072;

const CHILD = fileURLToPath(new URL('./memory-keys-child.mjs', import.meta.url));
const DIST_ENGINE = fileURLToPath(new URL('../dist/src/engine/index.js', import.meta.url));
const SRC_ENGINE = fileURLToPath(new URL('../src/engine/', import.meta.url));

interface Usage {
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
  arrayBuffers: number;
}

export interface MemoryKeysResult {
  keys: number;
  /** The root key of the snapshot's workspace (the HTTP restore's operator). */
  rootKey: string;
  before: Usage;
  /** Right after the keys were created and garbage collected. */
  createdNow: Usage;
  /** The same once the process has been idle (settledUsage in the child). */
  created: Usage;
  createSeconds: number;
  snapshotSeconds: number;
  snapshotBytes: number;
  textOnly: Usage;
  restoreSeconds: number;
  restorePeakRss: number;
  /** Whether the peak is of the restore alone (Linux) or of the whole process. */
  exactPeak: boolean;
  /** Right after the restore, garbage collected. */
  afterNow: Usage;
  /** The same once the process has been idle. */
  after: Usage;
}

/** A restore from the file in a fresh process (`--file`), or over HTTP into a simulator (`--http`). */
export interface HttpRestoreResult {
  keys: number;
  /** The client ran in the simulator's process (KEYSIM_MEMORY_HTTP_CLIENT=inline). */
  inlineClient?: boolean;
  before: Usage;
  restoreSeconds: number;
  restorePeakRss: number;
  exactPeak: boolean;
  afterNow: Usage;
  after: Usage;
}

/** The child measures dist/: refuse to measure an engine older than the sources. */
function checkBuild(): void {
  let built: number;
  try {
    built = statSync(DIST_ENGINE).mtimeMs;
  } catch {
    throw new Error('the memory benchmark runs the compiled engine: run `npm run build` first (`npm run bench` does)');
  }
  const newest = Math.max(...readdirSync(SRC_ENGINE).map((f) => statSync(`${SRC_ENGINE}${f}`).mtimeMs));
  if (newest > built) throw new Error('dist/ is older than src/engine: run `npm run build` first (`npm run bench` does)');
}

export async function memoryKeysReport(runs = 1): Promise<{ text: string; summary: SummaryRow[] }> {
  checkBuild();
  const results: MemoryKeysResult[] = [];
  const overHttp: HttpRestoreResult[] = [];
  const fresh: HttpRestoreResult[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'keysim-memory-'));
  const file = join(dir, 'snapshot.json');
  const child = { entry: CHILD, plainNode: true, exposeGc: true, nodeArgs: [`--max-old-space-size=${MAX_OLD_SPACE_MB}`], timeoutMs: 900_000 };
  try {
    // One at a time: two at once would share the machine's memory.
    for (let i = 0; i < runs; i++) {
      const result = await runChild<MemoryKeysResult>('', [String(MEMORY_KEYS), file], child);
      results.push(result);
      fresh.push(await runChild<HttpRestoreResult>('', [String(MEMORY_KEYS), file, '--file'], child));
      const inline = process.env.KEYSIM_MEMORY_HTTP_CLIENT === 'inline' ? ['inline'] : [];
      overHttp.push(await runChild<HttpRestoreResult>('', [String(MEMORY_KEYS), file, '--http', result.rootKey, ...inline], child));
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const mh = (f: (r: HttpRestoreResult) => number) => median(overHttp.map(f));
  const httpRss = mh((r) => r.after.rss);
  const mf = (f: (r: HttpRestoreResult) => number) => median(fresh.map(f));
  const freshRss = mf((r) => r.after.rss);
  const m = (f: (r: MemoryKeysResult) => number) => median(results.map(f));
  const perKey = (f: (r: MemoryKeysResult) => number) => `${fmtInt(m(f))} B`;
  const createdRss = m((r) => r.created.rss);
  const restoredRss = m((r) => r.after.rss);
  const target = `≤ ${fmtMB(MEMORY_TARGET_BYTES)}`;
  const nowRss = (f: (r: MemoryKeysResult) => Usage) => `${fmtMB(m((r) => f(r).rss))} / ${fmtMB(m((r) => f(r).heapUsed))}`;
  /** A row of one way to restore: medians over its runs (memory, per key, time, peak, target met). */
  const restoreRow = (label: string, list: ReadonlyArray<HttpRestoreResult | MemoryKeysResult>): string[] => {
    const med = (f: (r: HttpRestoreResult) => number) => median(list.map(f));
    const rss = med((r) => r.after.rss);
    return [
      label,
      fmtMB(rss),
      fmtMB(med((r) => r.after.heapUsed)),
      `${fmtInt(med((r) => (r.after.rss - r.before.rss) / r.keys))} B`,
      `${fmtInt(med((r) => (r.after.heapUsed - r.before.heapUsed) / r.keys))} B`,
      `${med((r) => r.restoreSeconds).toFixed(1)} s`,
      fmtMB(med((r) => r.restorePeakRss)),
      target,
      yesNo(rss <= MEMORY_TARGET_BYTES),
    ];
  };
  const rows = [
    [
      'created',
      fmtMB(createdRss),
      fmtMB(m((r) => r.created.heapUsed)),
      perKey((r) => (r.created.rss - r.before.rss) / r.keys),
      perKey((r) => (r.created.heapUsed - r.before.heapUsed) / r.keys),
      `${m((r) => r.createSeconds).toFixed(1)} s`,
      '',
      target,
      yesNo(createdRss <= MEMORY_TARGET_BYTES),
    ],
    restoreRow('restored (file)', results),
    restoreRow('restored (file, fresh process)', fresh),
    restoreRow('restored (HTTP)', overHttp),
  ];
  const exact = results.every((r) => r.exactPeak) && overHttp.every((r) => r.exactPeak) && fresh.every((r) => r.exactPeak);
  const inlineClient = overHttp.some((r) => r.inlineClient === true);
  const parts = <R>(list: R[], f: (r: R) => Usage) =>
    `heap committed ${fmtMB(median(list.map((r) => f(r).heapTotal)))}, outside the heap ${fmtMB(median(list.map((r) => f(r).external)))} (array buffers ${fmtMB(median(list.map((r) => f(r).arrayBuffers)))})`;
  const text = [
    `2. Memory for ${fmtInt(MEMORY_KEYS)} keys with credits and monthly refill, created and restored from a snapshot (fresh process per run on the compiled engine, --expose-gc and gc before each reading, --max-old-space-size=${MAX_OLD_SPACE_MB}; median of ${results.length} run(s); 1 MB = 10^6 bytes)`,
    '',
    textTable(['state (idle)', 'RSS', 'heap', 'RSS/key', 'heap/key', 'time', 'peak RSS', 'target (RSS)', 'meets target'], rows),
    '',
    `   Right after the garbage collection, before the process went idle (RSS / heap): created ${nowRss((r) => r.createdNow)}, restored ${nowRss((r) => r.afterNow)}.`,
    `   Process before any key: RSS ${fmtMB(m((r) => r.before.rss))}, heap ${fmtMB(m((r) => r.before.heapUsed))}. Snapshot: ${fmtMB(m((r) => r.snapshotBytes))} of JSON written to a file in ${m((r) => r.snapshotSeconds).toFixed(1)} s (engine.snapshot() + the text in pieces).`,
    `   Restore (file) = the file read 64 KiB at a time, each record checked and built as it completes (readSnapshotFile, as keysim serve --restore, + restoreChecked), in the process that created the keys and wrote their snapshot, the first engine dropped (and checked gone) before; fresh process = the same in a new process (as keysim serve --restore starts). Restore (HTTP) = a fresh process running the simulator, the file streamed from disk as the body of POST /_sim/restore by a client ${inlineClient ? 'in the same process' : 'in a process of its own'} (right after the GC: ${fmtMB(mh((r) => r.afterNow.rss))} / ${fmtMB(mh((r) => r.afterNow.heapUsed))}). Peak RSS ${exact ? 'of the restore alone (kernel high-water mark reset before it)' : 'of the whole process (no per-phase peak on this system)'}. Per-key figures are over the process before any key.`,
    `   Beyond the live heap (idle): created ${parts(results, (r) => r.created)}; restored (file) ${parts(results, (r) => r.after)}; restored (file, fresh process) ${parts(fresh, (r) => r.after)}; restored (HTTP) ${parts(overHttp, (r) => r.after)}.`,
  ].join('\n');
  const summary: SummaryRow[] = [
    {
      figure: `Resident memory (RSS), ${fmtInt(MEMORY_KEYS)} keys with credits + monthly refill, created`,
      median: `${fmtMB(createdRss)} (${perKey((r) => (r.created.heapUsed - r.before.heapUsed) / r.keys)} heap/key)`,
      target,
    },
    {
      figure: `… after a snapshot restore of them from a file (restore ${m((r) => r.restoreSeconds).toFixed(1)} s, peak RSS ${fmtMB(m((r) => r.restorePeakRss))})`,
      median: fmtMB(restoredRss),
      target,
    },
    {
      figure: `… after a restore of them from the file in a fresh process, as keysim serve --restore (restore ${mf((r) => r.restoreSeconds).toFixed(1)} s, peak RSS ${fmtMB(mf((r) => r.restorePeakRss))})`,
      median: fmtMB(freshRss),
      target,
    },
    {
      figure: `… after restoring them over HTTP, POST /_sim/restore (restore ${mh((r) => r.restoreSeconds).toFixed(1)} s, peak RSS ${fmtMB(mh((r) => r.restorePeakRss))})`,
      median: fmtMB(httpRss),
      target,
    },
  ];
  return { text, summary };
}
