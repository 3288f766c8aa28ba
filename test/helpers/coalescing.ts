/**
 * What the write-coalescing tests share: simulators with keys to verify, the checks of pipelined
 * verifications, and a watch on every connection the servers of the process accept — how many
 * writes its TCP handle was asked for (each one system call attempt), and what its writers
 * handed to the stream — so that those tests count writes instead of timing them.
 */
import { Server as NetServer, type Socket } from 'node:net';
import { afterAll, beforeAll, expect } from 'vitest';
import { type Simulator, type SimulatorOptions, createSimulator } from '../../src/http/index.js';
import { type RawAnswer, openSocket, rawPost } from './raw-http.js';

export const START_MS = Date.parse('2028-05-02T10:00:00.000Z');

/** A server-side socket as accepted, with the count of writes its TCP handle was asked for. */
export interface Accepted {
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

/**
 * From the calling test file's beforeAll to its afterAll: every connection a server of this
 * process accepts is watched — its handle's writes counted from the start, its stream writes
 * observed after the server's own 'connection' listeners (node:http, the coalescing) ran.
 */
export function watchAcceptedSockets(): void {
  beforeAll(() => {
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
}

/** A chunk that begins an answer (node:http writes the head as a string, with the body when it can). */
export function startsAnswer(chunk: Buffer | string): boolean {
  return (typeof chunk === 'string' ? chunk : chunk.toString('latin1', 0, 9)).startsWith('HTTP/1.1 ');
}

/** A client connection to `url`, and its server side as accepted (once the server accepted it). */
export async function connectWatched(url: string): Promise<{ client: Socket; side: Accepted }> {
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

export interface Fixture {
  sim: Simulator;
  keys: Array<{ keyId: string; key: string }>;
}

export async function fixture(options: SimulatorOptions = {}, keyCount = 10): Promise<Fixture> {
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

export const verify = (key: string, token: string) => rawPost('/v2/keys.verifyKey', { key }, token);

export function json(answer: RawAnswer | undefined): Record<string, unknown> {
  if (answer === undefined) throw new Error('missing answer');
  expect(Number(answer.headers['content-length'] ?? answer.body.length)).toBe(answer.body.length);
  return JSON.parse(answer.body.toString('utf8')) as Record<string, unknown>;
}

/** The answers are the verifications of `keys`, in order, each whole, each with its own request id. */
export function expectVerifications(answers: RawAnswer[], keys: Fixture['keys']): void {
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
