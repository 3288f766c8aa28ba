/**
 * The journal a run saves for `keysim check` (src/load/journal-file.ts): read back whole with how
 * it ended, and — cut short as a killed run leaves it — read as the prefix it holds, never refused.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import type { JournalEntry, JournalStart } from '../../src/http/index.js';
import { JournalFileWriter, openJournalFile } from '../../src/load/history/journal-file.js';

const START: JournalStart = { snapshot: { seed: 1, compat: 'interface' }, startedAtMs: 1_000, operatorRootKeyHash: 'h' };
const entry = (index: number): JournalEntry => ({
  index,
  atMs: 1_000 + index,
  method: 'POST',
  path: '/v2/apis.createApi',
  input: { name: `api-${index}`, pad: 'x'.repeat(200) },
  seq: index,
});

async function written(count: number, end: boolean): Promise<string> {
  const path = join(mkdtempSync(join(tmpdir(), 'keysim-journal-')), 'journal.jsonl.gz');
  const writer = await JournalFileWriter.create(path, START);
  for (let i = 0; i < count; i += 100) await writer.append(Array.from({ length: Math.min(100, count - i) }, (_, k) => entry(i + k)));
  if (end) await writer.close({ overflowed: true, endedBecause: 'a reset' });
  return path;
}

async function readAll(path: string) {
  const file = await openJournalFile(path);
  const entries: JournalEntry[] = [];
  for await (const e of file.entries) entries.push(e);
  return { start: file.start, entries, end: file.end() };
}

describe('the saved journal', () => {
  test('reads back its start, every entry in order and how it ended', async () => {
    const read = await readAll(await written(1_000, true));
    expect(read.start).toEqual(START);
    expect(read.entries.map((e) => e.index)).toEqual(Array.from({ length: 1_000 }, (_, i) => i));
    expect(read.end).toEqual({ overflowed: true, endedBecause: 'a reset' });
  });

  test('cut short (a killed run): the prefix it holds, in order, and no end', async () => {
    const path = await written(1_000, true);
    const bytes = readFileSync(path);
    writeFileSync(path, bytes.subarray(0, Math.floor(bytes.length / 2)));
    const read = await readAll(path);
    expect(read.end).toBeUndefined();
    expect(read.entries.length).toBeGreaterThan(0);
    expect(read.entries.length).toBeLessThan(1_000);
    expect(read.entries.map((e) => e.index)).toEqual(Array.from({ length: read.entries.length }, (_, i) => i));
  });

  test('not a journal: refused with the reason', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'keysim-journal-')), 'journal.jsonl.gz');
    writeFileSync(path, 'not gzip');
    await expect(openJournalFile(path)).rejects.toThrow(/is not a keysim journal/);
  });

  test('the wait for a drain hangs forever when the file stream errors (a full disk): it rejects with the error', async () => {
    // /dev/full opens, and every write to it fails with ENOSPC: a real file stream that errors.
    const writer = await JournalFileWriter.create('/dev/full', START);
    const page = Array.from({ length: 2_000 }, (_, i) => entry(i));
    const appendUntilFailure = async () => {
      for (let i = 0; i < 200; i++) await writer.append(page);
    };
    await expect(appendUntilFailure()).rejects.toThrow(/ENOSPC|no space/i);
    await expect(writer.close({ overflowed: false })).rejects.toThrow(/ENOSPC|no space/i);
  }, 60_000);

  test('a writer destroyed while a write waits for a drain: the write rejects, close ends', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'keysim-journal-')), 'journal.jsonl.gz');
    const writer = await JournalFileWriter.create(path, START);
    const waiting = writer.append(Array.from({ length: 2_000 }, (_, i) => entry(i)));
    writer.destroy(new Error('the disk went away'));
    await expect(waiting).rejects.toThrow(/the disk went away/);
    await expect(writer.close({ overflowed: false })).rejects.toThrow(/the disk went away/);
  });
});
