/**
 * Injected faults over real sockets (src/http/faults.ts): added latency, 500s and dropped
 * connections that leave the state untouched, the operations filter, the wrong behaviour of the
 * engine reached through /_sim/faults.set, faults.get/clear, reset, an admin surface that is
 * never faulted, schema violations, and `keysim serve --fault`.
 */
import { type ChildProcessByStdio, spawn } from 'node:child_process';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { Engine, ManualClock } from '../../src/engine/index.js';
import { EXIT } from '../../src/cli/exit-codes.js';
import { FaultInjector, type FaultsConfig, type FaultsView, OPERATIONS, type Simulator, createSimulator, parseFaultFlags } from '../../src/http/index.js';
import { cleanEnv } from '../helpers/cli.js';
import { type Answer, call, expectV1Error, expectV2Error, locationsOf, postJson, send } from '../helpers/http.js';

const START_MS = Date.parse('2028-01-31T12:00:00.000Z');
const NO_FAULTS: FaultsView = { latencyMs: 0, errorRate: 0, dropRate: 0, overAdmitRate: 0, skipRefillRate: 0, lostDecrementRate: 0 };

let sim: Simulator;
const logged: string[] = [];

beforeAll(async () => {
  sim = await createSimulator({ startMs: START_MS, seed: 13, validateResponses: true, log: (line) => logged.push(line) });
});
afterAll(() => sim.close());
beforeEach(() => {
  sim.reset();
  logged.length = 0;
});
// Injected 500s are not bugs: the simulator must not log them as unexpected errors.
afterEach(() => {
  expect(logged).toEqual([]);
});

function setFaults(config: FaultsConfig): Promise<FaultsView> {
  return call<FaultsView>(sim, '/_sim/faults.set', config);
}

async function limitedKey(
  remaining: number,
  refill?: { interval: 'daily' | 'monthly'; amount: number },
): Promise<{ apiId: string; keyId: string; key: string }> {
  const { apiId } = await call<{ apiId: string }>(sim, '/v2/apis.createApi', { name: 'faults' });
  const created = await call<{ keyId: string; key: string }>(sim, '/v2/keys.createKey', {
    apiId,
    credits: refill === undefined ? { remaining } : { remaining, refill },
  });
  return { apiId, ...created };
}

function snapshotText(): string {
  return JSON.stringify(sim.engine.snapshot());
}

async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const started = performance.now();
  const value = await fn();
  return { ms: performance.now() - started, value };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

/** A request that must fail at the socket; resolves with the error code. */
async function socketError(request: Promise<Answer>): Promise<string> {
  try {
    const answer = await request;
    throw new Error(`expected a socket error, got ${answer.status} ${answer.text.slice(0, 200)}`);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (typeof code !== 'string') throw error;
    return code;
  }
}

