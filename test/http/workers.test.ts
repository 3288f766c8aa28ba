/**
 * `createSimulator({ workers: 2 })`: HTTP worker processes in front of one engine owner, over real
 * sockets. Every assertion is about exactness, none about pace: the credit race, the journal's
 * one order and its replay, and the clock, reset, snapshot/restore, faults and the API rate limit
 * being one state whichever worker answers — plus a killed worker being replaced with the state kept.
 */
import { execFileSync } from 'node:child_process';
import { Pool } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { JournalReplayer, type JournalEntry, type JournalStart, type JournalTake, type Simulator, createSimulator } from '../../src/http/index.js';
import { type Answer, call, send } from '../helpers/http.js';

const START_MS = Date.parse('2027-01-31T22:00:00.000Z');
let sim: Simulator;
let pool: Pool;

beforeAll(async () => {
  sim = await createSimulator({ startMs: START_MS, seed: 13, validateResponses: true, workers: 2 });
  // Many connections: the owner hands them to the workers in turn.
  pool = new Pool(sim.url, { connections: 50, pipelining: 1 });
});
afterAll(async () => {
  await pool.close();
  await sim.close();
});
beforeEach(() => sim.reset());

/** The worker process ids (children of this process running the worker script). */
function workerPids(): number[] {
  const out = execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(process.pid)], { encoding: 'utf8' });
  return out
    .split('\n')
    .filter((line) => line.includes('cluster-worker'))
    .map((line) => Number(line.trim().split(/\s+/)[0]));
}

/** POSTs JSON through the shared pool, or on a connection of its own with `fresh`. */
function post(path: string, body: unknown, rootKey: string | null = sim.rootKey, seq?: number, fresh = false): Promise<Answer> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (rootKey !== null) headers.authorization = `Bearer ${rootKey}`;
  if (seq !== undefined) headers['x-keysim-seq'] = String(seq);
  if (fresh) headers.connection = 'close';
  return send(sim.url, path, { headers, body: JSON.stringify(body), ...(fresh ? {} : { dispatcher: pool }) });
}

function workersOf(answers: Answer[]): Set<string> {
  return new Set(answers.map((a) => a.headers['x-keysim-worker'] ?? 'none'));
}

async function apiAndKey(credits: number): Promise<{ apiId: string; keyId: string; key: string }> {
  const { apiId } = await call<{ apiId: string }>(sim, '/v2/apis.createApi', { name: 'workers' });
  const created = await call<{ keyId: string; key: string }>(sim, '/v2/keys.createKey', { apiId, credits: { remaining: credits } });
  return { apiId, ...created };
}

