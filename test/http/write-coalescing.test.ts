/**
 * Write coalescing (src/http/write-coalescing.ts, docs/benchmarks.md#http-simulator) over real
 * sockets: a batch of pipelined answers reaches the kernel in one write instead of one each, and
 * nothing an answer's writer was told is written is lost or reordered — on a refused operator
 * call, a 413, a client that resets, a write that throws, a close, and behind HTTP worker
 * processes. Writes are counted at the TCP handle (test/helpers/coalescing.ts), never timed; what
 * is held for a client that does not read is in write-coalescing-backpressure.test.ts.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type RawAnswer, exchange, parseAnswers, rawPost, rawRequest } from '../helpers/raw-http.js';
import {
  type Accepted,
  type Fixture,
  connectWatched,
  expectVerifications,
  fixture,
  json,
  startsAnswer,
  verify,
  watchAcceptedSockets,
} from '../helpers/coalescing.js';

watchAcceptedSockets();

/** Sends `requests` in one write on a connection already warmed up; returns the answers and the handle writes they took. */
async function pipelined(f: Fixture, requests: Buffer[], expected: number): Promise<{ answers: RawAnswer[]; handleWrites: number }> {
  const { client, side } = await connectWatched(f.sim.url);
  let received = Buffer.alloc(0);
  let wanted = 1;
  let notify: () => void = () => {};
  client.on('data', (data: Buffer) => {
    received = Buffer.concat([received, data]);
    if (parseAnswers(received).answers.length >= wanted) notify();
  });
  const answersOf = (n: number) =>
    new Promise<void>((resolve, reject) => {
      wanted = n;
      notify = resolve;
      client.once('close', () => reject(new Error(`connection closed after ${parseAnswers(received).answers.length} answers`)));
      if (parseAnswers(received).answers.length >= n) resolve();
    });
  // A first exchange, so that the server side exists (and is counted from zero) before the batch.
  client.write(rawRequest('GET', '/_sim/health'));
  await answersOf(1);
  const before = side.handleWrites;
  client.write(Buffer.concat(requests));
  await answersOf(1 + expected);
  client.destroy();
  return { answers: parseAnswers(received).answers.slice(1), handleWrites: side.handleWrites - before };
}

describe('one writev per pipelined answer', () => {
  test('ten pipelined verifications sent in one write are answered in at most two writes (ten without coalescing), whole and in order', async () => {
    const counts: Record<string, number> = {};
    for (const coalesceWrites of [true, false]) {
      const f = await fixture({ coalesceWrites });
      try {
        const { answers, handleWrites } = await pipelined(
          f,
          f.keys.map((k) => verify(k.key, f.sim.rootKey)),
          10,
        );
        expectVerifications(answers, f.keys);
        counts[String(coalesceWrites)] = handleWrites;
      } finally {
        await f.sim.close();
      }
    }
    expect(counts.true).toBeGreaterThanOrEqual(1);
    expect(counts.true).toBeLessThanOrEqual(2);
    expect(counts.false).toBe(10);
  });
});