describe('/_sim/faults.set, faults.get, faults.clear', () => {
  test('no faults by default; set answers the whole configuration, get reads it back, set replaces it, clear removes it', async () => {
    expect(await call(sim, '/_sim/faults.get', {})).toEqual(NO_FAULTS);
    const full = await setFaults({
      latencyMs: { min: 1, max: 3 },
      errorRate: 0.25,
      dropRate: 0.125,
      overAdmitRate: 0.5,
      skipRefillRate: 0.75,
      lostDecrementRate: 1,
      operations: ['keys.verifyKey', 'v1.identities.getIdentity'],
    });
    expect(full).toEqual({
      latencyMs: { min: 1, max: 3 },
      errorRate: 0.25,
      dropRate: 0.125,
      overAdmitRate: 0.5,
      skipRefillRate: 0.75,
      lostDecrementRate: 1,
      operations: ['keys.verifyKey', 'v1.identities.getIdentity'],
    });
    expect(await call(sim, '/_sim/faults.get', {})).toEqual(full);
    expect(sim.engine.faults).toEqual({
      overAdmitRate: 0.5,
      skipRefillRate: 0.75,
      lostDecrementRate: 1,
      operations: ['keys.verifyKey', 'v1.identities.getIdentity'],
    });

    expect(await setFaults({ latencyMs: { mean: 2, stddev: 1 } })).toEqual({ ...NO_FAULTS, latencyMs: { mean: 2, stddev: 1 } });
    expect(sim.engine.faults).toEqual({ overAdmitRate: 0, skipRefillRate: 0, lostDecrementRate: 0 });

    await setFaults({ errorRate: 1 });
    expect(await call(sim, '/_sim/faults.clear', {})).toEqual(NO_FAULTS);
    expect(await call(sim, '/_sim/faults.get', {})).toEqual(NO_FAULTS);
    expect(sim.engine.faults).toBeNull();
    expect((await postJson(sim.url, '/v2/apis.createApi', { name: 'after clear' }, sim.rootKey)).status).toBe(200);
  });

  test('schema violations → 400 with the field, and the configuration stays as it was', async () => {
    const before = await setFaults({ overAdmitRate: 0.5, operations: ['keys.verifyKey'] });
    const cases: Array<{ body: unknown; location: string }> = [
      { body: { errorRate: 1.5 }, location: 'body.errorRate' },
      { body: { dropRate: -0.1 }, location: 'body.dropRate' },
      { body: { overAdmitRate: '0.5' }, location: 'body.overAdmitRate' },
      { body: { skipRefillRate: null }, location: 'body.skipRefillRate' },
      { body: { lostDecrementRate: 2 }, location: 'body.lostDecrementRate' },
      { body: { latencyMs: 60_001 }, location: 'body.latencyMs' },
      { body: { latencyMs: -1 }, location: 'body.latencyMs' },
      { body: { latencyMs: 'slow' }, location: 'body.latencyMs' },
      { body: { latencyMs: { min: 5 } }, location: 'body.latencyMs.max' },
      { body: { latencyMs: { min: 10, max: 5 } }, location: 'body.latencyMs.max' },
      { body: { latencyMs: { mean: 10, stddev: 70_000 } }, location: 'body.latencyMs.stddev' },
      { body: { errorRate: 0.6, dropRate: 0.6 }, location: 'body.dropRate' },
      { body: { operations: [] }, location: 'body.operations' },
      { body: { operations: 'keys.verifyKey' }, location: 'body.operations' },
      { body: { operations: ['keys.verifyKey', 'keys.nope'] }, location: 'body.operations[1]' },
      { body: { operations: ['_sim.reset'] }, location: 'body.operations[0]' },
      { body: { errorRate: 0.1, bogus: true }, location: 'body.bogus' },
    ];
    for (const c of cases) {
      const answer = await postJson(sim.url, '/_sim/faults.set', c.body, sim.rootKey);
      expectV2Error(answer, 400, 'application/invalid_input');
      expect(locationsOf(answer), JSON.stringify(c.body)).toContain(c.location);
      expect(await call(sim, '/_sim/faults.get', {}), JSON.stringify(c.body)).toEqual(before);
    }
    // Bounds are inclusive.
    expect(await setFaults({ latencyMs: 0, errorRate: 0.5, dropRate: 0.5 })).toMatchObject({ errorRate: 0.5, dropRate: 0.5 });
    await setFaults({ latencyMs: { min: 0, max: 0 } });
  });

  test('the admin routes need a valid root key like every other', async () => {
    expectV2Error(await postJson(sim.url, '/_sim/faults.set', { errorRate: 1 }, null), 400, 'authentication/missing');
    expectV2Error(await postJson(sim.url, '/_sim/faults.set', { errorRate: 1 }, 'root_unknown_0000000000'), 401, 'authentication/key_not_found');
    expect(await call(sim, '/_sim/faults.get', {})).toEqual(NO_FAULTS);
  });
});

