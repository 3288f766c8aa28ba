/**
 * Write coalescing (src/http/write-coalescing.ts, docs/benchmarks.md#http-simulator) over real
 * sockets: a batch of pipelined answers reaches the kernel in one write instead of one each, and
 * nothing an answer's writer was told is written is lost or reordered — on a refused operator
 * call, a 413, a large answer to a client that does not read, a client that resets, HTTP worker
 * processes, and a close. Writes are counted at the TCP handle (each call is one system call
 * attempt), never timed.
 */
import { Server as NetServer, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type Simulator, type SimulatorOptions, createSimulator } from '../../src/http/index.js';
import { keptHighWater } from '../../src/http/write-coalescing.js';
import { type RawAnswer, exchange, openSocket, parseAnswers, rawPost, rawRequest } from '../helpers/raw-http.js';

const START_MS = Date.parse('2028-05-02T10:00:00.000Z');

/** A server-side socket as accepted, with the count of writes its TCP handle was asked for. */
interface Accepted {
  socket: Socket;
  handleWrites: number;
  /** The system calls of the errors the socket emitted (e.g. 'write' for a write the peer reset). */
  errors: string[];
  /** Called once the server's own 'connection' listeners (node:http, the coalescing) have run. */
  onWrite?: (chunks: Array<Buffer | string>) => void;
}
const accepted: Accepted[] = [];
// Every write net.Socket makes ends in one of these (stream_base: one uv_write each).
const HANDLE_WRITES = ['writev', 'writeBuffer', 'writeUtf8String', 'writeLatin1String', 'writeAsciiString', 'writeUcs2String'];
type Emit = (this: NetServer, event: string | symbol, ...args: unknown[]) => boolean;
const netEmit = NetServer.prototype.emit as Emit;

function watch(socket: Socket): Accepted {
  const entry: Accepted = { socket, handleWrites: 0, errors: [] };
  socket.on('error', (error: NodeJS.ErrnoException) => entry.errors.push(error.syscall ?? error.message));
  const handle = (socket as unknown as { _handle: Record<string, (...args: unknown[]) => unknown> })._handle;
  for (const name of HANDLE_WRITES) {
    const original = handle[name];
    if (original === undefined) continue;
    handle[name] = function (this: unknown, ...args: unknown[]) {
      entry.handleWrites++;
      return original.apply(this, args);
    };
  }
  return entry;
}

/** Wraps the socket's stream writes as the server left them, to see what its writers hand over. */
function observeStreamWrites(entry: Accepted): void {
  const s = entry.socket as unknown as {
    _write: (chunk: Buffer | string, encoding: string, cb: () => void) => void;
    _writev: (entries: Array<{ chunk: Buffer | string }>, cb: () => void) => void;
  };
  const write = s._write;
  const writev = s._writev;
  s._write = (chunk, encoding, cb) => {
    write.call(s, chunk, encoding, cb);
    entry.onWrite?.([chunk]);
  };
  s._writev = (entries, cb) => {
    writev.call(s, entries, cb);
    entry.onWrite?.(entries.map((e) => e.chunk));
  };
}

beforeAll(() => {
  // Every accepted connection of this process: its handle's writes counted from the start, and
  // its stream writes observed after the server's own listeners ran.
  const emit: Emit = function (this: NetServer, event, ...args) {
    if (event !== 'connection') return netEmit.call(this, event, ...args);
    const entry = watch(args[0] as Socket);
    accepted.push(entry);
    const listened = netEmit.call(this, event, ...args);
    observeStreamWrites(entry);
    return listened;
  };
  NetServer.prototype.emit = emit as typeof NetServer.prototype.emit;
});
afterAll(() => {
  Reflect.deleteProperty(NetServer.prototype, 'emit');
});

/** A chunk that begins an answer (node:http writes the head as a string, with the body when it can). */
function startsAnswer(chunk: Buffer | string): boolean {
  return (typeof chunk === 'string' ? chunk : chunk.toString('latin1', 0, 9)).startsWith('HTTP/1.1 ');
}

