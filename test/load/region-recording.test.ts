/**
 * The region that answered reaches the history through the set-up client too: a stub service on
 * 127.0.0.1 names its region in `x-keysim-region`, and the recording ServiceApi's events carry it;
 * an answer without the header records none.
 */
import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { HistoryWriter, readHistory } from '../../src/load/history/history.js';
import { recordingServiceApi } from '../../src/load/history/history-recording.js';
import { httpJsonClient } from '../../src/load/target/service-api.js';

let server: Server;
let url: string;
const dir = mkdtempSync(join(tmpdir(), 'keysim-region-rec-'));

beforeAll(async () => {
  let n = 0;
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      // The first answer names region 2, the second none.
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (n++ === 0) headers['x-keysim-region'] = '2';
      res.writeHead(200, headers).end(JSON.stringify({ meta: { requestId: 'req_1' }, data: { keyId: 'key_1', remaining: 5 } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  url = `http://127.0.0.1:${address.port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  rmSync(dir, { recursive: true, force: true });
});

test('a call answered with x-keysim-region records its region; one answered without records none', async () => {
  const path = join(dir, 'history.jsonl.gz');
  const writer = await HistoryWriter.create(path, {});
  const client = httpJsonClient({ url, rootKey: 'root_test' }, 5_000);
  const api = recordingServiceApi(client, writer);
  const first = await api.call('keys.getKey', { keyId: 'key_1' });
  await api.call('keys.getKey', { keyId: 'key_1' });
  await client.close();
  await writer.close();
  expect(first.region).toBe('2');
  const { events } = await readHistory(path);
  expect(events.map((e) => e.region)).toEqual(['2', undefined]);
});