describe('transport faults', () => {
  test('latencyMs: the median answer time is at least the fixed latency (and without it, well below)', async () => {
    const { key } = await limitedKey(100);
    const verify = () => timed(() => postJson(sim.url, '/v2/keys.verifyKey', { key }, null));
    const baseline: number[] = [];
    for (let i = 0; i < 5; i++) baseline.push((await verify()).ms);
    expect(median(baseline)).toBeLessThan(150);

    await setFaults({ latencyMs: 200 });
    const slow: number[] = [];
    for (let i = 0; i < 5; i++) {
      const { ms, value } = await verify();
      expect(value.status).toBe(200);
      slow.push(ms);
    }
    // Timers may fire a millisecond early by rounding.
    expect(median(slow)).toBeGreaterThanOrEqual(199);

    await setFaults({ latencyMs: { min: 120, max: 160 } });
    const uniform: number[] = [];
    for (let i = 0; i < 5; i++) uniform.push((await verify()).ms);
    expect(Math.min(...uniform)).toBeGreaterThanOrEqual(119);
  });

  test('errorRate 1: every operation answers a 500 envelope (v1 its own shape) and nothing is executed', async () => {
    const { keyId, key } = await limitedKey(5);
    const before = snapshotText();
    await setFaults({ errorRate: 1 });
    const v2 = [
      await postJson(sim.url, '/v2/keys.verifyKey', { key }, null),
      await postJson(sim.url, '/v2/keys.verifyKey', { key, credits: { cost: 5 } }, sim.rootKey),
      await postJson(sim.url, '/v2/apis.createApi', { name: 'never' }, sim.rootKey),
      await postJson(sim.url, '/v2/keys.updateCredits', { keyId, operation: 'set', value: 99 }, sim.rootKey),
      await postJson(sim.url, '/v2/ratelimit.limit', { namespace: 'nope', identifier: 'a', limit: 1, duration: 1000 }, sim.rootKey),
    ];
    for (const answer of v2) {
      const error = expectV2Error(answer, 500, 'application/unexpected_error');
      expect(error.title).toBe('Internal Server Error');
      expect(error.detail).toMatch(/injected fault/i);
    }
    expectV1Error(await postJson(sim.url, '/v1/identities.createIdentity', { externalId: 'never' }, sim.rootKey), 500);
    expectV1Error(await send(sim.url, '/v1/identities.listIdentities', { method: 'GET', headers: { authorization: `Bearer ${sim.rootKey}` } }), 500);
    expect(snapshotText()).toBe(before);

    await call(sim, '/_sim/faults.clear', {});
    expect(await call(sim, '/v2/keys.verifyKey', { key })).toMatchObject({ valid: true, credits: 4 });
  });

  test('dropRate 1: the client sees its connection closed without an answer, and the state is unchanged', async () => {
    const { key } = await limitedKey(5);
    const before = snapshotText();
    await setFaults({ dropRate: 1 });
    for (const [path, body] of [
      ['/v2/keys.verifyKey', { key }],
      ['/v2/apis.createApi', { name: 'never' }],
      ['/v2/identities.createIdentity', { externalId: 'never' }],
    ] as const) {
      expect(await socketError(postJson(sim.url, path, body, sim.rootKey)), path).toMatch(/^(UND_ERR_SOCKET|ECONNRESET)$/);
    }
    expect(snapshotText()).toBe(before);
    expect((await send(sim.url, '/_sim/health', { method: 'GET' })).status).toBe(200);
    await call(sim, '/_sim/faults.clear', {});
    expect(await call(sim, '/v2/keys.verifyKey', { key })).toMatchObject({ valid: true, credits: 4 });
  });

  test('operations limits the faults to the listed operations', async () => {
    const { apiId, keyId, key } = await limitedKey(5);
    await setFaults({ errorRate: 1, operations: ['keys.verifyKey'] });
    expectV2Error(await postJson(sim.url, '/v2/keys.verifyKey', { key }, null), 500, 'application/unexpected_error');
    expect(await call(sim, '/v2/keys.getKey', { keyId })).toMatchObject({ keyId, credits: { remaining: 5 } });
    await call(sim, '/v2/keys.createKey', { apiId });
    expect((await send(sim.url, '/v1/identities.listIdentities', { method: 'GET', headers: { authorization: `Bearer ${sim.rootKey}` } })).status).toBe(200);

    await setFaults({ dropRate: 1, operations: ['v1.identities.getIdentity'] });
    expect(await call(sim, '/v2/keys.verifyKey', { key })).toMatchObject({ valid: true, credits: 4 });
    await socketError(send(sim.url, '/v1/identities.getIdentity?externalId=x', { method: 'GET', headers: { authorization: `Bearer ${sim.rootKey}` } }));
  });

  test('the admin surface, /_sim/health, /openapi.json, 404s and 405s are never faulted', async () => {
    await setFaults({ errorRate: 1 });
    expect((await send(sim.url, '/_sim/health', { method: 'GET' })).status).toBe(200);
    expect((await send(sim.url, '/openapi.json', { method: 'GET' })).status).toBe(200);
    expectV2Error(await postJson(sim.url, '/v2/keys.nope', {}, sim.rootKey), 404);
    expectV2Error(await send(sim.url, '/v2/keys.verifyKey', { method: 'GET' }), 405);
    for (const path of ['/_sim/clock.get', '/_sim/faults.get', '/_sim/snapshot']) {
      expect((await postJson(sim.url, path, {}, sim.rootKey)).status, path).toBe(200);
    }
    await call(sim, '/_sim/clock.advance', { byMs: 1000 });
    await call(sim, '/_sim/namespaces.create', { name: 'admin-ok' });

    await setFaults({ dropRate: 1, latencyMs: 400 });
    const { ms, value } = await timed(() => postJson(sim.url, '/_sim/clock.get', {}, sim.rootKey));
    expect(value.status).toBe(200);
    expect(ms).toBeLessThan(300);
    expect(await call(sim, '/_sim/faults.clear', {})).toEqual(NO_FAULTS);
  });

  test('POST /_sim/reset clears the faults, and so does reset() of the programmatic API', async () => {
    await setFaults({ errorRate: 1, overAdmitRate: 1 });
    await call(sim, '/_sim/reset', {});
    expect(await call(sim, '/_sim/faults.get', {})).toEqual(NO_FAULTS);
    expect(sim.engine.faults).toBeNull();
    expect((await postJson(sim.url, '/v2/apis.createApi', { name: 'after reset' }, sim.rootKey)).status).toBe(200);

    sim.faults.set({ dropRate: 1 });
    expect(sim.faults.view.dropRate).toBe(1);
    sim.reset();
    expect(sim.faults.view).toEqual(NO_FAULTS);
    expect((await postJson(sim.url, '/v2/apis.createApi', { name: 'after reset()' }, sim.rootKey)).status).toBe(200);
  });
});

