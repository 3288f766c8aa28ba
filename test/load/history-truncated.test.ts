/**
 * A history cut short (the run was killed while writing it) is read up to its last complete line
 * when asked to, says that it was truncated, and `checkablePrefix` keeps only the operations that
 * no lost operation can have affected. Without `allowTruncated` it is still an error.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, test } from 'vitest';
import { type HistoryEvent, HistoryFileError, HistoryWriter, checkablePrefix, readHistory } from '../../src/load/history/history.js';
import { assertProperty } from '../helpers/property.js';

const temps: string[] = [];
afterAll(() => {
  for (const dir of temps) rmSync(dir, { recursive: true, force: true });
});

function tempFile(name = 'history.jsonl.gz'): string {
  const dir = mkdtempSync(join(tmpdir(), 'keysim-history-cut-'));
  temps.push(dir);
  return join(dir, name);
}

const T0 = Date.UTC(2027, 0, 15, 12);

function event(seq: number, invokeMs: number, completeMs: number): HistoryEvent {
  return {
    seq,
    op: 'keys.verifyKey',
    invokeMs,
    completeMs,
    request: { keyId: 'key_1', cost: 1 },
    outcome: { status: 200, code: 'VALID', valid: true, keyId: 'key_1', credits: 5 },
  };
}

describe('reading a history cut short', () => {
  test('every cut of the file yields a prefix of the events, in order, and says it was truncated', async () => {
    const path = tempFile();
    const writer = await HistoryWriter.create(path, { startedAt: new Date(T0).toISOString() });
    const events = Array.from({ length: 3_000 }, (_, i) => event(i, T0 + i, T0 + i + 0.5));
    for (const e of events) writer.record(e);
    await writer.close();
    const full = readFileSync(path);
    const complete = await readHistory(path, { allowTruncated: true });
    expect(complete.truncated).toBe(false);
    expect(complete.events).toHaveLength(events.length);

    const cut = tempFile();
    let sawSome = false;
    for (const fraction of [0.2, 0.5, 0.8, 0.95]) {
      writeFileSync(cut, full.subarray(0, Math.floor(full.length * fraction)));
      const read = await readHistory(cut, { allowTruncated: true });
      expect(read.truncated).toBe(true);
      expect(read.events).toEqual(events.slice(0, read.events.length));
      if (read.events.length > 0) sawSome = true;
      // Without allowTruncated, still an error that says so.
      const error = await readHistory(cut).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(HistoryFileError);
    }
    expect(sawSome).toBe(true);
  });

  test('a plain JSON-lines history whose last line is half written: the complete lines, truncated', async () => {
    const path = tempFile('history.jsonl');
    const lines = [
      JSON.stringify({ format: 'keysim-history', version: 1 }),
      JSON.stringify(event(0, T0, T0 + 1)),
      JSON.stringify(event(1, T0 + 2, T0 + 3)).slice(0, 30),
    ];
    writeFileSync(path, lines.join('\n'));
    const read = await readHistory(path, { allowTruncated: true });
    expect(read.truncated).toBe(true);
    expect(read.events.map((e) => e.seq)).toEqual([0]);
  });

  test('the writer flushes its header at once: a run killed before any event leaves a readable file', async () => {
    const path = tempFile();
    const writer = await HistoryWriter.create(path, { run: { scenario: 'x', seed: 1, target: 'simulator' } });
    // Not closed: the file is what a killed process would leave, once the flush reached it.
    for (let i = 0; i < 200 && readFileSync(path).length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    const read = await readHistory(path, { allowTruncated: true });
    expect(read.header.run).toEqual({ scenario: 'x', seed: 1, target: 'simulator' });
    expect(read.events).toEqual([]);
    expect(read.truncated).toBe(true);
    await writer.close();
  });
});

describe('checkablePrefix', () => {
  test('keeps what completed before the first lost operation could have been sent', () => {
    // seq 2 is lost; seq 1 was sent at T0+10, so only what completed before T0+10 is judged.
    const events = [event(0, T0, T0 + 5), event(1, T0 + 10, T0 + 20), event(3, T0 + 12, T0 + 14), event(4, T0 + 30, T0 + 31)];
    const prefix = checkablePrefix(events);
    expect(prefix.events.map((e) => e.seq)).toEqual([0]);
    expect(prefix.leftOut).toBe(3);
    expect(prefix.untilMs).toBe(T0 + 10);
  });

  test('nothing to judge when the first operation is lost', () => {
    expect(checkablePrefix([event(1, T0, T0 + 1)])).toEqual({ events: [], leftOut: 1, untilMs: undefined });
  });

  test('property: whatever is lost, nothing kept could have seen a lost operation, and everything kept completed before every lost send', () => {
    assertProperty(
      fc.property(
        fc.array(fc.record({ gapMs: fc.integer({ min: 0, max: 50 }), tookMs: fc.integer({ min: 0, max: 200 }), lost: fc.boolean() }), {
          minLength: 1,
          maxLength: 60,
        }),
        (specs) => {
          let t = T0;
          const all = specs.map((s, seq) => {
            t += s.gapMs;
            return { e: event(seq, t, t + s.tookMs), lost: s.lost };
          });
          const lost = all.filter((x) => x.lost).map((x) => x.e);
          // The file is in completion order; a truncation loses the lost ones (and keeps the order).
          const kept = all.filter((x) => !x.lost).map((x) => x.e);
          const prefix = checkablePrefix(kept);
          for (const e of prefix.events) for (const l of lost) expect(e.completeMs).toBeLessThan(l.invokeMs);
          expect(prefix.events.length + prefix.leftOut).toBe(kept.length);
        },
      ),
    );
  });
});
