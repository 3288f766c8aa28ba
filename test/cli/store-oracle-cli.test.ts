/**
 * A store-backed simulator judged end to end, as a user runs it: one real Redis, two `keysim serve
 * --store` replicas of one simulator (real processes, port 0, manual clock, seed 7), then `keysim
 * run credits-drain --history` against replica A (--target takes one URL). The oracle replays the
 * run's journal through a fresh engine and agrees with every answer, `keysim check` of the saved
 * run agrees too, and replica B, which served nothing, holds the same state as A.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { EXIT } from '../../src/cli/exit-codes.js';
import { cleanUpCli, cli, runFolders, tempDir } from '../helpers/cli.js';
import { type RedisServer, startRedis } from '../helpers/redis-server.js';
import { type ServedSimulator, serveCli } from '../helpers/serve-cli.js';

const ROOT_KEY = 'root_store_oracle_cli_0123456789abcdef';
let redis: RedisServer;
const replicas: ServedSimulator[] = [];

beforeAll(async () => {
  redis = await startRedis();
  for (let i = 0; i < 2; i++) replicas.push(await serveCli(ROOT_KEY, ['--store', redis.url, '--seed', '7', '--clock', 'manual']));
}, 60_000);

afterAll(async () => {
  for (const replica of replicas) await replica.stop();
  cleanUpCli();
  await redis.close();
});

/** The replica's whole state (its snapshot), as the operator reads it. */
async function snapshotOf(url: string): Promise<unknown> {
  const res = await fetch(`${url}/_sim/snapshot`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ROOT_KEY}`, 'content-type': 'application/json' },
    body: '{}',
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { data: unknown }).data;
}

test('credits-drain with --history on a replica of a Redis-backed simulator: exit 0, the oracle agrees with 0 differences, keysim check of the saved run agrees, and the other replica holds the same state', async () => {
  const [a, b] = replicas as [ServedSimulator, ServedSimulator];
  const out = tempDir('keysim-store-oracle-');
  // Pace-free: a busy machine's late sends must not turn the verdict into a generator-limited one.
  const args = ['run', 'credits-drain', '--target', a.url, '--history', '--out', out, '--yes', '--max-late-share', '1', '--max-loop-delay', 'off'];
  const run = await cli(args, a.env);
  expect(run.code, run.stdout + run.stderr).toBe(EXIT.ok);
  expect(run.stdout).toMatch(/pass {2}oracle: [1-9]\d* answers compared with a replay through a fresh engine, 0 differ/);
  const [folder] = runFolders(out);
  const report = JSON.parse(readFileSync(join(folder as string, 'report.json'), 'utf8')) as {
    invariants: { oracle?: { verdict: string; differences: number; compared: number } };
  };
  expect(report.invariants.oracle).toMatchObject({ verdict: 'agrees', differences: 0 });
  expect(report.invariants.oracle?.compared).toBeGreaterThan(50);

  const again = await cli(['check', folder as string], a.env);
  expect(again.code, again.stdout + again.stderr).toBe(EXIT.ok);
  expect(again.stdout).toMatch(/oracle {2}agrees: [1-9]\d* answers compared with a replay of the saved journal/);

  // B applied the same log: its state is A's, random state and ids included.
  const [stateA, stateB] = [await snapshotOf(a.url), await snapshotOf(b.url)];
  // The run cleaned its keys up; its API stays, and the random state has moved past the start.
  expect((stateA as { apis: Array<{ name: string }> }).apis.map((api) => api.name)).toEqual([expect.stringMatching(/credits-drain$/)]);
  expect(stateB).toEqual(stateA);
}, 170_000);