describe('wrong behaviour through the HTTP simulator', () => {
  test('overAdmitRate, lostDecrementRate and skipRefillRate set over HTTP act on verifications and refills', async () => {
    const exhausted = await limitedKey(0);
    await setFaults({ overAdmitRate: 1 });
    expect(await call(sim, '/v2/keys.verifyKey', { key: exhausted.key })).toMatchObject({ valid: true, code: 'VALID', credits: 0 });

    const ten = await limitedKey(10);
    await setFaults({ lostDecrementRate: 1 });
    expect(await call(sim, '/v2/keys.verifyKey', { key: ten.key, credits: { cost: 4 } })).toMatchObject({ valid: true, credits: 6 });
    expect(await call(sim, '/v2/keys.getKey', { keyId: ten.keyId })).toMatchObject({ credits: { remaining: 10 } });

    const refilled = await limitedKey(1, { interval: 'daily', amount: 50 });
    await setFaults({ skipRefillRate: 1 });
    await call(sim, '/_sim/clock.advance', { byMs: 86_400_000 });
    expect(await call(sim, '/v2/keys.getKey', { keyId: refilled.keyId })).toMatchObject({ credits: { remaining: 1 } });

    await call(sim, '/_sim/faults.clear', {});
    expect(await call(sim, '/v2/keys.verifyKey', { key: exhausted.key })).toMatchObject({ valid: false, code: 'USAGE_EXCEEDED' });
  });

  test('the operations filter applies to the engine faults too', async () => {
    const exhausted = await limitedKey(0);
    await setFaults({ overAdmitRate: 1, operations: ['keys.getKey'] });
    expect(await call(sim, '/v2/keys.verifyKey', { key: exhausted.key })).toMatchObject({ valid: false, code: 'USAGE_EXCEEDED' });
    await setFaults({ overAdmitRate: 1, operations: ['keys.verifyKey'] });
    expect(await call(sim, '/v2/keys.verifyKey', { key: exhausted.key })).toMatchObject({ valid: true, code: 'VALID' });
  });
});