/** A client connection to `url`, and its server side as accepted (once the server accepted it). */
async function connectWatched(url: string): Promise<{ client: Socket; side: Accepted }> {
  // Only connections accepted from now on: a port freed by a reset is soon used again.
  const since = accepted.length;
  const client = await openSocket(url);
  for (let i = 0; i < 1000; i++) {
    const side = accepted.slice(since).find((a) => a.socket.remotePort === client.localPort);
    if (side !== undefined) return { client, side };
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`no accepted socket for client port ${String(client.localPort)}`);
}

interface Fixture {
  sim: Simulator;
  keys: Array<{ keyId: string; key: string }>;
}

async function fixture(options: SimulatorOptions = {}, keyCount = 10): Promise<Fixture> {
  const sim = await createSimulator({ startMs: START_MS, seed: 21, checkHost: false, ...options });
  const api = sim.engine.apis.createApi(sim.rootKey, { name: 'coalescing' });
  if (!api.ok) throw new Error(api.error.detail);
  const keys = [];
  for (let i = 0; i < keyCount; i++) {
    const created = sim.engine.keys.createKey(sim.rootKey, { apiId: api.value.apiId, name: `key-${i}` });
    if (!created.ok) throw new Error(created.error.detail);
    keys.push({ keyId: created.value.keyId, key: created.value.key });
  }
  return { sim, keys };
}

const verify = (key: string, token: string) => rawPost('/v2/keys.verifyKey', { key }, token);

function json(answer: RawAnswer | undefined): Record<string, unknown> {
  if (answer === undefined) throw new Error('missing answer');
  expect(Number(answer.headers['content-length'] ?? answer.body.length)).toBe(answer.body.length);
  return JSON.parse(answer.body.toString('utf8')) as Record<string, unknown>;
}

/** The answers are the verifications of `keys`, in order, each whole, each with its own request id. */
function expectVerifications(answers: RawAnswer[], keys: Fixture['keys']): void {
  expect(answers.map((a) => a.status)).toEqual(keys.map(() => 200));
  const ids = answers.map((answer, i) => {
    const body = json(answer) as { meta: { requestId: string }; data: { keyId: string; valid: boolean } };
    expect(body.data.keyId).toBe(keys[i]?.keyId);
    expect(body.data.valid).toBe(true);
    expect(body.meta.requestId).toBe(answer.headers['x-request-id']);
    return body.meta.requestId;
  });
  // One counter per server (request-id.ts): in order of the requests.
  expect([...ids].sort()).toEqual(ids);
  expect(new Set(ids).size).toBe(ids.length);
}

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
      [verify(a.key, f.sim.rootKey), verify(b.key, f.sim.rootKey), rawPost('/_sim/clock.advance', { ms: 1000 }, 'not-the-operator'), verify(c.key, f.sim.rootKey)],
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
    const head = rawRequest('POST', '/v2/keys.verifyKey', { 'content-type': 'application/json', authorization: `Bearer ${f.sim.rootKey}`, 'content-length': String(80 * 1024 * 1024) });
    const mib = Buffer.alloc(1024 * 1024, 32);
    // Three answers wanted: the exchange waits for the server's end of the connection.
    const out = await exchange(f.sim.url, [Buffer.concat([verify(a.key, f.sim.rootKey), head]), ...Array.from({ length: 70 }, () => mib)], 3);
    expect(out.answers.map((x) => x.status)).toEqual([200, 413]);
    expect((json(out.answers[1]) as { error: { status: number } }).error.status).toBe(413);
    expect(out.closedByServer).toBe(true);
  });

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
        // The batch and, right behind it, a reset (RST): the server may read both in one turn.
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
      const outs = await Promise.all(
        [0, 1].map(() => exchange(own.sim.url, [Buffer.concat(own.keys.map((k) => verify(k.key, own.sim.rootKey)))], 10)),
      );
      for (const out of outs) expectVerifications(out.answers, own.keys);
      expect(new Set(outs.map((o) => o.answers[0]?.headers['x-keysim-worker'])).size).toBe(2);
    } finally {
      await own.sim.close();
    }
  });
});
