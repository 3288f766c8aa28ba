/**
 * A real Redis (Debian's redis-server) for the store's tests: one server, or a three-master Redis
 * Cluster, each on a free loopback port with everything it writes in a fresh temporary folder.
 * No snapshots and no append-only file unless asked (`persist`: a restart then comes back with
 * its data, as a Redis with persistence does). Started and stopped by the tests themselves.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { freePort } from './nginx.js';

const run = promisify(execFile);

/** Whether Debian's redis-server and redis-cli are installed (.ci/run installs them). */
export function redisInstalled(): boolean {
  return ['/usr/bin/redis-server', '/usr/bin/redis-cli'].every((path) => existsSync(path));
}

export interface RedisServer {
  port: number;
  /** `redis://127.0.0.1:PORT` */
  url: string;
  /** Stops the server (SIGTERM, then SIGKILL); `start` brings it back on the same port. */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops it and removes its folder. */
  close(): Promise<void>;
  /** A command through redis-cli, its output trimmed. */
  cli(...args: string[]): Promise<string>;
}

export interface RedisOptions {
  /** Keep data across stop/start (append-only file in the folder); default false. */
  persist?: boolean;
  /** Further arguments for redis-server (e.g. cluster mode). */
  extraArgs?: readonly string[];
}

async function reachable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.connect(port, '127.0.0.1');
  });
}

async function cli(port: number, args: readonly string[]): Promise<string> {
  const { stdout } = await run('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args], { encoding: 'utf8' });
  return stdout.trim();
}

/** Waits until the server answers PING (no timing assumption: up to a minute on a busy machine). */
async function waitReady(port: number, child: ChildProcess): Promise<void> {
  for (let attempt = 0; attempt < 600; attempt++) {
    if (child.exitCode !== null) throw new Error(`redis-server on port ${port} exited with ${child.exitCode} before it was ready`);
    if ((await reachable(port)) && (await cli(port, ['PING']).catch(() => '')) === 'PONG') return;
    await sleep(100);
  }
  throw new Error(`redis-server on port ${port} did not answer PING within a minute`);
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const killed = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(killed);
}

export async function startRedis(options: RedisOptions = {}): Promise<RedisServer> {
  if (!redisInstalled()) throw new Error('redis-server and redis-cli are not installed: apt-get install redis-server (.ci/run does).');
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'keysim-redis-'));
  const args = [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--dir',
    dir,
    '--save',
    '',
    '--appendonly',
    options.persist === true ? 'yes' : 'no',
    '--logfile',
    join(dir, 'redis.log'),
    ...(options.extraArgs ?? []),
  ];
  let child: ChildProcess | undefined;
  const start = async () => {
    child = spawn('redis-server', args, { stdio: 'ignore' });
    await waitReady(port, child);
  };
  const stop = async () => {
    if (child !== undefined) await stopChild(child);
  };
  await start();
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    start,
    stop,
    close: async () => {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
    cli: (...rest) => cli(port, rest),
  };
}

export interface RedisCluster {
  ports: number[];
  /** `redis-cluster://127.0.0.1:P1,127.0.0.1:P2,127.0.0.1:P3` */
  url: string;
  nodes: RedisServer[];
  close(): Promise<void>;
}

/** Three masters, no replicas, every slot assigned; waits until the cluster says it is ok. */
export async function startRedisCluster(): Promise<RedisCluster> {
  const nodes: RedisServer[] = [];
  try {
    for (let i = 0; i < 3; i++) nodes.push(await startRedis({ extraArgs: ['--cluster-enabled', 'yes', '--cluster-config-file', `nodes-${i}.conf`] }));
    const addresses = nodes.map((node) => `127.0.0.1:${node.port}`);
    await run('redis-cli', ['--cluster', 'create', ...addresses, '--cluster-replicas', '0', '--cluster-yes'], { encoding: 'utf8' });
    for (let attempt = 0; ; attempt++) {
      const states = await Promise.all(nodes.map((node) => node.cli('CLUSTER', 'INFO')));
      if (states.every((info) => info.includes('cluster_state:ok'))) break;
      if (attempt === 600) throw new Error('the Redis Cluster did not reach cluster_state:ok within a minute');
      await sleep(100);
    }
  } catch (error) {
    await Promise.all(nodes.map((node) => node.close()));
    throw error;
  }
  return {
    ports: nodes.map((node) => node.port),
    url: `redis-cluster://${nodes.map((node) => `127.0.0.1:${node.port}`).join(',')}`,
    nodes,
    close: async () => {
      await Promise.all(nodes.map((node) => node.close()));
    },
  };
}