describe('createSimulator({ faults }) and the decisions themselves', () => {
  test('faults given at start are active at once; an invalid configuration makes createSimulator throw', async () => {
    const own = await createSimulator({ startMs: START_MS, faults: { errorRate: 1, operations: ['apis.createApi'] } });
    try {
      expectV2Error(await postJson(own.url, '/v2/apis.createApi', { name: 'x' }, own.rootKey), 500, 'application/unexpected_error');
      expect(await call(own, '/_sim/faults.get', {})).toEqual({ ...NO_FAULTS, errorRate: 1, operations: ['apis.createApi'] });
    } finally {
      await own.close();
    }
    await expect(createSimulator({ startMs: START_MS, faults: { errorRate: 2 } })).rejects.toThrow(/faults\.errorRate/);
    await expect(createSimulator({ startMs: START_MS, faults: { operations: ['nope'] } })).rejects.toThrow(/faults\.operations\[0\]/);
  });

  function injector(config: FaultsConfig): FaultInjector {
    const faults = new FaultInjector(new Engine({ clock: new ManualClock(START_MS), seed: 3 }), 3, OPERATIONS);
    const set = faults.set(config);
    if (!set.ok) throw new Error(set.error.detail);
    return faults;
  }

  test('errorRate and dropRate are shares of the requests, from one draw, reproducible from the seed', () => {
    const faults = injector({ errorRate: 0.3, dropRate: 0.2 });
    const outcomes = () => Array.from({ length: 5000 }, () => faults.decide('keys.verifyKey')?.outcome ?? 'execute');
    const first = outcomes();
    const count = (o: string) => first.filter((x) => x === o).length / first.length;
    expect(count('error')).toBeGreaterThan(0.27);
    expect(count('error')).toBeLessThan(0.33);
    expect(count('drop')).toBeGreaterThan(0.17);
    expect(count('drop')).toBeLessThan(0.23);
    faults.set({ errorRate: 0.3, dropRate: 0.2 });
    expect(outcomes()).toEqual(first);
    // Requests outside the filter, and no faults at all, are never touched.
    faults.set({ errorRate: 1, operations: ['keys.getKey'] });
    expect(faults.decide('keys.verifyKey')).toBeNull();
    expect(faults.decide('keys.getKey')).toEqual({ delayMs: 0, outcome: 'error' });
    faults.clear();
    expect(faults.active).toBe(false);
    expect(faults.decide('keys.getKey')).toBeNull();
  });

  test('latency distributions: uniform within its bounds, normal with its mean and spread, clamped at 0', () => {
    const draws = (config: FaultsConfig) => {
      const faults = injector(config);
      return Array.from({ length: 4000 }, () => faults.decide('keys.verifyKey')?.delayMs ?? 0);
    };
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const sd = (xs: number[]) => Math.sqrt(mean(xs.map((x) => (x - mean(xs)) ** 2)));

    const uniform = draws({ latencyMs: { min: 10, max: 30 } });
    expect(Math.min(...uniform)).toBeGreaterThanOrEqual(10);
    expect(Math.max(...uniform)).toBeLessThanOrEqual(30);
    expect(mean(uniform)).toBeGreaterThan(19);
    expect(mean(uniform)).toBeLessThan(21);

    const normal = draws({ latencyMs: { mean: 50, stddev: 10 } });
    expect(mean(normal)).toBeGreaterThan(49);
    expect(mean(normal)).toBeLessThan(51);
    expect(sd(normal)).toBeGreaterThan(9);
    expect(sd(normal)).toBeLessThan(11);

    const clamped = draws({ latencyMs: { mean: 0, stddev: 10 } });
    expect(Math.min(...clamped)).toBe(0);
    const zeros = clamped.filter((x) => x === 0).length / clamped.length;
    expect(zeros).toBeGreaterThan(0.45);
    expect(zeros).toBeLessThan(0.55);
    expect(draws({ latencyMs: 7 }).every((x) => x === 7)).toBe(true);
  });

  test('--fault flags parse into the configuration /_sim/faults.set takes', () => {
    expect(
      parseFaultFlags(['errorRate=0.05', 'latencyMs=20', 'overAdmitRate=0.01', 'operations=keys.verifyKey', 'operations=keys.getKey,ratelimit.limit']),
    ).toEqual({
      ok: true,
      config: { errorRate: 0.05, latencyMs: 20, overAdmitRate: 0.01, operations: ['keys.verifyKey', 'keys.getKey', 'ratelimit.limit'] },
    });
    expect(parseFaultFlags(['latencyMs=5..50'])).toEqual({ ok: true, config: { latencyMs: { min: 5, max: 50 } } });
    expect(parseFaultFlags(['latencyMs=20~5', 'latencyMs=2.5'])).toEqual({ ok: true, config: { latencyMs: 2.5 } });
    for (const bad of ['bogus=1', 'errorRate', 'errorRate=', 'errorRate=lots', 'latencyMs=fast', 'latencyMs=5-50']) {
      const parsed = parseFaultFlags([bad]);
      expect(parsed.ok, bad).toBe(false);
      if (!parsed.ok) expect(parsed.message, bad).toContain('latencyMs, errorRate, dropRate');
    }
    expect(OPERATIONS).toContain('keys.verifyKey');
    expect(OPERATIONS.some((op) => op.startsWith('_sim'))).toBe(false);
  });
});

