/**
 * The region that answered: keysim's own HTTP/1.1 parser reads `x-keysim-region` (the production
 * profile's header, docs/consistency.md), and a load call recorded with it carries `region` in its
 * history event; an answer without the header leaves it out.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { type ParsedResponse, ResponseParser } from '../../../src/load/http1/response-parser.js';
import { HistoryWriter, readHistory } from '../../../src/load/history/history.js';

function parse(text: string): ParsedResponse[] {
  const seen: ParsedResponse[] = [];
  const parser = new ResponseParser((r) => {
    seen.push({ ...r, body: Buffer.from(r.body) });
    return true;
  });
  parser.push(Buffer.from(text));
  return seen;
}

test('x-keysim-region is read from an answer, in any case; an answer without it has none', () => {
  const [named, unnamed] = parse('HTTP/1.1 200 OK\r\nX-Keysim-Region: 2\r\ncontent-length: 2\r\n\r\n{}' + 'HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}');
  expect(named?.region).toBe('2');
  expect(unnamed?.region).toBeUndefined();
});

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

test('a call recorded with its region keeps it in the history; one without reads back without', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'keysim-region-'));
  dirs.push(dir);
  const path = join(dir, 'history.jsonl.gz');
  const writer = await HistoryWriter.create(path, {});
  const base = {
    op: 'keys.getKey' as const,
    body: { keyId: 'key_1' },
    invokeMs: 1,
    completeMs: 2,
    response: { status: 200, body: { data: { keyId: 'key_1' } } },
  };
  writer.recordCall({ ...base, region: '1' });
  writer.recordCall(base);
  await writer.close();
  const { events } = await readHistory(path);
  expect(events.map((e) => e.region)).toEqual(['1', undefined]);
});
