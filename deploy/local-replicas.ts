/**
 * Runs the simulator's replicas as a cluster would (deploy/kubernetes/render.ts --replicas N), on
 * this machine: the Redis pod's redis-server on a free loopback port (when the manifests have one;
 * else their external --store as is), the N replica pods' exact `keysim serve` command lines and
 * environment (host and port made local: 127.0.0.1, a free port each; the Redis Service's name
 * mapped to the local Redis), each waited for through its readiness probe, and a stand-in for the
 * Service keysim-target that sends each new connection to the next replica in turn. Then one
 * `keysim run` through that stand-in, so the load alternates between the replicas connection by
 * connection, as the Service spreads it; then everything is stopped and the temporary folder removed.
 *
 *   npx tsx deploy/kubernetes/render.ts --replicas 3 > replicas.yaml
 *   npx tsx deploy/local-replicas.ts replicas.yaml [run SCENARIO … keysim run's flags]
 *
 * The load is `run smoke` unless given; its report goes to a temporary folder unless --out is
 * given. The operator's root key is KEYSIM_ROOT_KEY (the Secret keysim-root-key of the cluster),
 * generated for this run when unset. Exits with the run's exit code.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { type Server, type Socket, connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';

const REPO = fileURLToPath(new URL('..', import.meta.url));
/** The built CLI, as the image's entry point runs it (scripts/ensure-build.mjs builds it when stale). */
const CLI = join(REPO, 'dist', 'src', 'cli', 'main.js');
/** A bound for a start that hangs, never a pace: a busy machine may take long to start a process. */
const READY_LIMIT_MS = 120_000;

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: unknown;
}
interface Container {
  command?: string[];
  args?: string[];
  env?: EnvVar[];
  readinessProbe?: { httpGet?: { path: string } };
}
interface Doc {
  kind: string;
  metadata: { name: string };
  spec: { replicas?: number; template?: { spec: { containers: Container[] } }; ports?: Array<{ port: number }> };
}

function say(line: string): void {
  process.stdout.write(`local-replicas: ${line}\n`);
}

/** The process's exit, SIGTERM first, SIGKILL after 10 s. */
async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(killer);
}

async function until(ready: () => Promise<boolean>, child: ChildProcess, what: string): Promise<void> {
  const deadline = Date.now() + READY_LIMIT_MS;
  while (!(await ready())) {
    if (child.exitCode !== null) throw new Error(`${what} exited with ${child.exitCode} before it was ready.`);
    if (Date.now() > deadline) throw new Error(`${what} was not ready within ${READY_LIMIT_MS / 1000} s.`);
    await sleep(100);
  }
}

/** Whether a Redis on the port answers PING (no redis-cli needed). */
function pong(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let reply = '';
    socket.setEncoding('utf8');
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk: string) => {
      reply += chunk;
      if (reply.includes('\r\n')) {
        socket.destroy();
        resolve(reply.startsWith('+PONG'));
      }
    });
    socket.once('error', () => resolve(false));
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no free port'))));
    });
  });
}

/**
 * The replicas' command line, made local: the same flags, bound to loopback on a free port. A pod
 * bound beyond loopback answers any Host; on loopback a replica answers only its own host and
 * port, so `--allow-host 127.0.0.1` lets it answer the Host the Service stand-in's port gives.
 */
export function localServeArgs(container: Container): string[] {
  const args = [...(container.args ?? [])];
  for (const [flag, local] of [
    ['--host', '127.0.0.1'],
    ['--port', '0'],
  ] as const) {
    const at = args.indexOf(flag);
    if (at === -1) args.push(flag, local);
    else args[at + 1] = local;
  }
  return [...args, '--allow-host', '127.0.0.1'];
}

/** A container's environment here: plain values (`mapped`), and a Secret's by the same-named variable of this shell. */
function containerEnv(container: Container, mapped: (value: string) => string, rootKey: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, KEYSIM_ROOT_KEY: rootKey };
  for (const variable of container.env ?? []) {
    if (variable.value !== undefined) env[variable.name] = mapped(variable.value);
  }
  return env;
}

