/**
 * Entry point of the oracle benchmark's child processes (the parent is oracle-overhead.ts):
 * `oracle-child.ts replay|history`. Each measurement runs in a fresh process and hands back one
 * `RESULT <json>` line (subprocess.ts protocol); progress goes to stderr.
 *
 * - replay: a real simulator (in this process, manual clock) journals real keys.verifyKey requests
 *   sent over HTTP; its journal start (the snapshot) and those entries are the pattern for N
 *   entries, which a JournalReplayer applies — and, as the baseline, the same verifications go
 *   straight to a fresh Engine restored from the same snapshot (engine.keys.verifyKey).
 * - history: HistoryWriter.recordCall on a keys.verifyKey call whose answer a real simulator gave.
 *
 * Both use keysim as users run it: the compiled dist/ when it exists, else the sources.
 */
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type * as EngineLayer from '../src/engine/index.js';
import type * as HttpLayer from '../src/http/index.js';
import type * as HistoryModule from '../src/load/history/history.js';
import { progress, sendResult } from './subprocess.js';
import { median } from './stats.js';

/** Entries replayed (and verifications called directly) per timed run. */
const REPLAY_ENTRIES = 200_000;
const REPLAY_RUNS = 5;
/** Keys the verifications cycle over (each with credits and a monthly refill). */
const REPLAY_KEYS = 1_000;
/** Entries journaled from real HTTP requests (the pattern of the others, and compared with the real answers). */
const REAL_ENTRIES = 500;
const RECORD_CALLS = 100_000;
const RECORD_RUNS = 5;
/** Distinct answer objects the recorded calls cycle over. */
const ANSWER_RING = 4_096;

// --- what the parent reads (it imports the types only: this file is an entry point) -------------

export interface ReplayResult {
  source: 'dist' | 'src';
  entries: number;
  runs: number;
  /** Keys the verifications cycle over. */
  keys: number;
  /** Per run: entries per second through JournalReplayer.apply. */
  replayPerSecond: number[];
  /** Per run: the same verifications per second through engine.keys.verifyKey on a fresh engine. */
  directPerSecond: number[];
  /** Median ms of JournalReplayer.create (snapshot restored into a fresh engine), not in the rates. */
  createMs: number;
  /** Bytes of the journal start's snapshot as JSON. */
  snapshotBytes: number;
  /** Average bytes of one journal entry as JSON (what /_sim/journal.take carries per entry). */
  entryBytes: number;
  /** Replayed answers to the real requests that equal what the simulator answered them (data). */
  realAgreeing: number;
  realCompared: number;
  /** Answers that were not 200 VALID, and wrong final balances, over all runs (should be 0). */
  wrongAnswers: number;
}

export interface HistoryResult {
  source: 'dist' | 'src';
  calls: number;
  runs: number;
  /** Per run: µs per recordCall, the synchronous part (what blocks the generator's event loop). */
  syncUsPerCall: number[];
  /** Per run: µs per call until gzip has caught up (drain() resolved): the sync part plus the rest of the work. */
  drainedUsPerCall: number[];
  /** The verifyKey answer recorded (from a real simulator), as JSON. */
  answer: string;
  /** Events the writer counted (should be runs × calls + 1). */
  written: number;
}

// --- keysim's modules --------------------------------------------------------------------------

interface Modules {
  engine: typeof EngineLayer;
  http: typeof HttpLayer;
  history: typeof HistoryModule;
  source: 'dist' | 'src';
}

async function loadModules(): Promise<Modules> {
  const built = (file: string) => new URL(`../dist/src/${file}`, import.meta.url);
  const files = ['engine/index.js', 'http/index.js', 'load/history.js'] as const;
  if (files.every((f) => existsSync(built(f)))) {
    const [engine, http, history] = (await Promise.all(files.map((f) => import(built(f).href)))) as [
      typeof EngineLayer,
      typeof HttpLayer,
      typeof HistoryModule,
    ];
    return { engine, http, history, source: 'dist' };
  }
  progress('oracle bench: dist/ not built, measuring keysim from its sources (run npm run build)');
  const [engine, http, history] = await Promise.all([
    import('../src/engine/index.js'),
    import('../src/http/index.js'),
    import('../src/load/history/history.js'),
  ]);
  return { engine, http, history, source: 'src' };
}

// --- a real simulator --------------------------------------------------------------------------

