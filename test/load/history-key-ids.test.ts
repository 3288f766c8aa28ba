/**
 * A segment of a shared set-up never saw the keys' creation: without the set-up's key ids, a
 * verification whose answer never came names no key, and the checkers across segments would miss
 * a possible spend. The set-up's directory is handed on as (digest, id) pairs.
 */
import { join } from 'node:path';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { afterAll, expect, test } from 'vitest';
import { HistoryWriter, KeyDirectory, readHistory } from '../../src/load/history/history.js';

const dir = mkdtempSync(join(tmpdir(), 'keysim-key-ids-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const KEY = 'sk_shared_0123456789abcdef';

async function unansweredVerification(learned: Array<[string, string]> | undefined): Promise<string | undefined> {
  const path = join(dir, `${learned === undefined ? 'without' : 'with'}.jsonl.gz`);
  const writer = await HistoryWriter.create(path);
  if (learned !== undefined) writer.keys.learnDigests(learned);
  writer.recordCall({ op: 'keys.verifyKey', body: { key: KEY }, invokeMs: 1_000, completeMs: 2_000, response: 'unknown' });
  await writer.close();
  const { events } = await readHistory(path);
  return events[0]?.request.keyId;
}

test('an unanswered verification in a segment of a shared set-up names its key when the set-up passed its key ids on', async () => {
  const setUp = new KeyDirectory();
  setUp.observe('keys.createKey', {}, 200, { data: { key: KEY, keyId: 'key_shared' } });
  const pairs = setUp.entries();
  // Digests only: the key itself never leaves the set-up's directory.
  expect(JSON.stringify(pairs)).not.toContain(KEY);
  expect(await unansweredVerification(undefined)).toBeUndefined();
  expect(await unansweredVerification(pairs)).toBe('key_shared');
});
