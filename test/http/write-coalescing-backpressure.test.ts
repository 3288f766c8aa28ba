/**
 * Write coalescing keeps the stream's back-pressure (src/http/write-coalescing.ts): for a client
 * that does not read, what the server holds stays bounded — a large streamed answer (the
 * snapshot) still waits for the client one piece at a time, and a client that pipelines many
 * small requests without reading makes node:http stop parsing — and everything arrives whole once
 * the client reads. Measured through the accepted sockets' own counters (test/helpers/coalescing.ts)
 * and the module's high-water mark, never by time or RSS.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { keptHighWater } from '../../src/http/write-coalescing.js';
import { type RawAnswer, parseAnswers, rawPost, rawRequest } from '../helpers/raw-http.js';
import { type Fixture, connectWatched, fixture, watchAcceptedSockets } from '../helpers/coalescing.js';

watchAcceptedSockets();

describe('a client that does not read', () => {
  let f: Fixture;
  beforeAll(async () => {
    f = await fixture();
  });
  afterAll(() => f.sim.close());

  test('a large answer to a client that does not read: what the module keeps stays small, the stream keeps its back-pressure, and the answer arrives whole', async () => {
    const big = await fixture({}, 0);
    try {
      const api = big.sim.engine.apis.createApi(big.sim.rootKey, { name: 'big' });
      if (!api.ok) throw new Error(api.error.detail);
      // About 8 MB of snapshot: more than loopback's buffers take from a client that does not read.
      for (let i = 0; i < 8_000; i++) {
        const created = big.sim.engine.keys.createKey(big.sim.rootKey, { apiId: api.value.apiId, meta: { note: 'x'.repeat(900), i } });
        if (!created.ok) throw new Error(created.error.detail);
      }
      const { client, side } = await connectWatched(big.sim.url);
      client.pause();
      keptHighWater.bytes = 0;
      // Small answers before and after the large one: kept around it while it streams.
      const health = rawRequest('GET', '/_sim/health');
      client.write(Buffer.concat([health, health, rawPost('/_sim/snapshot', {}, big.sim.rootKey), health, health]));
      let mostPending = 0;
      // While the client does not read: what the server side holds for it (stream buffer + handle queue).
      for (let i = 0; i < 40; i++) {
        await new Promise((r) => setTimeout(r, 10));
        const queued = (side.socket as unknown as { _handle: { writeQueueSize: number } | null })._handle?.writeQueueSize ?? 0;
        mostPending = Math.max(mostPending, side.socket.writableLength + queued);
      }
      const chunks: Buffer[] = [];
      const closed = new Promise<void>((resolve) => client.on('end', resolve));
      client.on('data', (d: Buffer) => {
        chunks.push(d);
        if (parseAnswers(Buffer.concat(chunks)).answers.length === 5) client.end();
      });
      client.resume();
      await closed;
      const answers = parseAnswers(Buffer.concat(chunks)).answers;
      expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
      const snapshot = (JSON.parse((answers[2] as RawAnswer).body.toString('utf8')) as { data: { keys: unknown[] } }).data;
      expect(answers[2]?.body.length).toBeGreaterThan(7_000_000);
      // Compared as text: a deep comparison of 8,000 records is slow.
      expect(JSON.stringify(snapshot) === JSON.stringify(big.sim.engine.snapshot())).toBe(true);
      // The module kept something (the small answers) and never more than its bound (64 KiB)...
      expect(keptHighWater.bytes).toBeGreaterThan(0);
      expect(keptHighWater.bytes).toBeLessThanOrEqual(64 * 1024);
      // ...and the answer was not handed over whole: the stream waited for the client (one ~1 MB
      // piece of json-stream.ts at a time, plus what is kept).
      expect(mostPending).toBeLessThan(4 * 1024 * 1024);
    } finally {
      await big.sim.close();
    }
  });

  test('a client that pipelines many requests and does not read: what the server holds for it stays bounded', async () => {
    const { client, side } = await connectWatched(f.sim.url);
    client.pause();
    client.on('error', () => {});
    // 40,000 answers of about 250 bytes, some 10 MB: more than loopback buffers for a client that
    // does not read. Sent 100 at a time, a timer apart, so that each turn's answers stay under what
    // one connection may keep: only the writes seen to wait make node:http stop parsing.
    const batch = Buffer.concat(Array.from({ length: 100 }, () => rawRequest('GET', '/_sim/health')));
    let mostPending = 0;
    for (let i = 0; i < 400; i++) {
      client.write(batch);
      await new Promise((r) => setTimeout(r, 1));
      const queued = (side.socket as unknown as { _handle: { writeQueueSize: number } | null })._handle?.writeQueueSize ?? 0;
      mostPending = Math.max(mostPending, side.socket.writableLength + queued);
    }
    client.destroy();
    expect(mostPending).toBeLessThan(1024 * 1024);
  });
});
