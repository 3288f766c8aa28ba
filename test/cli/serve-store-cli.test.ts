/**
 * `keysim serve --store`: the flags it cannot go with exit 2 with a message that says what to do;
 * a store that cannot be reached ends the start at once (exit 1, the URL named), not a silent
 * wait; the first replica on a store says so, the next one says it joined and prints the same
 * operator root key; KEYSIM_STORE is --store. A real redis-server on loopback, one for the file.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { EXIT } from '../../src/cli/exit-codes.js';
import { type Running, cleanEnv, cleanUpCli, cli, startCli, waitUntil } from '../helpers/cli.js';
import { postJson } from '../helpers/http.js';
import { freePort } from '../helpers/nginx.js';
import { type RedisServer, startRedis } from '../helpers/redis-server.js';

let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  cleanUpCli();
  await redis?.close();
});

/** `keysim serve --port 0 ARGS` once its banner is whole (the line that ends it). */
async function replica(args: string[], env = cleanEnv()): Promise<Running> {
  const running = startCli(['serve', '--port', '0', ...args], env);
  await waitUntil(() => running.stdout().includes('Ctrl-C stops'), 'the replica to listen', running);
  return running;
}

async function stop(running: Running): Promise<void> {
  running.child.kill('SIGTERM');
  const { code } = await running.exited;
  expect(code).toBe(EXIT.ok);
}

const urlOf = (running: Running) => (/listening on (http:\/\/\S+)/.exec(running.stdout()) as RegExpExecArray)[1] as string;
const rootKeyOf = (running: Running) => /operator root key \(generated[^)]*\): (\S+)/.exec(running.stdout())?.[1];

describe('keysim serve --store: flags it cannot go with', () => {
  test.each([
    [['--store', 'http://127.0.0.1:6379'], /--store "http:\/\/127\.0\.0\.1:6379" has the scheme "http".*give redis:\/\/HOST:PORT/],
    [['--store', 'redis://127.0.0.1'], /--store "redis:\/\/127\.0\.0\.1" names no port/],
    [['--store', 'redis://127.0.0.1:6379', '--workers', '2'], /--store runs one process per replica: leave out --workers/],
    [['--store', 'redis://127.0.0.1:6379', '--profile', 'production'], /--store runs the exact profile: leave out --profile production/],
    [['--store', 'redis://127.0.0.1:6379', '--restore', 'state.json', '--root-key', 'root_x_0123456789'], /leave out --restore.*POST \/_sim\/restore/],
    [['--store-prefix', 'mine'], /--store-prefix applies to a store-backed simulator only: add --store/],
    [['--store-checkpoint-every', '100'], /--store-checkpoint-every applies to a store-backed simulator only: add --store/],
    [['--store', 'redis://127.0.0.1:6379', '--store-checkpoint-every', '0'], /--store-checkpoint-every must be an integer from 1 to 10000000, got 0/],
    [['--store', 'redis://127.0.0.1:6379', '--store-checkpoint-every', '2.5'], /--store-checkpoint-every must be an integer from 1 to 10000000, got 2\.5/],
  ])('serve %j exits 2 with a message saying what to change', async (args, message) => {
    const result = await cli(['serve', '--port', '0', ...args]);
    expect(result.code, result.stdout).toBe(EXIT.usage);
    expect(result.stderr).toMatch(message);
    expect(result.stdout).not.toContain('listening on');
  });

  test('KEYSIM_STORE is checked as --store is: a bad URL there, or --workers 2 beside it, exits 2 too', async () => {
    const badUrl = await cli(['serve', '--port', '0'], cleanEnv({ KEYSIM_STORE: 'redis:/nowhere' }));
    expect(badUrl.code).toBe(EXIT.usage);
    expect(badUrl.stderr).toMatch(/--store "redis:\/nowhere" has no scheme/);
    const workers = await cli(['serve', '--port', '0', '--workers', '2'], cleanEnv({ KEYSIM_STORE: 'redis://127.0.0.1:6379' }));
    expect(workers.code).toBe(EXIT.usage);
    expect(workers.stderr).toMatch(/--store runs one process per replica/);
  });
});

describe('keysim serve --store: the start', () => {
  test('a store nobody listens on ends the start with exit 1 and a message naming its URL (no wait for it)', async () => {
    const url = `redis://127.0.0.1:${await freePort()}`;
    const started = Date.now();
    const result = await cli(['serve', '--port', '0', '--store', url]);
    const tookMs = Date.now() - started;
    expect(result.code).toBe(EXIT.failure);
    expect(result.stderr).toContain(`the store ${url} cannot be reached`);
    expect(result.stderr).toMatch(/Start Redis there, or give the right --store URL/);
    expect(result.stdout).not.toContain('listening on');
    // A bound for a hang only (a node-redis that retried for ever would never end): the start gives
    // up after three refused connections, well under a second on an idle machine.
    expect(tookMs).toBeLessThan(100_000);
  });

  test('an unreachable store said "cannot start: cannot start the simulator": the reason is said once', async () => {
    const result = await cli(['serve', '--port', '0', '--store', `redis://127.0.0.1:${await freePort()}`]);
    expect(result.code).toBe(EXIT.failure);
    expect(result.stderr).toMatch(/^keysim serve: cannot start: the store redis:\/\/\S+ cannot be reached/m);
    expect(result.stderr).not.toContain('cannot start: cannot start');
  });

  test('the first replica says it is the first; the second says it joined and prints the same operator root key, which works on both', async () => {
    const prefix = 'banner';
    const first = await replica(['--store', redis.url, '--store-prefix', prefix]);
    const second = await replica(['--store', redis.url, '--store-prefix', prefix, '--seed', '99']);
    try {
      expect(first.stdout()).toContain(`store: ${redis.url} (keys {${prefix}}:*), the first replica`);
      expect(second.stdout()).toContain(`store: ${redis.url} (keys {${prefix}}:*), joined`);
      const rootKey = rootKeyOf(first);
      expect(rootKey).toMatch(/^\S{16,}$/);
      expect(rootKeyOf(second)).toBe(rootKey);
      expect(second.stdout()).toContain("generated, the store's");
      // The store's seed, not the --seed the second was given.
      const seedOf = (r: Running) => /seed: (\d+)/.exec(r.stdout())?.[1];
      expect(seedOf(second)).toBe(seedOf(first));
      // The one operator credential, and one state: an API created on the first takes keys on the second.
      const created = await postJson(urlOf(first), '/v2/apis.createApi', { name: 'on the first' }, rootKey as string);
      expect(created.status, created.text).toBe(200);
      const apiId = (created.body as { data: { apiId: string } }).data.apiId;
      const key = await postJson(urlOf(second), '/v2/keys.createKey', { apiId }, rootKey as string);
      expect(key.status, key.text).toBe(200);
      const missing = await postJson(urlOf(second), '/v2/keys.createKey', { apiId: 'api_none' }, rootKey as string);
      expect(missing.status).toBe(404);
    } finally {
      await stop(second);
      await stop(first);
    }
  });

  test('KEYSIM_STORE works as --store: the replica keeps its state in that Redis', async () => {
    const running = await replica(['--store-prefix', 'from-env', '--seed', '5'], cleanEnv({ KEYSIM_STORE: redis.url }));
    try {
      expect(running.stdout()).toContain(`store: ${redis.url} (keys {from-env}:*), the first replica`);
      expect(await redis.cli('EXISTS', '{from-env}:genesis')).toBe('1');
    } finally {
      await stop(running);
    }
  });
});
