/**
 * The two-replica set-up as README.md and docs/simulator.md show it, in their three commands, run
 * as written: ports replaced by free ones and `keysim` by the built CLI, each command in the
 * background as its `&` says. The two replicas then answer as one simulator.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { afterAll, expect, test } from 'vitest';
import { cleanUpCli, startCli, waitUntil } from '../helpers/cli.js';
import { freePort } from '../helpers/nginx.js';

const repo = new URL('../../', import.meta.url);
/**
 * The banner's last line: the banner comes in several writes, and a test that read on at
 * "listening on" once found the operator root key's line not there yet.
 */
const BANNER_DONE = /Ctrl-C stops\./;
const spawned: ChildProcess[] = [];

afterAll(() => {
  for (const child of spawned) if (child.exitCode === null) child.kill('SIGKILL');
  cleanUpCli();
});

/** The first shell block after `marker` in a document, one command a line. */
function commandsAfter(doc: string, marker: string): string[] {
  const text = readFileSync(new URL(doc, repo), 'utf8');
  const from = text.indexOf(marker);
  expect(from, `${doc} has "${marker}"`).toBeGreaterThan(-1);
  const block = /```sh\n([\s\S]*?)```/.exec(text.slice(from));
  expect(block, `${doc} has a sh block after "${marker}"`).not.toBeNull();
  return (block as RegExpExecArray)[1]!.trim().split('\n');
}

/** A command's words as the shell splits them (these commands quote only the empty string). */
function words(command: string): string[] {
  return command
    .replace(/\s*&$/, '')
    .split(/\s+/)
    .map((word) => (word === "''" ? '' : word));
}

async function call(url: string, rootKey: string, path: string, body: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${rootKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

test('the README and docs/simulator.md show the same three commands, and they start two replicas of one simulator', async () => {
  const docs = commandsAfter('docs/simulator.md', '### Replicas on Redis');
  const readme = commandsAfter('README.md', 'Two replicas in three commands');
  expect(readme.map((line) => line.replace(/^npx /, ''))).toEqual(docs);
  expect(docs).toHaveLength(3);
  // Started at once, the replicas race to write the store's start state: with different options
  // the winner decided the clock (once the second command lacked --clock manual, and it ran).
  expect(docs[2]?.replace(/--port \d+/, ''), 'the two replicas are started with the same options').toBe(docs[1]?.replace(/--port \d+/, ''));

  const ports = new Map([
    ['6379', String(await freePort())],
    ['8787', String(await freePort())],
    ['8788', String(await freePort())],
  ]);
  const commands = docs.map((line) => words(line.replace(/\b(6379|8787|8788)\b/g, (port) => ports.get(port) as string)));
  expect(commands.map((c) => c[0])).toEqual(['redis-server', 'keysim', 'keysim']);

  const redis = spawn(commands[0]![0]!, commands[0]!.slice(1), { cwd: new URL('.', import.meta.url), stdio: ['ignore', 'pipe', 'pipe'] });
  spawned.push(redis);
  let redisOut = '';
  redis.stdout?.on('data', (chunk: Buffer) => (redisOut += chunk.toString()));
  redis.stderr?.on('data', (chunk: Buffer) => (redisOut += chunk.toString()));
  // The shell starts all three at once: the replicas try to reach Redis until it answers.
  const replicas = [commands[1]!, commands[2]!].map((c) => startCli(c.slice(1)));
  // What went on, for a failure's message: another process may have taken a free port first.
  const told = () =>
    `redis-server (exit ${String(redis.exitCode)}): ${redisOut.slice(-1500)}\n` +
    replicas.map((r, i) => `replica ${i + 1} (exit ${String(r.child.exitCode)}):\n${r.stdout()}\n${r.stderr()}`).join('\n');
  for (const replica of replicas) {
    await waitUntil(() => BANNER_DONE.test(replica.stdout()) || replica.child.exitCode !== null, 'the replica to listen').catch((error: unknown) => {
      throw new Error(`${String(error)}\n${told()}`);
    });
  }
  // A replica that started before Redis was listening gave up with the reason: start it again, as a user would.
  const running = await Promise.all(
    replicas.map(async (replica, i) => {
      if (replica.child.exitCode === null) return replica;
      expect(replica.stderr(), told()).toMatch(/cannot be reached/);
      const again = startCli(commands[i + 1]!.slice(1));
      await waitUntil(() => BANNER_DONE.test(again.stdout()), 'the replica to listen', again);
      return again;
    }),
  );
  const [a, b] = running.map((replica) => {
    const out = replica.stdout();
    return {
      url: (/listening on (http:\/\/\S+)/.exec(out) as RegExpExecArray)[1]!,
      rootKey: (/operator root key[^:]*: (\S+)/.exec(out) as RegExpExecArray)[1]!,
    };
  }) as [{ url: string; rootKey: string }, { url: string; rootKey: string }];
  expect(b.rootKey, `both replicas print the one operator root key\n${told()}`).toBe(a.rootKey);

  const api = await call(a.url, a.rootKey, '/v2/apis.createApi', { name: 'replicas' });
  expect(api, told()).toMatchObject({ status: 200 });
  const apiId = (api.json.data as { apiId: string }).apiId;
  const created = await call(a.url, a.rootKey, '/v2/keys.createKey', { apiId, credits: { remaining: 2 } });
  const key = (created.json.data as { key: string }).key;
  const verified = await call(b.url, b.rootKey, '/v2/keys.verifyKey', { key });
  expect(verified.json, told()).toMatchObject({ data: { valid: true, credits: 1 } });
  const moved = await call(b.url, b.rootKey, '/_sim/clock.advance', { byMs: 86_400_000 });
  const read = await call(a.url, a.rootKey, '/_sim/clock.get', {});
  expect(read.json.data, told()).toMatchObject({ mode: 'manual' });
  expect((read.json.data as { nowMs: number }).nowMs).toBe((moved.json.data as { nowMs: number }).nowMs);
});