describe('edge cases', () => {
  let f: Fixture;
  beforeAll(async () => {
    f = await fixture({ maxBodyBytes: 2048 });
  });
  afterAll(() => f.sim.close());

  test('a refused operator call among pipelined answers: every answer before it and its own arrive whole before the close', async () => {
    const [a, b, c] = f.keys;
    if (a === undefined || b === undefined || c === undefined) throw new Error('keys');
    const out = await exchange(
      f.sim.url,
      [
        verify(a.key, f.sim.rootKey),
        verify(b.key, f.sim.rootKey),
        rawPost('/_sim/clock.advance', { ms: 1000 }, 'not-the-operator'),
        verify(c.key, f.sim.rootKey),
      ],
      4,
    );
    expect(out.closedByServer).toBe(true);
    expect(out.answers).toHaveLength(3);
    expectVerifications(out.answers.slice(0, 2), [a, b]);
    const refused = out.answers[2] as RawAnswer;
    expect(refused.status).toBe(401);
    expect(refused.headers.connection).toBe('close');
    expect((json(refused) as { error: { status: number } }).error.status).toBe(401);
    // Nothing after the refusal, and no stray bytes.
    expect(parseAnswers(out.bytes).rest.length).toBe(0);
  });

  test('a body over maxBodyBytes among pipelined answers: the 413 arrives whole and the connection goes on', async () => {
    const [a, b] = f.keys;
    if (a === undefined || b === undefined) throw new Error('keys');
    const big = rawPost('/v2/keys.verifyKey', JSON.stringify({ key: a.key, padding: 'x'.repeat(8000) }), f.sim.rootKey);
    const out = await exchange(f.sim.url, [Buffer.concat([verify(a.key, f.sim.rootKey), big, verify(b.key, f.sim.rootKey)])], 3);
    expect(out.answers.map((x) => x.status)).toEqual([200, 413, 200]);
    expect((json(out.answers[1]) as { error: { status: number } }).error.status).toBe(413);
    expectVerifications([out.answers[0] as RawAnswer, out.answers[2] as RawAnswer], [a, b]);
  });

  test('a body past the discard bound: the 413 arrives whole, then the server ends the connection', async () => {
    const [a] = f.keys;
    if (a === undefined) throw new Error('keys');
    // Over body.ts's DISCARD_MAX_BYTES (64 MiB): the server stops reading, answers, then half-closes.
    const head = rawRequest('POST', '/v2/keys.verifyKey', {
      'content-type': 'application/json',
      authorization: `Bearer ${f.sim.rootKey}`,
      'content-length': String(80 * 1024 * 1024),
    });
    const mib = Buffer.alloc(1024 * 1024, 32);
    // Three answers wanted: the exchange waits for the server's end of the connection.
    const out = await exchange(f.sim.url, [Buffer.concat([verify(a.key, f.sim.rootKey), head]), ...Array.from({ length: 70 }, () => mib)], 3);
    expect(out.answers.map((x) => x.status)).toEqual([200, 413]);
    expect((json(out.answers[1]) as { error: { status: number } }).error.status).toBe(413);
    expect(out.closedByServer).toBe(true);
  });

  test('clients that reset with answers kept: no uncaught error, and the server goes on serving', async () => {
    const logged: string[] = [];
    const own = await fixture({ log: (line) => logged.push(line) });
    try {
      const batch = Buffer.concat(own.keys.map((k) => verify(k.key, own.sim.rootKey)));
      const sides: Accepted[] = [];
      for (let round = 0; round < 20; round++) {
        const { client, side } = await connectWatched(own.sim.url);
        sides.push(side);
        const closed = new Promise<void>((resolve) => client.on('close', () => resolve()));
        client.on('error', () => {});
        // The batch and, right behind it, a reset (RST), both sent before the server's next read.
        client.write(batch, () => client.resetAndDestroy());
        if (round % 2 === 1) client.resetAndDestroy();
        await closed;
      }
      // The reset reached the server before the turn's kept answers did: their one write failed
      // (this process sends both before the server's next read), and destroyed the connection.
      expect(sides.some((side) => side.errors.includes('write'))).toBe(true);

      // The server side destroyed with a read error while ten answers are kept (as node:net does
      // on ECONNRESET): what was kept still goes to the kernel first, the client gets it whole.
      const { client, side } = await connectWatched(own.sim.url);
      const chunks: Buffer[] = [];
      client.on('data', (d: Buffer) => chunks.push(d));
      client.on('error', () => {});
      const closed = new Promise<void>((resolve) => client.on('close', () => resolve()));
      let written = 0;
      side.onWrite = (chunksWritten) => {
        for (const chunk of chunksWritten) if (startsAnswer(chunk)) written++;
        if (written === 10) side.socket.destroy(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET', syscall: 'read' }));
      };
      client.write(batch);
      await closed;
      expect(written).toBe(10);
      expectVerifications(parseAnswers(Buffer.concat(chunks)).answers, own.keys);

      const out = await exchange(own.sim.url, [batch], 10);
      expectVerifications(out.answers, own.keys);
      expect(logged).toEqual([]);
    } finally {
      await own.sim.close();
    }
  });

  test('a kept batch whose write throws ends its own connection only: no uncaught error, and the other connections due in the same turn get their answers', async () => {
    const a = await connectWatched(f.sim.url);
    const b = await connectWatched(f.sim.url);
    const thrown = new Error('the write threw');
    a.side.onWrite = () => {
      // What a throwing write would do, from the shared flush at the end of this turn.
      (a.side.socket as unknown as { _writeGeneric: () => never })._writeGeneric = () => {
        throw thrown;
      };
    };
    const received: Buffer[] = [];
    b.client.on('data', (d: Buffer) => received.push(d));
    const aClosed = new Promise<void>((resolve) => a.client.on('close', () => resolve()));
    a.client.on('error', () => {});
    const aServerError = new Promise<unknown>((resolve) => a.side.socket.once('error', resolve));
    const batch = Buffer.concat(f.keys.map((k) => verify(k.key, f.sim.rootKey)));
    // Both in this turn: the server reads both connections in its next one.
    a.client.write(batch);
    b.client.write(batch);
    expect(await aServerError).toBe(thrown);
    await aClosed;
    while (parseAnswers(Buffer.concat(received)).answers.length < 10) await new Promise((r) => setTimeout(r, 5));
    expectVerifications(parseAnswers(Buffer.concat(received)).answers, f.keys);
    b.client.destroy();
  });

  test('a server closed while answers are kept: the answers already finished reach the client', async () => {
    const own = await fixture();
    const { client, side } = await connectWatched(own.sim.url);
    const chunks: Buffer[] = [];
    client.on('data', (d: Buffer) => chunks.push(d));
    const ended = new Promise<void>((resolve) => client.on('close', () => resolve()));
    client.write(rawRequest('GET', '/_sim/health'));
    while (parseAnswers(Buffer.concat(chunks)).answers.length < 1) await new Promise((r) => setTimeout(r, 5));
    const before = side.handleWrites;
    let answersWritten = 0;
    let handleWritesAtClose: number | undefined;
    let closing: Promise<void> | undefined;
    side.onWrite = (written) => {
      for (const chunk of written) if (startsAnswer(chunk)) answersWritten++;
      // The tenth answer is finished as far as node:http knows: close in this same turn.
      if (answersWritten === 10 && closing === undefined) {
        handleWritesAtClose = side.handleWrites - before;
        closing = own.sim.close();
      }
    };
    client.write(Buffer.concat(own.keys.map((k) => verify(k.key, own.sim.rootKey))));
    await ended;
    await closing;
    // Nothing had reached the kernel yet when the server closed: all ten were kept.
    expect(handleWritesAtClose).toBe(0);
    const { answers, rest } = parseAnswers(Buffer.concat(chunks));
    expectVerifications(answers.slice(1), own.keys);
    expect(rest.length).toBe(0);
  });
});

describe('HTTP worker processes (createSimulator { workers: 2 })', () => {
  test('pipelined answers on two connections (one per worker) are whole and in order', async () => {
    const own = await fixture({ workers: 2 });
    try {
      const outs = await Promise.all([0, 1].map(() => exchange(own.sim.url, [Buffer.concat(own.keys.map((k) => verify(k.key, own.sim.rootKey)))], 10)));
      for (const out of outs) expectVerifications(out.answers, own.keys);
      expect(new Set(outs.map((o) => o.answers[0]?.headers['x-keysim-worker'])).size).toBe(2);
    } finally {
      await own.sim.close();
    }
  });
});