/** The Service keysim-target, locally: each new connection goes to the next replica in turn. */
async function serviceStandIn(replicas: readonly URL[]): Promise<{ url: string; perReplica: number[]; close: () => void }> {
  const perReplica = replicas.map(() => 0);
  const sockets = new Set<Socket>();
  let next = 0;
  const server: Server = createServer((client) => {
    const index = next++ % replicas.length;
    perReplica[index]! += 1;
    const target = replicas[index] as URL;
    const upstream = connect(Number(target.port), target.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.once('close', () => sockets.delete(socket));
      socket.once('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${address.port}`,
    perReplica,
    close: () => {
      server.close();
      for (const socket of sockets) socket.destroy();
    },
  };
}

function findDoc(docs: readonly Doc[], kind: string, name: string): Doc | undefined {
  return docs.find((d) => d.kind === kind && d.metadata.name === name);
}

function containerOf(doc: Doc): Container {
  const container = doc.spec.template?.spec.containers[0];
  if (container === undefined) throw new Error(`the ${doc.kind} ${doc.metadata.name} has no container.`);
  return container;
}

/** Everything started, to stop in the reverse order whatever happens. */
class Started {
  redis: ChildProcess | undefined;
  readonly replicas: ChildProcess[] = [];
  load: ChildProcess | undefined;
  readonly closers: Array<() => void> = [];
  dir: string | undefined;

  async stopAll(): Promise<void> {
    if (this.load !== undefined) await stopChild(this.load);
    for (const close of this.closers.splice(0)) close();
    // The replicas before their Redis: a replica stopping still reads its log.
    await Promise.all(this.replicas.splice(0).map(stopChild));
    if (this.redis !== undefined) await stopChild(this.redis);
    if (this.dir !== undefined) rmSync(this.dir, { recursive: true, force: true });
    this.dir = undefined;
  }
}

async function startRedis(doc: Doc, dir: string, started: Started): Promise<number> {
  const container = containerOf(doc);
  const port = await freePort();
  const [command, ...commandArgs] = container.command ?? ['redis-server'];
  const args = [...commandArgs, ...(container.args ?? []), '--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--logfile', join(dir, 'redis.log')];
  const child = spawn(command as string, args, { stdio: 'ignore' });
  started.redis = child;
  const failed = new Promise<never>((_, reject) =>
    child.once('error', (error) =>
      reject(new Error(`${command as string} cannot be started (${error.message}): install Redis (apt-get install redis-server).`)),
    ),
  );
  await Promise.race([until(() => pong(port), child, 'redis-server'), failed]);
  say(`redis-server (pid ${child.pid}) on redis://127.0.0.1:${port}, as the Deployment ${doc.metadata.name}`);
  return port;
}

async function startReplica(container: Container, env: NodeJS.ProcessEnv, index: number, started: Started): Promise<URL> {
  const child = spawn(process.execPath, [CLI, ...localServeArgs(container)], { cwd: REPO, env, stdio: ['ignore', 'pipe', 'inherit'] });
  started.replicas.push(child);
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  await until(async () => /listening on http:\/\/\S+/.test(out), child, `replica ${index}`);
  const url = new URL((/listening on (http:\/\/\S+)/.exec(out) as RegExpExecArray)[1] as string);
  const probe = container.readinessProbe?.httpGet?.path ?? '/_sim/health';
  await until(async () => (await fetch(new URL(probe, url)).catch(() => undefined))?.status === 200, child, `replica ${index}`);
  const role = /store: .*?, (the first replica|joined)/.exec(out)?.[1] ?? 'started';
  say(`replica ${index} (pid ${child.pid}) on ${url.origin}, ready (GET ${probe}): ${role}`);
  return url;
}

function runLoad(runArgs: readonly string[], target: string, dir: string, rootKey: string, started: Started): Promise<number> {
  const args = [...runArgs, '--target', target, ...(runArgs.includes('--out') ? [] : ['--out', join(dir, 'reports')])];
  const child = spawn(process.execPath, [CLI, ...args], {
    cwd: REPO,
    env: { ...process.env, KEYSIM_ROOT_KEY: rootKey },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  started.load = child;
  say(`the load (pid ${child.pid}): keysim ${args.join(' ')}`);
  return new Promise((resolve) => child.once('close', (code) => resolve(code ?? 1)));
}

/** Starts Redis and the replicas of the rendered manifests, runs the load through them, stops everything. */
export async function localReplicas(manifests: string, runArgs: readonly string[] = ['run', 'smoke'], started = new Started()): Promise<number> {
  const docs = parseAllDocuments(manifests).map((d) => d.toJS() as Doc);
  const simulator = findDoc(docs, 'Deployment', 'keysim-simulator');
  if (simulator === undefined) throw new Error('the manifests have no Deployment keysim-simulator: render them with deploy/kubernetes/render.ts --replicas N.');
  const built = spawnSync(process.execPath, [join(REPO, 'scripts', 'ensure-build.mjs')], { cwd: REPO, stdio: ['ignore', 'ignore', 'inherit'] });
  if (built.status !== 0) throw new Error('building dist/ failed: npm run build shows why.');
  const rootKey = process.env.KEYSIM_ROOT_KEY || `root_local_${randomBytes(12).toString('hex')}`;
  try {
    started.dir = mkdtempSync(join(tmpdir(), 'keysim-local-replicas-'));
    say(`temporary folder ${started.dir}`);
    const redis = findDoc(docs, 'Deployment', 'keysim-redis');
    let mapped = (value: string) => value;
    if (redis !== undefined) {
      const port = await startRedis(redis, started.dir, started);
      const servicePort = findDoc(docs, 'Service', 'keysim-redis')?.spec.ports?.[0]?.port ?? 6379;
      mapped = (value) => value.replaceAll(`keysim-redis:${servicePort}`, `127.0.0.1:${port}`);
    }
    const container = containerOf(simulator);
    const env = containerEnv(container, mapped, rootKey);
    const count = simulator.spec.replicas ?? 1;
    // All at once, as a Deployment starts its pods: one of them writes the store's start state.
    const urls = await Promise.all(Array.from({ length: count }, (_, i) => startReplica(container, env, i, started)));
    const service = await serviceStandIn(urls);
    started.closers.push(service.close);
    say(`the Service keysim-target on ${service.url}: each new connection to the next replica in turn`);
    const code = await runLoad(runArgs, service.url, started.dir, rootKey, started);
    say(`the load exited ${code}; connections per replica: ${service.perReplica.join(', ')}`);
    return code;
  } finally {
    await started.stopAll();
    say('stopped every process it started and removed its temporary folder');
  }
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const [file, ...runArgs] = process.argv.slice(2);
  if (file === undefined) {
    process.stderr.write('usage: npx tsx deploy/local-replicas.ts RENDERED.yaml [run SCENARIO … flags of keysim run]\n');
    process.exit(2);
  }
  const started = new Started();
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      say(`${signal}: stopping`);
      void started.stopAll().finally(() => process.exit(130));
    });
  }
  localReplicas(readFileSync(file, 'utf8'), runArgs.length === 0 ? undefined : runArgs, started).then(
    (code) => process.exit(code),
    (error: unknown) => {
      process.stderr.write(`local-replicas: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exit(1);
    },
  );
}