/** 2027-01-15T12:00:00Z, as the other benchmarks. */
const START_MS = Date.UTC(2027, 0, 15, 12);
const CREDITS = 1_000_000_000;

async function post(
  url: string,
  rootKey: string,
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${rootKey}`, ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

async function data<T>(url: string, rootKey: string, path: string, body: unknown): Promise<T> {
  const res = await post(url, rootKey, path, body);
  const d = (res.body as { data?: T }).data;
  if (res.status !== 200 || d === undefined) throw new Error(`${path} answered ${res.status}: ${JSON.stringify(res.body)}`);
  return d;
}

/** A key as a scenario creates one: credits with a monthly refill, a name and metadata. */
const keyRequest = (apiId: string, i: number) => ({
  apiId,
  name: `bench-key-${i}`,
  meta: { plan: 'pro', tenant: `tenant-${i % 17}` },
  credits: { remaining: CREDITS, refill: { interval: 'monthly' as const, amount: CREDITS } },
});

// --- replay ------------------------------------------------------------------------------------

function dataOf(body: unknown): unknown {
  return typeof body === 'object' && body !== null ? (body as { data?: unknown }).data : undefined;
}

export async function measureReplay(): Promise<ReplayResult> {
  const { engine: E, http: H, source } = await loadModules();
  const sim = await H.createSimulator({ host: '127.0.0.1', port: 0, clock: 'manual', startMs: START_MS, seed: 1 });
  let start: HttpLayer.JournalStart;
  let real: HttpLayer.JournalEntry[];
  const realAnswers: unknown[] = [];
  const keys: string[] = [];
  const rootKey = sim.rootKey;
  try {
    const { apiId } = await data<{ apiId: string }>(sim.url, sim.rootKey, '/v2/apis.createApi', { name: 'bench-api' });
    // The fixture goes straight to the engine (fast); the verifications go over HTTP, journaled.
    for (let i = 0; i < REPLAY_KEYS; i++) {
      const created = sim.engine.keys.createKey(sim.rootKey, keyRequest(apiId, i));
      if (!created.ok) throw new Error(`createKey failed: ${created.error.detail}`);
      keys.push(created.value.key);
    }
    start = await data<HttpLayer.JournalStart>(sim.url, sim.rootKey, '/_sim/journal.start', {});
    for (let i = 0; i < REAL_ENTRIES; i++) {
      // The clock moves as it would under load, so entries carry different instants.
      if (i % 50 === 49) sim.clock.advance(1);
      const res = await post(sim.url, sim.rootKey, '/v2/keys.verifyKey', { key: keys[i % REPLAY_KEYS] }, { 'x-keysim-seq': String(i) });
      if (res.status !== 200) throw new Error(`keys.verifyKey answered ${res.status}`);
      realAnswers.push(dataOf(res.body));
    }
    const take = await data<HttpLayer.JournalTake>(sim.url, sim.rootKey, '/_sim/journal.take', {});
    real = take.entries;
    await data(sim.url, sim.rootKey, '/_sim/journal.stop', {});
  } finally {
    await sim.close();
  }
  if (real.length !== REAL_ENTRIES || real.some((e, i) => e.seq !== i || e.path !== '/v2/keys.verifyKey')) {
    throw new Error(`the journal holds ${real.length} entries, expected ${REAL_ENTRIES} verifyKey entries with seq 0…${REAL_ENTRIES - 1}`);
  }

  // N entries in the real entries' shape: the same keys in turn, rising seq, the clock moving ~20k entries/s.
  const last = real[real.length - 1]!;
  const entries: HttpLayer.JournalEntry[] = [...real];
  for (let i = real.length; i < REPLAY_ENTRIES; i++) {
    const pattern = real[i % real.length]!;
    const entry: HttpLayer.JournalEntry = {
      index: i,
      atMs: last.atMs + Math.floor((i - real.length) / 20),
      method: pattern.method,
      path: pattern.path,
      // The journal holds a verified key as its hash.
      input: { ...(pattern.input as Record<string, unknown>), key: H.nodeSha256(keys[i % REPLAY_KEYS]!) },
      seq: i,
    };
    if (pattern.rootKeyHash !== undefined) entry.rootKeyHash = pattern.rootKeyHash;
    entries.push(entry);
  }
  const entryBytes = real.reduce((sum, e) => sum + JSON.stringify(e).length, 0) / real.length;
  const snapshot = start.snapshot as EngineLayer.EngineSnapshot;
  // Every key sees the same number of verifications per run (REPLAY_ENTRIES is a multiple of REPLAY_KEYS).
  const expectedBalance = CREDITS - REPLAY_ENTRIES / REPLAY_KEYS;
  let wrongAnswers = 0;
  let realAgreeing = 0;
  const createMs: number[] = [];

  const replayRun = (count: number, compareReal: boolean): number => {
    const t0 = process.hrtime.bigint();
    const replayer = H.JournalReplayer.create(start);
    const t1 = process.hrtime.bigint();
    // Kept for the checks: the answers to the real requests, or the last answer of every key.
    const keepFrom = compareReal ? 0 : count - REPLAY_KEYS;
    const keepTo = compareReal ? REAL_ENTRIES : count;
    const kept: unknown[] = [];
    let wrong = 0;
    for (let i = 0; i < count; i++) {
      const answer = replayer.apply(entries[i]!);
      const d = dataOf(answer.body) as { code?: unknown } | undefined;
      if (answer.status !== 200 || d?.code !== 'VALID') wrong++;
      if (i >= keepFrom && i < keepTo) kept.push(d);
    }
    const seconds = Number(process.hrtime.bigint() - t1) / 1e9;
    createMs.push(Number(t1 - t0) / 1e6);
    if (compareReal) realAgreeing = kept.filter((d, i) => JSON.stringify(d) === JSON.stringify(realAnswers[i])).length;
    else if (count === REPLAY_ENTRIES) wrong += kept.filter((d) => (d as { credits?: unknown }).credits !== expectedBalance).length;
    wrongAnswers += wrong;
    return count / seconds;
  };

  const directRun = (count: number): number => {
    const clock = new E.ManualClock(start.startedAtMs);
    const engine = new E.Engine({ clock, seed: snapshot.seed, compat: snapshot.compat, sha256: H.nodeSha256 });
    const restored = engine.restore(snapshot);
    if (!restored.ok) throw new Error(`restore failed: ${restored.error.detail}`);
    let wrong = 0;
    const t1 = process.hrtime.bigint();
    for (let i = 0; i < count; i++) {
      // The same verifications as the journal's, with the plaintexts the journal holds hashes of.
      const r = engine.keys.verifyKey(rootKey, { key: keys[i % REPLAY_KEYS]! });
      if (!r.ok || r.value.code !== 'VALID') wrong++;
    }
    const seconds = Number(process.hrtime.bigint() - t1) / 1e9;
    if (count === REPLAY_ENTRIES) {
      const check = engine.keys.verifyKey(rootKey, { key: keys[0]! });
      if (!check.ok || check.value.credits !== expectedBalance - 1) wrong++;
    }
    wrongAnswers += wrong;
    return count / seconds;
  };

  // Untimed warm-up of both (JIT), which also compares the replay of the real entries with the real answers.
  replayRun(REAL_ENTRIES * 40, true);
  directRun(REAL_ENTRIES * 40);
  createMs.length = 0;
  const replayPerSecond: number[] = [];
  const directPerSecond: number[] = [];
  for (let run = 0; run < REPLAY_RUNS; run++) {
    if (run % 2 === 0) {
      replayPerSecond.push(replayRun(REPLAY_ENTRIES, false));
      directPerSecond.push(directRun(REPLAY_ENTRIES));
    } else {
      directPerSecond.push(directRun(REPLAY_ENTRIES));
      replayPerSecond.push(replayRun(REPLAY_ENTRIES, false));
    }
    progress(`oracle replay: run ${run + 1}/${REPLAY_RUNS}: replay ${Math.round(replayPerSecond[run]!)}/s, direct ${Math.round(directPerSecond[run]!)}/s`);
  }
  return {
    source,
    entries: REPLAY_ENTRIES,
    runs: REPLAY_RUNS,
    keys: REPLAY_KEYS,
    replayPerSecond,
    directPerSecond,
    createMs: median(createMs),
    snapshotBytes: JSON.stringify(start.snapshot).length,
    entryBytes,
    realAgreeing,
    realCompared: REAL_ENTRIES,
    wrongAnswers,
  };
}

// --- history -----------------------------------------------------------------------------------

export async function measureHistory(): Promise<HistoryResult> {
  const { http: H, history: HM, source } = await loadModules();
  const path = join(tmpdir(), `keysim-bench-history-${process.pid}.jsonl.gz`);
  const writer = await HM.HistoryWriter.create(path, { run: { scenario: 'bench', seed: 1, target: 'simulator' } });
  try {
    // One real createKey and verifyKey answer, recorded as the runner records them (the writer learns the key id).
    const sim = await H.createSimulator({ host: '127.0.0.1', port: 0, clock: 'manual', startMs: START_MS, seed: 1 });
    let key: string;
    let answer: { status: number; body: unknown };
    try {
      const { apiId } = await data<{ apiId: string }>(sim.url, sim.rootKey, '/v2/apis.createApi', { name: 'bench-api' });
      const body = keyRequest(apiId, 0);
      const created = await post(sim.url, sim.rootKey, '/v2/keys.createKey', body);
      writer.recordCall({ seq: writer.begin(), op: 'keys.createKey', body, invokeMs: START_MS, completeMs: START_MS + 1, response: created });
      key = (dataOf(created.body) as { key: string }).key;
      answer = await post(sim.url, sim.rootKey, '/v2/keys.verifyKey', { key });
    } finally {
      await sim.close();
    }
    if (answer.status !== 200 || (dataOf(answer.body) as { code?: unknown }).code !== 'VALID')
      throw new Error(`keys.verifyKey answered ${JSON.stringify(answer)}`);
    if (writer.keys.keyIdOf(key) === undefined) throw new Error('the history did not learn the key id');

    const verifyBody = { key };
    // Answers as the open model hands them over (one parsed body per response): the real answer with
    // its request id and balance varied, so that gzip sees lines that differ as in a run.
    const real = answer.body as { meta: { requestId: string }; data: { credits: number } };
    const answers = Array.from({ length: ANSWER_RING }, (_, i) => ({
      status: 200,
      body: { meta: { requestId: `${real.meta.requestId.slice(0, -6)}${String(i).padStart(6, '0')}` }, data: { ...real.data, credits: real.data.credits - i } },
    }));
    const syncUsPerCall: number[] = [];
    const drainedUsPerCall: number[] = [];
    const base = performance.timeOrigin + performance.now();
    let n = 0;
    const batch = (count: number): void => {
      for (let i = 0; i < count; i++, n++) {
        // Times as the open model records them: wall times from the monotonic clock, service times from the clock driver.
        const invokeMs = base + n * 0.05;
        writer.recordCall({
          seq: writer.begin(),
          op: 'keys.verifyKey',
          body: verifyBody,
          invokeMs,
          completeMs: invokeMs + 1.25,
          serviceInvokeMs: START_MS + Math.floor(n / 20),
          serviceCompleteMs: START_MS + Math.floor(n / 20) + 2,
          response: answers[n % ANSWER_RING]!,
        });
      }
    };
    // Untimed warm-up (JIT).
    batch(RECORD_CALLS / 5);
    await writer.drain();
    const warm = writer.written;
    for (let run = 0; run < RECORD_RUNS; run++) {
      const t0 = process.hrtime.bigint();
      batch(RECORD_CALLS);
      const t1 = process.hrtime.bigint();
      await writer.drain();
      const t2 = process.hrtime.bigint();
      syncUsPerCall.push(Number(t1 - t0) / 1e3 / RECORD_CALLS);
      drainedUsPerCall.push(Number(t2 - t0) / 1e3 / RECORD_CALLS);
      progress(`oracle history: run ${run + 1}/${RECORD_RUNS}: ${syncUsPerCall[run]!.toFixed(2)} µs per recordCall`);
    }
    const written = writer.written;
    await writer.close();
    return {
      source,
      calls: RECORD_CALLS,
      runs: RECORD_RUNS,
      syncUsPerCall,
      drainedUsPerCall,
      answer: JSON.stringify(answer.body),
      written: written - warm,
    };
  } finally {
    await writer.close().catch(() => undefined);
    await rm(path, { force: true });
  }
}

// --- entry -------------------------------------------------------------------------------------

const task = process.argv[2];
if (task === 'replay') sendResult(await measureReplay());
else if (task === 'history') sendResult(await measureHistory());
else throw new Error(`oracle-child: expected replay or history, got ${String(task)}`);
