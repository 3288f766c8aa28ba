/**
 * `keysim serve` as a child process: it announces its URL, serves with the given (or env, or
 * generated) root key on the given clock, stops with exit code 0 on SIGTERM/SIGINT, and answers
 * bad flags with exit code 2 and a message on stderr. Run from the sources with tsx, so the
 * test needs no build.
 */
import { type ChildProcessByStdio, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, describe, expect, test } from 'vitest';
import { EXIT } from '../../src/cli/exit-codes.js';
import { createSimulator } from '../../src/http/index.js';
import { cleanEnv } from '../helpers/cli.js';
import { call, expectV2Error, postJson, send } from '../helpers/http.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
// Generous: under two CPU-bound neighbours (and a suite running beside) a tsx start-up has taken
// more than 20 s. A bound that only catches a hang, never a slow machine.
const STARTUP_MS = 90_000;
/** For a stop after SIGTERM/SIGINT (a second or less when idle): a bound for a hang, not a pace. */
const STOP_MS = 60_000;

type Child = ChildProcessByStdio<null, Readable, Readable>;

interface Running {
  child: Child;
  url: string;
  /** Everything written to stdout so far. */
  stdout: () => string;
  stderr: () => string;
}

const children: Child[] = [];
const dir = mkdtempSync(join(tmpdir(), 'keysim-serve-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function spawnCli(args: string[], env: NodeJS.ProcessEnv): { child: Child; stdout: () => string; stderr: () => string } {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], { cwd: REPO, env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
  return { child, stdout: () => out, stderr: () => err };
}

/** Starts `keysim serve` and waits for the `listening on http://HOST:PORT` line. */
async function serve(args: string[], env: NodeJS.ProcessEnv = cleanEnv()): Promise<Running> {
  const { child, stdout, stderr } = spawnCli(['serve', ...args], env);
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no "listening on" line within ${STARTUP_MS} ms.\nstdout: ${stdout()}\nstderr: ${stderr()}`)), STARTUP_MS);
    const check = () => {
      const match = /listening on (http:\/\/[^\s:]+:\d+)/.exec(stdout());
      if (match?.[1] !== undefined) {
        clearTimeout(timer);
        child.stdout.off('data', check);
        resolve(match[1]);
      }
    };
    child.stdout.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`keysim serve exited with ${String(code)} before listening.\nstdout: ${stdout()}\nstderr: ${stderr()}`));
    });
    check();
  });
  return { child, url, stdout, stderr };
}

/** Waits until stdout matches `pattern` (the banner comes in several writes); returns the match. */
async function output(running: Running, pattern: RegExp, ms = STARTUP_MS): Promise<RegExpExecArray> {
  const deadline = Date.now() + ms;
  for (;;) {
    const match = pattern.exec(running.stdout());
    if (match !== null) return match;
    if (Date.now() > deadline) throw new Error(`stdout never matched ${String(pattern)}:\n${running.stdout()}\nstderr: ${running.stderr()}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Resolves with the exit code (or signal name) once the child has exited; rejects after `ms`. */
function exited(child: Child, ms: number): Promise<number | string> {
  if (child.exitCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the child did not exit within ${ms} ms`)), ms);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      resolve(code ?? signal ?? 'unknown');
    });
  });
}

function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
}

afterEach(() => {
  // Only the children this file started, and only those still running.
  for (const child of children.splice(0)) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
});

describe('keysim serve', { timeout: 300_000 }, () => {
  test('with --root-key, a manual clock and --start: announces the URL, serves, stops with 0 on SIGTERM', async () => {
    const rootKey = 'root_test_1234567';
    const running = await serve(['--port', '0', '--clock', 'manual', '--start', '2028-02-28T23:59:59.999Z', '--root-key', rootKey]);
    expect(running.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    await output(running, /clock: manual, at 2028-02-28T23:59:59\.999Z/);
    await output(running, /OpenAPI document/);
    expect(running.stdout()).not.toContain('generated');
    const target = { url: running.url, rootKey };

    expect(await call(target, '/_sim/clock.get', {})).toEqual({
      nowMs: Date.parse('2028-02-28T23:59:59.999Z'),
      iso: '2028-02-28T23:59:59.999Z',
      mode: 'manual',
    });
    const { apiId } = await call<{ apiId: string }>(target, '/v2/apis.createApi', { name: 'cli' });
    const { key } = await call<{ key: string }>(target, '/v2/keys.createKey', {
      apiId,
      credits: { remaining: 1, refill: { interval: 'monthly', amount: 10, refillDay: 31 } },
    });
    expect(await call(target, '/v2/keys.verifyKey', { key })).toMatchObject({ valid: true, credits: 0 });
    await call(target, '/_sim/clock.advance', { byMs: 1 });
    expect(await call(target, '/v2/keys.verifyKey', { key })).toMatchObject({ valid: true, credits: 9 });
    expectV2Error(await postJson(running.url, '/v2/apis.createApi', { name: 'x' }, 'root_other_1234567'), 401, 'authentication/key_not_found');

    const port = Number(new URL(running.url).port);
    running.child.kill('SIGTERM');
    expect(await exited(running.child, STOP_MS)).toBe(EXIT.ok);
    expect(running.stdout()).toContain('SIGTERM, stopping');
    expect(await refused(port)).toBe(true);
  });

  test('KEYSIM_ROOT_KEY sets the root key when --root-key is not given', async () => {
    const rootKey = 'root_env_7654321';
    const running = await serve(['--port', '0', '--clock', 'manual'], cleanEnv({ KEYSIM_ROOT_KEY: rootKey }));
    await output(running, /OpenAPI document/);
    expect(running.stdout()).not.toContain('generated');
    await call({ url: running.url, rootKey }, '/v2/apis.createApi', { name: 'env' });
    running.child.kill('SIGTERM');
    expect(await exited(running.child, STOP_MS)).toBe(EXIT.ok);
  });

  test('without a root key the generated one is printed and works; the system clock runs; SIGINT stops with 0', async () => {
    const running = await serve(['--port', '0']);
    const rootKey = (await output(running, /root key \(generated[^)]*\): (\S+)/))[1] ?? '';
    expect(rootKey).toMatch(/^\S{8,}$/);
    const target = { url: running.url, rootKey };
    const clock = await call<{ nowMs: number; mode: string }>(target, '/_sim/clock.get', {});
    expect(clock.mode).toBe('system');
    expect(Math.abs(clock.nowMs - Date.now())).toBeLessThan(60_000);
    await call(target, '/v2/apis.createApi', { name: 'generated' });
    expectV2Error(await postJson(running.url, '/v2/apis.createApi', { name: 'x' }, null), 400, 'authentication/missing');

    running.child.kill('SIGINT');
    expect(await exited(running.child, STOP_MS)).toBe(EXIT.ok);
  });

  test('bad flags exit with code 2 and say what is wrong on stderr', async () => {
    const cases: Array<{ args: string[]; mentions: string }> = [
      { args: ['serve', '--port', 'abc'], mentions: '--port' },
      { args: ['serve', '--port', '70000'], mentions: '--port' },
      { args: ['serve', '--start', 'yesterday'], mentions: '--start' },
      // Unix ms past the last instant a Date can show (8.64e15).
      { args: ['serve', '--start', String(Number.MAX_SAFE_INTEGER)], mentions: '--start' },
      { args: ['serve', '--clock', 'sundial'], mentions: 'clock' },
      { args: ['serve', '--bogus-flag'], mentions: 'bogus-flag' },
      { args: ['serve', '--profile', 'production', '--workers', '2'], mentions: '--profile production runs in one process' },
      { args: ['serve', '--regions', '3'], mentions: 'add --profile production' },
      { args: ['serve', '--profile', 'production', '--regions', '0'], mentions: '--regions must be an integer from 1 to 16' },
    ];
    const results: Array<(typeof cases)[number] & { code: number | string; stderr: string; stdout: string }> = [];
    // Three at a time: the machine has two cores.
    for (let i = 0; i < cases.length; i += 3) {
      const batch = await Promise.all(
        cases.slice(i, i + 3).map(async (c) => {
          const run = spawnCli(c.args, cleanEnv());
          return { ...c, code: await exited(run.child, STARTUP_MS), stderr: run.stderr(), stdout: run.stdout() };
        }),
      );
      results.push(...batch);
    }
    expect(results).toHaveLength(cases.length);
    for (const r of results) {
      expect(r.code, `${r.args.join(' ')}: ${r.stderr}`).toBe(EXIT.usage);
      expect(r.stderr, r.args.join(' ')).toContain(r.mentions);
      expect(r.stdout, r.args.join(' ')).not.toContain('listening on');
    }
  });
  test('--profile production --regions 3: the banner, /_sim/health and every answer name the regions; X-Keysim-Region picks one', async () => {
    const rootKey = 'root_test_regions_1';
    const running = await serve(['--port', '0', '--clock', 'manual', '--seed', '7', '--root-key', rootKey, '--profile', 'production', '--regions', '3']);
    await output(running, /profile: production, 3 regions/);
    await output(running, /compat: production/);
    const health = await send(running.url, '/_sim/health', { method: 'GET', headers: { 'x-keysim-region': '3' } });
    expect(health.body).toMatchObject({ status: 'ok', profile: 'production', regions: 3 });
    expect(health.headers['x-keysim-region']).toBe('3');
    const answer = await send(running.url, '/v2/apis.createApi', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${rootKey}`, 'x-keysim-region': '2' },
      body: JSON.stringify({ name: 'regions' }),
    });
    expect(answer.status).toBe(200);
    expect(answer.headers['x-keysim-region']).toBe('2');
    running.child.kill('SIGTERM');
    expect(await exited(running.child, STOP_MS)).toBe(EXIT.ok);
  });

  test('keysim serve without --root-key prints a new random root key every run; only an explicit --seed reproduces it', async () => {
    const generated = async (args: string[]) => {
      const running = await serve(['--port', '0', '--clock', 'manual', ...args]);
      const rootKey = (await output(running, /root key \(generated[^)]*\): (\S+)/))[1] ?? '';
      // The printed key is the operator's: it runs the admin surface.
      expect(await call({ url: running.url, rootKey }, '/_sim/clock.get', {})).toMatchObject({ mode: 'manual' });
      running.child.kill('SIGTERM');
      expect(await exited(running.child, STOP_MS)).toBe(EXIT.ok);
      return { rootKey, stdout: running.stdout() };
    };
    const [first, second] = await Promise.all([generated([]), generated([])]);
    expect(first.rootKey).toMatch(/^root_\S{20,}$/);
    expect(second.rootKey).not.toBe(first.rootKey);
    expect(first.stdout).toMatch(/seed: \d+ \(random\)/);
    const [seeded, again] = await Promise.all([generated(['--seed', '42']), generated(['--seed', '42'])]);
    expect(again.rootKey).toBe(seeded.rootKey);
    expect(seeded.rootKey).not.toBe(first.rootKey);
    expect(seeded.stdout).toContain('from --seed 42');
  });

  test('keysim serve --restore FILE starts from a snapshot larger than the HTTP body limit; a bad file exits 2 and says why', async () => {
    const rootKey = 'root_restore_0123456';
    const source = await createSimulator({ rootKey, seed: 3 });
    let snapshotAnswer: string;
    let keyId: string;
    try {
      const { apiId } = await call<{ apiId: string }>(source, '/v2/apis.createApi', { name: 'restored' });
      keyId = (await call<{ keyId: string }>(source, '/v2/keys.createKey', { apiId, name: 'k'.repeat(200), meta: { filler: 'x'.repeat(4000) } })).keyId;
      // Saved as a client would: the whole answer of /_sim/snapshot.
      snapshotAnswer = (await postJson(source.url, '/_sim/snapshot', {}, rootKey)).text;
    } finally {
      await source.close();
    }
    const good = join(dir, 'state.json');
    writeFileSync(good, snapshotAnswer);
    expect(snapshotAnswer.length).toBeGreaterThan(4096);
    const running = await serve(['--port', '0', '--clock', 'manual', '--max-body-bytes', '4096', '--root-key', rootKey, '--restore', good]);
    await output(running, /state restored from/);
    expect(await call({ url: running.url, rootKey }, '/v2/keys.getKey', { keyId })).toMatchObject({ keyId, name: 'k'.repeat(200) });
    running.child.kill('SIGTERM');
    expect(await exited(running.child, STOP_MS)).toBe(EXIT.ok);

    writeFileSync(join(dir, 'not-json.json'), '{"format": "keysim-engine-snapshot", ');
    writeFileSync(join(dir, 'not-a-snapshot.json'), JSON.stringify({ format: 'nope' }));
    const cases: Array<{ args: string[]; mentions: RegExp }> = [
      { args: ['--root-key', rootKey, '--restore', join(dir, 'missing.json')], mentions: /no such file/ },
      { args: ['--root-key', rootKey, '--restore', join(dir, 'not-json.json')], mentions: /is not JSON/ },
      { args: ['--root-key', rootKey, '--restore', join(dir, 'not-a-snapshot.json')], mentions: /cannot be restored/ },
      { args: ['--root-key', 'root_someone_else_000', '--restore', good], mentions: /operator/ },
      { args: ['--restore', good], mentions: /needs the operator's root key/ },
    ];
    for (let i = 0; i < cases.length; i += 3) {
      const batch = await Promise.all(
        cases.slice(i, i + 3).map(async (c) => {
          const run = spawnCli(['serve', '--port', '0', ...c.args], cleanEnv());
          return { ...c, code: await exited(run.child, STARTUP_MS), stderr: run.stderr(), stdout: run.stdout() };
        }),
      );
      for (const r of batch) {
        expect(r.code, `${r.args.join(' ')}: ${r.stderr}`).toBe(EXIT.usage);
        expect(r.stderr, r.args.join(' ')).toMatch(r.mentions);
        expect(r.stderr, r.args.join(' ')).toContain('--restore');
        expect(r.stdout, r.args.join(' ')).not.toContain('listening on');
      }
    }
  });
});
