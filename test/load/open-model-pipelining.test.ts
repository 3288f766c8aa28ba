/**
 * The open model with pipelining: requests really are pipelined (several on one connection before
 * the first answer), and a server that closes a connection mid-pipeline fails exactly the
 * requests it left unanswered — counted as resets, never sent a second time — while the run goes on
 * over new connections and every planned request ends answered or failed.
 */
import { type Socket, createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { OpenModelExecutor } from '../../src/load/executors/open-model.js';
import type { PlannedRequest } from '../../src/load/executors/open-model-requests.js';
import { planPhases } from '../../src/load/plan/plan.js';

const envelope = (n: number): string => `{"meta":{"requestId":"req_${n}"},"data":{"n":${n}}}`;
import { Recorder } from '../../src/load/metrics/recorder.js';

const PIPELINING = 4;
/** The server answers a connection's requests in one write once it holds this many (or after a moment). */
const BATCH = PIPELINING;
/** Every third batch is cut: two answered, then the connection is destroyed. */
const CUT_EVERY = 3;

const seen: number[] = [];
let answered = 0;
let cut = 0;
let mostHeldAtOnce = 0;
const sockets: Socket[] = [];
const server = createServer((socket) => {
  sockets.push(socket);
  let text = '';
  let held: number[] = [];
  let timer: NodeJS.Timeout | undefined;
  let batches = 0;
  const flush = () => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    if (held.length === 0 || socket.destroyed) return;
    batches++;
    const cutting = batches % CUT_EVERY === 0 && held.length > 2;
    const answering = cutting ? held.slice(0, 2) : held;
    socket.write(
      // The service's v2 envelope (its `meta`): a body without it is not the service's answer.
      answering.map((n) => `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${envelope(n).length}\r\n\r\n${envelope(n)}`).join(''),
    );
    answered += answering.length;
    held = [];
    if (cutting) {
      cut++;
      socket.destroy();
    }
  };
  socket.on('data', (chunk) => {
    text += chunk.toString('latin1');
    for (;;) {
      const end = text.indexOf('\r\n\r\n');
      if (end < 0) break;
      const length = Number(/content-length: (\d+)/i.exec(text.slice(0, end))?.[1] ?? 0);
      if (text.length < end + 4 + length) break;
      const n = (JSON.parse(text.slice(end + 4, end + 4 + length)) as { n: number }).n;
      text = text.slice(end + 4 + length);
      seen.push(n);
      held.push(n);
      mostHeldAtOnce = Math.max(mostHeldAtOnce, held.length);
    }
    if (held.length >= BATCH) flush();
    else if (held.length > 0 && timer === undefined) timer = setTimeout(flush, 30);
  });
  socket.on('error', () => undefined);
});
let url = '';

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => {
  for (const s of sockets) s.destroy();
  server.close();
});

test('pipelined requests: a server closing mid-pipeline fails only the unanswered ones, as resets, none sent twice', async () => {
  const [phase] = planPhases([{ name: 'load', durationMs: 1_000, rate: 200, warmup: false }]);
  if (phase === undefined) throw new Error('no phase');
  const executor = new OpenModelExecutor({ url, rootKey: 'root_x_12345678', connections: 2, pipelining: PIPELINING, timeoutMs: 10_000 });
  const recorder = new Recorder();
  let n = 0;
  const next = (): PlannedRequest => {
    const body = { n: n++ };
    return { operation: 'keys.verifyKey', label: 'verify', spec: { op: 'keys.verifyKey', body }, check: undefined };
  };
  const start = performance.now();
  recorder.startMeasuring(start);
  let outcome: Awaited<ReturnType<OpenModelExecutor['runPhase']>>;
  try {
    outcome = await executor.runPhase(phase, start, next, recorder);
  } finally {
    await executor.close();
  }
  const figures = recorder.finish(performance.now() - start);

  expect(outcome).toMatchObject({ sent: phase.count, dropped: 0 });
  // Pipelined: the server held several requests of one connection before answering any.
  expect(mostHeldAtOnce).toBeGreaterThan(1);
  // The server cut some pipelines, and each request reached it at most once.
  expect(cut).toBeGreaterThan(0);
  expect(new Set(seen).size).toBe(seen.length);
  // Every planned request ended once: answered (as the server counted) or reset.
  const { reset, timeout, refused, other } = figures.overall.transportErrors;
  expect(figures.overall.statuses).toEqual({ '200': answered });
  expect(reset).toBe(phase.count - answered);
  expect(reset).toBeGreaterThan(0);
  expect({ timeout, refused, other }).toEqual({ timeout: 0, refused: 0, other: 0 });
  expect(figures.overall.requests).toBe(phase.count);
});