describe('two HTTP workers, one engine', () => {
  test('1,000 concurrent verifications of a key with 100 credits → exactly 100 VALID, credits 99 … 0 each once, served by both workers', async () => {
    const { key, keyId } = await apiAndKey(100);
    const answers = await Promise.all(Array.from({ length: 1000 }, () => post('/v2/keys.verifyKey', { key }, null)));
    for (const a of answers) expect(a.status, a.text.slice(0, 200)).toBe(200);
    expect(workersOf(answers)).toEqual(new Set(['0', '1']));
    const data = answers.map((a) => (a.body as { data: { valid: boolean; code: string; credits: number } }).data);
    const valid = data.filter((d) => d.valid);
    expect(valid).toHaveLength(100);
    expect(valid.map((d) => d.credits).sort((x, y) => y - x)).toEqual(Array.from({ length: 100 }, (_, i) => 99 - i));
    for (const d of data.filter((x) => !x.valid)) expect(d).toMatchObject({ code: 'USAGE_EXCEEDED', credits: 0 });
    const got = await call<{ credits: { remaining: number } }>(sim, '/v2/keys.getKey', { keyId });
    expect(got.credits.remaining).toBe(0);
    // The in-process engine is the owner's: the same state.
    expect(sim.engine.keys.getKey(sim.rootKey, { keyId })).toMatchObject({ ok: true, value: { credits: { remaining: 0 } } });
  });

  test('the journal has one order across workers, and its replay through a fresh engine gives every answer the clients got', async () => {
    const { key } = await apiAndKey(80);
    await call(sim, '/_sim/namespaces.create', { name: 'workers-ns' });
    const start = await call<JournalStart>(sim, '/_sim/journal.start', {});
    const answers = new Map<number, Answer>();
    const fire = (from: number) =>
      Promise.all(
        Array.from({ length: 150 }, async (_, i) => {
          const seq = from + i;
          const body =
            i % 3 === 0 ? { namespace: 'workers-ns', identifier: `user-${i % 2}`, limit: 7, duration: 60_000 } : { key, credits: { cost: 1 + (i % 2) } };
          answers.set(seq, await post(i % 3 === 0 ? '/v2/ratelimit.limit' : '/v2/keys.verifyKey', body, sim.rootKey, seq));
        }),
      );
    await fire(0);
    await call(sim, '/_sim/clock.advance', { byMs: 61_000 });
    await fire(150);
    expect(workersOf([...answers.values()])).toEqual(new Set(['0', '1']));

    const entries: JournalEntry[] = [];
    for (;;) {
      const taken = await call<JournalTake>(sim, '/_sim/journal.take', {});
      entries.push(...taken.entries);
      if (taken.entries.length === 0) break;
    }
    expect(entries.map((e) => e.index)).toEqual(entries.map((_, i) => i));
    expect(entries.filter((e) => e.seq !== undefined)).toHaveLength(300);

    const replayer = JournalReplayer.create(start);
    const strip = (body: unknown) => JSON.stringify(body, (k, v: unknown) => (k === 'requestId' ? undefined : v));
    let differences = 0;
    for (const entry of entries) {
      const replayed = replayer.apply(entry);
      if (entry.seq === undefined) continue;
      const received = answers.get(entry.seq);
      if (received?.status !== replayed.status || strip(received.body) !== strip(replayed.body)) differences++;
    }
    expect(differences).toBe(0);
  });

  test('clock, reset and snapshot/restore are one state whichever worker answers', async () => {
    // Fresh connections each time, so that the calls land on both workers.
    const fresh = (path: string, body: unknown) => post(path, body, sim.rootKey, undefined, true);
    const advanced = await Promise.all(Array.from({ length: 10 }, () => fresh('/_sim/clock.advance', { byMs: 1000 })));
    expect(workersOf(advanced)).toEqual(new Set(['0', '1']));
    const clocks = await Promise.all(Array.from({ length: 4 }, () => fresh('/_sim/clock.get', {})));
    for (const c of clocks) expect((c.body as { data: { nowMs: number } }).data.nowMs).toBe(START_MS + 10_000);
    expect(sim.clock.now()).toBe(START_MS + 10_000);

    const { keyId } = await apiAndKey(5);
    const snapshot = await call<unknown>(sim, '/_sim/snapshot', {});
    await call(sim, '/_sim/reset', {});
    expect(sim.clock.now()).toBe(START_MS);
    for (const a of await Promise.all(Array.from({ length: 4 }, () => fresh('/v2/keys.getKey', { keyId })))) expect(a.status).toBe(404);
    await call(sim, '/_sim/restore', { snapshot });
    for (const a of await Promise.all(Array.from({ length: 4 }, () => fresh('/v2/keys.getKey', { keyId })))) {
      expect((a.body as { data: { credits: { remaining: number } } }).data.credits.remaining).toBe(5);
    }
  });

  test('injected faults and the API rate limit are one configuration across workers', async () => {
    const { key } = await apiAndKey(1000);
    await call(sim, '/_sim/faults.set', { errorRate: 1, operations: ['keys.verifyKey'] });
    const faulted = await Promise.all(Array.from({ length: 40 }, () => post('/v2/keys.verifyKey', { key }, null)));
    expect(workersOf(faulted)).toEqual(new Set(['0', '1']));
    for (const a of faulted) expect(a.status).toBe(500);
    await call(sim, '/_sim/faults.clear', {});
    for (const a of await Promise.all(Array.from({ length: 40 }, () => post('/v2/keys.verifyKey', { key }, null)))) expect(a.status).toBe(200);

    // Set in this process: once any answer has come back since, every worker has it.
    sim.faults.set({ errorRate: 1 });
    await call(sim, '/_sim/clock.get', {});
    for (const a of await Promise.all(Array.from({ length: 10 }, () => post('/v2/keys.verifyKey', { key }, null)))) expect(a.status).toBe(500);
    sim.faults.clear();

    await call(sim, '/_sim/apiRateLimit.set', { limit: 25, durationMs: 60_000 });
    const limited = await Promise.all(Array.from({ length: 100 }, () => post('/v2/keys.verifyKey', { key })));
    expect(workersOf(limited)).toEqual(new Set(['0', '1']));
    expect(limited.filter((a) => a.status === 200)).toHaveLength(25);
    expect(limited.filter((a) => a.status === 429)).toHaveLength(75);
  });

  test('seeded fault decisions are drawn by the owner: a sequential run gives the same outcomes as one process with the same seed', async () => {
    const single = await createSimulator({ startMs: START_MS, seed: 13 });
    try {
      const outcomes = async (target: Simulator, viaPool: boolean) => {
        await call(target, '/_sim/faults.set', { errorRate: 0.3, dropRate: 0.2, operations: ['keys.verifyKey'] });
        const seen: string[] = [];
        for (let i = 0; i < 40; i++) {
          const headers = { 'content-type': 'application/json', connection: 'close' };
          const answer = await send(target.url, '/v2/keys.verifyKey', {
            headers,
            body: JSON.stringify({ key: 'sk_unknown' }),
            ...(viaPool ? { dispatcher: pool } : {}),
          }).catch(() => undefined);
          seen.push(answer === undefined ? 'dropped' : String(answer.status));
        }
        return seen;
      };
      const expected = await outcomes(single, false);
      expect(new Set(expected)).toEqual(new Set(['dropped', '500', '200']));
      expect(await outcomes(sim, false)).toEqual(expected);
    } finally {
      await single.close();
    }
  });

  test('a killed worker is replaced, the state survives it, and no connection handed to it as it died is left hanging', async () => {
    const { key, keyId } = await apiAndKey(10);
    expect((await post('/v2/keys.verifyKey', { key }, null)).status).toBe(200);
    const before = workerPids();
    expect(before).toHaveLength(2);
    const victim = before[0] as number;
    process.kill(victim, 'SIGKILL');
    // Until the replacement answers: fresh connections go to the workers in turn.
    const seen = new Set<string>();
    const deadline = Date.now() + 60_000;
    while (!(seen.has('0') && seen.has('1') && !workerPids().includes(victim))) {
      if (Date.now() > deadline) throw new Error(`no replacement worker answered: pids ${workerPids().join(', ')}, workers seen ${[...seen].join(', ')}`);
      const health = await send(sim.url, '/_sim/health', { method: 'GET', headers: { connection: 'close' } }).catch(() => undefined);
      if (health?.status === 200) seen.add(health.headers['x-keysim-worker'] ?? 'none');
    }
    expect(workerPids()).toHaveLength(2);
    await pool.close();
    pool = new Pool(sim.url, { connections: 50, pipelining: 1 });
    const answers = await Promise.all(Array.from({ length: 20 }, () => post('/v2/keys.verifyKey', { key }, null)));
    expect(workersOf(answers)).toEqual(new Set(['0', '1']));
    expect(answers.filter((a) => (a.body as { data: { valid: boolean } }).data.valid)).toHaveLength(9);
    expect(await call<{ credits: { remaining: number } }>(sim, '/v2/keys.getKey', { keyId })).toMatchObject({ credits: { remaining: 0 } });
  });
});