// ---------------------------------------------------------------------------------------------
// keysim serve --fault, as a child process (run from the sources with tsx).
// ---------------------------------------------------------------------------------------------

// A CLI process starting through tsx (three at once in one test) can take most of 20 s on a busy
// machine — a run beside other suites timed out at 20 s — so the bounds only catch a hang.
describe('keysim serve --fault', { timeout: 180_000 }, () => {
  const REPO = fileURLToPath(new URL('../..', import.meta.url));
  const STARTUP_MS = 90_000;
  type Child = ChildProcessByStdio<null, Readable, Readable>;
  const children: Child[] = [];

  function spawnCli(args: string[]): { child: Child; stdout: () => string; stderr: () => string } {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], { cwd: REPO, env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(child);
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
    return { child, stdout: () => out, stderr: () => err };
  }

  function exited(child: Child): Promise<number | string> {
    if (child.exitCode !== null) return Promise.resolve(child.exitCode);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('the child did not exit in time')), STARTUP_MS);
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        resolve(code ?? signal ?? 'unknown');
      });
    });
  }

  async function waitFor(run: { stdout: () => string; stderr: () => string; child: Child }, pattern: RegExp): Promise<RegExpExecArray> {
    const deadline = Date.now() + STARTUP_MS;
    for (;;) {
      const match = pattern.exec(run.stdout());
      if (match !== null) return match;
      if (run.child.exitCode !== null || Date.now() > deadline)
        throw new Error(`stdout never matched ${String(pattern)}:\n${run.stdout()}\nstderr: ${run.stderr()}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  afterEach(() => {
    for (const child of children.splice(0)) {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  });

  test('--fault errorRate=1: a v2 call answers 500 while /_sim/health and the admin surface answer; SIGTERM stops it', async () => {
    const rootKey = 'root_fault_1234567';
    const run = spawnCli(['serve', '--port', '0', '--clock', 'manual', '--root-key', rootKey, '--fault', 'errorRate=1', '--fault', 'latencyMs=1..2']);
    const url = (await waitFor(run, /listening on (http:\/\/[^\s:]+:\d+)/))[1] as string;
    await waitFor(run, /injected faults[^:]*: latencyMs=1\.\.2 errorRate=1/);
    expectV2Error(await postJson(url, '/v2/apis.createApi', { name: 'x' }, rootKey), 500, 'application/unexpected_error');
    expect((await send(url, '/_sim/health', { method: 'GET' })).status).toBe(200);
    expect(await call({ url, rootKey }, '/_sim/faults.get', {})).toEqual({ ...NO_FAULTS, errorRate: 1, latencyMs: { min: 1, max: 2 } });
    await call({ url, rootKey }, '/_sim/faults.clear', {});
    expect((await postJson(url, '/v2/apis.createApi', { name: 'x' }, rootKey)).status).toBe(200);
    run.child.kill('SIGTERM');
    expect(await exited(run.child)).toBe(EXIT.ok);
  });

  test('a bad --fault exits 2 and names the valid keys', async () => {
    const cases = [
      ['--fault', 'bogus=1'],
      ['--fault', 'errorRate=1.5'],
      ['--fault', 'latencyMs=fast'],
    ];
    const results = await Promise.all(
      cases.map(async (args) => {
        const run = spawnCli(['serve', '--port', '0', ...args]);
        return { args, code: await exited(run.child), stderr: run.stderr(), stdout: run.stdout() };
      }),
    );
    for (const r of results) {
      expect(r.code, `${r.args.join(' ')}: ${r.stderr}`).toBe(EXIT.usage);
      expect(r.stderr, r.args.join(' ')).toContain('latencyMs, errorRate, dropRate, overAdmitRate, skipRefillRate, lostDecrementRate, operations');
      expect(r.stdout).not.toContain('listening on');
    }
  });
});
