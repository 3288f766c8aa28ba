/**
 * The history format: a round trip through gzip (what is written is what is read, in completion
 * order, without the key plaintext), a bad line rejected with its line number, a damaged gzip
 * stream, and bounded memory while recording 200 000 events.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, describe, expect, test } from 'vitest';
import {
  HISTORY_FORMAT,
  HISTORY_VERSION,
  type HistoryEvent,
  HistoryFileError,
  HistoryWriter,
  KeyDirectory,
  historyOutcome,
  historyRequest,
  openHistory,
  readHistory,
} from '../../src/load/history/history.js';

const temps: string[] = [];
afterAll(() => {
  for (const dir of temps) rmSync(dir, { recursive: true, force: true });
});

function tempFile(name = 'history.jsonl.gz'): string {
  const dir = mkdtempSync(join(tmpdir(), 'keysim-history-'));
  temps.push(dir);
  return join(dir, name);
}

const T0 = Date.UTC(2027, 0, 15, 12);
const PLAINTEXT = 'sk_3fJ9ZqLmNoPrStUvWxYz12';

function sampleEvents(): HistoryEvent[] {
  return [
    {
      seq: 0,
      op: 'keys.createKey',
      invokeMs: T0,
      completeMs: T0 + 2.5,
      serviceInvokeMs: T0,
      serviceCompleteMs: T0,
      request: { credits: { remaining: 10, refill: { interval: 'monthly', amount: 10, refillDay: 31 } } },
      outcome: { status: 200, keyId: 'key_1' },
    },
    {
      seq: 2,
      op: 'keys.verifyKey',
      invokeMs: T0 + 5,
      completeMs: T0 + 7.25,
      request: { keyId: 'key_1', cost: 2, ratelimits: [{ name: 'burst', cost: 1 }] },
      outcome: {
        status: 200,
        code: 'VALID',
        valid: true,
        keyId: 'key_1',
        credits: 8,
        ratelimits: [{ id: 'rl_1', name: 'burst', limit: 5, duration: 1000, reset: T0 + 1000, remaining: 4, exceeded: false }],
      },
    },
    { seq: 1, op: 'keys.verifyKey', invokeMs: T0 + 4, completeMs: T0 + 30_000, request: { keyId: 'key_1', cost: 1 }, outcome: 'unknown' },
    {
      seq: 3,
      op: 'ratelimit.limit',
      invokeMs: T0 + 8,
      completeMs: T0 + 9,
      request: { namespace: 'ns', identifier: 'user-1', limit: 3, duration: 60_000, cost: 1 },
      outcome: { status: 200, limit: 2, remaining: 1, reset: T0 + 60_000, success: true, overrideId: 'rlor_1' },
    },
    {
      seq: 4,
      op: 'keys.updateCredits',
      invokeMs: T0 + 10,
      completeMs: T0 + 11,
      request: { keyId: 'key_1', operation: 'set', value: null },
      outcome: { status: 200, remaining: null },
    },
    {
      seq: 5,
      op: 'keys.updateKey',
      invokeMs: T0 + 12,
      completeMs: T0 + 13,
      request: { keyId: 'key_9' },
      outcome: { status: 404, error: 'data:key_not_found' },
    },
    {
      seq: 6,
      op: 'ratelimit.multiLimit',
      invokeMs: T0 + 14,
      completeMs: T0 + 15,
      request: { limits: [{ namespace: 'ns', identifier: 'a', limit: 1, duration: 1000 }] },
      outcome: { status: 200, success: false, limits: [{ namespace: 'ns', identifier: 'a', limit: 1, remaining: 0, reset: T0 + 1000, passed: false }] },
    },
  ];
}

describe('history round trip', () => {
  test('events written through gzip read back identical, header first, in the order written', async () => {
    const file = tempFile();
    const writer = await HistoryWriter.create(file, { run: { scenario: 'credits-drain', seed: 7, target: 'simulator' }, wallSkewMs: 250 });
    const events = sampleEvents();
    for (const event of events) writer.record(event);
    await writer.close();
    expect(writer.written).toBe(events.length);

    const raw = readFileSync(file);
    expect([raw[0], raw[1]]).toEqual([0x1f, 0x8b]);
    const lines = gunzipSync(raw).toString('utf8').trimEnd().split('\n');
    expect(lines).toHaveLength(events.length + 1);
    expect(JSON.parse(lines[0] as string)).toMatchObject({ format: HISTORY_FORMAT, version: HISTORY_VERSION, wallSkewMs: 250 });

    const read = await readHistory(file);
    expect(read.header).toMatchObject({
      format: HISTORY_FORMAT,
      version: HISTORY_VERSION,
      run: { scenario: 'credits-drain', seed: 7, target: 'simulator' },
      wallSkewMs: 250,
    });
    expect(read.events).toEqual(events);
  });

  test('recordCall turns requests and answers into events: key ids instead of keys, seq from begin()', async () => {
    const file = tempFile();
    const writer = await HistoryWriter.create(file);
    const createSeq = writer.begin();
    const verifySeq = writer.begin();
    const lostSeq = writer.begin();
    writer.recordCall({
      seq: createSeq,
      op: 'keys.createKey',
      body: { apiId: 'api_1', credits: { remaining: 3 } },
      invokeMs: T0,
      completeMs: T0 + 1,
      response: { status: 200, body: { meta: { requestId: 'req_1' }, data: { keyId: 'key_abc', key: PLAINTEXT } } },
    });
    writer.recordCall({
      seq: lostSeq,
      op: 'keys.verifyKey',
      body: { key: PLAINTEXT, credits: { cost: 2 } },
      invokeMs: T0 + 3,
      completeMs: T0 + 10_003,
      serviceInvokeMs: T0 + 3,
      response: 'unknown',
    });
    writer.recordCall({
      seq: verifySeq,
      op: 'keys.verifyKey',
      body: { key: PLAINTEXT, credits: { cost: 1 }, tags: ['secret-tag'] },
      invokeMs: T0 + 2,
      completeMs: T0 + 4,
      response: {
        status: 200,
        body: { meta: { requestId: 'req_2' }, data: { valid: true, code: 'VALID', keyId: 'key_abc', credits: 2, meta: { note: 'x' } } },
      },
    });
    await writer.close();

    const text = gunzipSync(readFileSync(file)).toString('utf8');
    expect(text).not.toContain(PLAINTEXT);
    expect(text).not.toContain('secret-tag');
    const { events } = await readHistory(file);
    expect(events.map((e) => e.seq)).toEqual([0, 2, 1]);
    expect(events[0]).toMatchObject({ op: 'keys.createKey', request: { credits: { remaining: 3 } }, outcome: { status: 200, keyId: 'key_abc' } });
    expect(events[1]).toMatchObject({ op: 'keys.verifyKey', request: { keyId: 'key_abc', cost: 2 }, outcome: 'unknown', serviceInvokeMs: T0 + 3 });
    expect(events[2]).toEqual({
      seq: 1,
      op: 'keys.verifyKey',
      invokeMs: T0 + 2,
      completeMs: T0 + 4,
      request: { keyId: 'key_abc', cost: 1 },
      outcome: { status: 200, code: 'VALID', valid: true, keyId: 'key_abc', credits: 2 },
    });
  });

  test('the request and answer helpers keep only whitelisted fields', () => {
    const keys = new KeyDirectory();
    keys.learn(PLAINTEXT, 'key_abc');
    expect(historyRequest('keys.verifyKey', { key: PLAINTEXT, credits: { cost: 0 }, permissions: 'a' }, (k) => keys.keyIdOf(k))).toEqual({
      keyId: 'key_abc',
      cost: 0,
    });
    expect(historyRequest('keys.verifyKey', { key: 'unknown-key' }, (k) => keys.keyIdOf(k))).toEqual({});
    expect(historyRequest('keys.updateKey', { keyId: 'key_1', credits: null, name: 'n' })).toEqual({ keyId: 'key_1', credits: null });
    expect(historyRequest('keys.updateKey', { keyId: 'key_1', credits: { refill: null } })).toEqual({ keyId: 'key_1', credits: { refill: null } });
    expect(historyRequest('ratelimit.listOverrides', { namespaceName: 'ns' })).toEqual({ namespace: 'ns' });
    expect(historyOutcome('keys.updateKey', 404, { error: { type: 'https://errors.example/service/data/key_not_found', detail: 'x' } })).toEqual({
      status: 404,
      error: 'data:key_not_found',
    });
    expect(historyOutcome('keys.getKey', 200, { data: { keyId: 'key_1', start: 'abcd', credits: { remaining: 4 } } })).toEqual({
      status: 200,
      keyId: 'key_1',
      remaining: 4,
    });
    expect(historyOutcome('keys.getKey', 200, { data: { keyId: 'key_1', start: 'abcd' } })).toEqual({ status: 200, keyId: 'key_1', remaining: null });
  });

  test('a record that is not a valid event is refused before anything is written', async () => {
    const writer = await HistoryWriter.create(tempFile());
    const bad = { ...sampleEvents()[0], completeMs: T0 - 1 } as HistoryEvent;
    expect(() => writer.record(bad)).toThrow(/completeMs .* is before invokeMs/);
    const withKey = { ...sampleEvents()[1], request: { key: PLAINTEXT } } as unknown as HistoryEvent;
    expect(() => writer.record(withKey)).toThrow(/never holds key plaintext/);
    await writer.close();
    expect(writer.written).toBe(0);
  });

  test('plain (not gzipped) JSON lines are read too', async () => {
    const file = tempFile('history.jsonl');
    const events = sampleEvents();
    writeFileSync(file, [JSON.stringify({ format: HISTORY_FORMAT, version: HISTORY_VERSION }), ...events.map((e) => JSON.stringify(e)), ''].join('\n'));
    expect((await readHistory(file)).events).toEqual(events);
  });
});

describe('bad files', () => {
  function gzLines(lines: string[]): string {
    const file = tempFile();
    writeFileSync(file, gzipSync(`${lines.join('\n')}\n`));
    return file;
  }
  const header = JSON.stringify({ format: HISTORY_FORMAT, version: HISTORY_VERSION });
  const good = sampleEvents().map((e) => JSON.stringify(e));

  test('a line that is not JSON is reported with its line number', async () => {
    const file = gzLines([header, good[0] as string, good[1] as string, '{"seq": 3, "op": ', good[2] as string]);
    const error = await readHistory(file).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HistoryFileError);
    expect((error as HistoryFileError).line).toBe(4);
    expect((error as Error).message).toMatch(/line 4: not valid JSON/);
  });

  test('a line that is JSON but not an event is reported with its line number and the reason', async () => {
    const file = gzLines([
      header,
      good[0] as string,
      JSON.stringify({ seq: 9, op: 'keys.explode', invokeMs: 1, completeMs: 2, request: {}, outcome: 'unknown' }),
    ]);
    const error = (await readHistory(file).catch((e: unknown) => e)) as HistoryFileError;
    expect(error.line).toBe(3);
    expect(error.message).toMatch(/line 3: op must be one of the v2 operations, got "keys.explode"/);
  });

  test('events stream until the bad line: the good ones before it are delivered first', async () => {
    const file = gzLines([header, good[0] as string, good[1] as string, JSON.stringify({ ...sampleEvents()[2], outcome: { status: 'ok' } })]);
    const opened = await openHistory(file);
    const seen: number[] = [];
    const error = await (async () => {
      for await (const event of opened.events) seen.push(event.seq);
    })().catch((e: unknown) => e);
    expect(seen).toEqual([0, 2]);
    expect((error as HistoryFileError).line).toBe(4);
    expect((error as Error).message).toMatch(/outcome.status must be an HTTP status/);
  });

  test('a missing header, a missing file, and a gzip stream cut short are errors that say so', async () => {
    const noHeader = gzLines([good[0] as string]);
    await expect(readHistory(noHeader)).rejects.toThrow(/line 1: the first line must be the header/);
    await expect(readHistory(join(tmpdir(), 'keysim-no-such-history.jsonl.gz'))).rejects.toThrow(/no such file/);

    const full = gzipSync(Buffer.from([header, ...good, ''].join('\n').repeat(1)));
    const cut = tempFile();
    writeFileSync(cut, full.subarray(0, full.length - 12));
    const error = (await readHistory(cut).catch((e: unknown) => e)) as HistoryFileError;
    expect(error).toBeInstanceOf(HistoryFileError);
    expect(error.message).toMatch(/gzip data is damaged or cut short/);
  });
});

describe('bounded memory', () => {
  /** A real GC, so that heap figures are not noise (the flag can be set at run time). */
  function collectGarbage(): void {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    gc();
    gc();
  }

  test('recording 200 000 events keeps neither the events nor their lines', async () => {
    const file = tempFile();
    const writer = await HistoryWriter.create(file);
    const count = 200_000;
    collectGarbage();
    const heapBefore = process.memoryUsage().heapUsed;
    let maxBuffered = 0;
    for (let i = 0; i < count; i++) {
      // Unique, incompressible-ish identifiers: a writer that kept its lines would hold ~40 MB.
      const event: HistoryEvent = {
        seq: i,
        op: 'ratelimit.limit',
        invokeMs: T0 + i,
        completeMs: T0 + i + 0.5,
        request: { namespace: 'ns', identifier: `user-${i.toString(36)}-${(i * 2_654_435_761) % 1_000_003}`, limit: 100, duration: 60_000 },
        outcome: { status: 200, limit: 100, remaining: i % 100, reset: T0 + 60_000, success: true },
      };
      if (!writer.record(event)) await writer.drain();
      maxBuffered = Math.max(maxBuffered, writer.bufferedBytes);
    }
    collectGarbage();
    const heapGrowth = process.memoryUsage().heapUsed - heapBefore;
    await writer.close();

    expect(writer.written).toBe(count);
    // The chunk being filled plus the streams' buffers: a few tens of KiB, whatever the count.
    expect(maxBuffered).toBeLessThan(512 * 1024);
    expect(writer.maxBufferedBytes).toBeLessThan(512 * 1024);
    expect(heapGrowth).toBeLessThan(16 * 1024 * 1024);

    // And everything arrived, in order.
    let n = 0;
    const opened = await openHistory(file);
    for await (const event of opened.events) {
      if (event.seq !== n) throw new Error(`expected seq ${n}, got ${event.seq}`);
      n++;
    }
    expect(n).toBe(count);
  });
});
