/**
 * Replicas on Redis (`keysim serve --store`): `keys.verifyKey` throughput and CPU per request of 1,
 * 2 and 3 store-backed replicas on one Redis, against one in-memory `keysim serve` measured in the
 * same run (the baseline), with interleaved repetitions.
 *
 * Every process is separate: the replicas (the built CLI), redis-server (Debian's, on a free
 * loopback port, no persistence), and the load generator (autocannon, here), whose connections are
 * split evenly over the replicas. CPU is read from /proc for each replica and for Redis, before and
 * after each measurement: the replicas' CPU per request (added up) and Redis's, and from Redis's
 * the verifications one Redis core would carry (requests / Redis CPU seconds).
 *
 * Two keys: one without a credit limit, and one hot key with 10^9 credits (every verification a
 * debit of the same record). On a machine with fewer cores than replicas + Redis + generator the
 * processes share cores, so the figures are ratios, not capacity (docs/benchmarks.md#replicas-on-redis).
 */
import autocannon from 'autocannon';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { treeCpu, treeCpuAvailable } from './process-tree-cpu.js';
import { progress } from './subprocess.js';
import { type SummaryRow, fmtRate, fmtRatio, median, textTable } from './stats.js';

/** The built CLI; KEYSIM_BENCH_CLI measures another build (e.g. a copy of the previous one, for an A/B). */
const CLI = process.env.KEYSIM_BENCH_CLI ?? fileURLToPath(new URL('../dist/src/cli/main.js', import.meta.url));
const ROOT_KEY = 'root_bench_store_replicas_0001';
const CONNECTIONS = 48;
const RUN_SECONDS = 5;
const REPEATS = 3;
const REPLICA_COUNTS = [1, 2, 3] as const;
/** `passive`: one replica takes the load, a second one only applies the log (its CPU is the apply cost, measured alone). */
type Config = 'memory' | `replicas-${(typeof REPLICA_COUNTS)[number]}` | 'passive';
type KeyKind = 'unlimited' | 'hot';

const children = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of children) child.kill('SIGKILL');
});

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const kill = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(kill);
  children.delete(child);
}

interface Redis {
  url: string;
  pid: number;
  close(): Promise<void>;
}

async function startRedis(): Promise<Redis> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'keysim-bench-redis-'));
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], { stdio: 'ignore' });
  children.add(child);
  const url = `redis://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    const ready = await new Promise<boolean>((resolve) => {
      const probe = spawn('redis-cli', ['-p', String(port), 'PING'], { stdio: ['ignore', 'pipe', 'ignore'] });
      let out = '';
      probe.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
      probe.on('exit', () => resolve(out.trim() === 'PONG'));
    });
    if (ready) break;
    if (i > 300) throw new Error('redis-server did not answer PING within 30 s');
    await sleep(100);
  }
  return {
    url,
    pid: child.pid as number,
    close: async () => {
      await stop(child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

interface Served {
  url: string;
  pid: number;
  child: ChildProcess;
}

/** `keysim serve` (the built CLI) in memory, or as a replica of the store's simulator named `prefix`. */
async function serve(store?: { url: string; prefix: string }): Promise<Served> {
  const storeArgs = store === undefined ? [] : ['--store', store.url, '--store-prefix', store.prefix];
  const args = [CLI, 'serve', '--port', '0', '--seed', '1', '--clock', 'manual', '--root-key', ROOT_KEY, ...storeArgs];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let out = '';
  child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()));
  for (let i = 0; ; i++) {
    const match = /listening on (http:\/\/\S+)/.exec(out);
    if (match !== null) return { url: match[1] as string, pid: child.pid as number, child };
    if (child.exitCode !== null) throw new Error(`keysim serve exited with ${child.exitCode}; run npm run build first`);
    if (i > 600) throw new Error('keysim serve did not listen within 60 s');
    await sleep(100);
  }
}

async function post(url: string, path: string, body: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ROOT_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const json = (await res.json()) as { data?: Record<string, unknown> };
  if (res.status !== 200 || json.data === undefined) throw new Error(`${path} answered ${res.status}`);
  return json.data;
}

/** The two keys of the measurement, created through the first replica. */
async function fixture(url: string): Promise<Record<KeyKind, string>> {
  const { apiId } = (await post(url, '/v2/apis.createApi', { name: 'bench' })) as { apiId: string };
  const unlimited = (await post(url, '/v2/keys.createKey', { apiId })) as { key: string };
  const hot = (await post(url, '/v2/keys.createKey', { apiId, credits: { remaining: 1e9 } })) as { key: string };
  return { unlimited: unlimited.key, hot: hot.key };
}

interface Figures {
  perSecond: number;
  replicaCpuUs: number;
  redisCpuUs: number | undefined;
  /** The passive replica's CPU per request (config `passive`). */
  passiveCpuUs?: number;
}

/** One measurement: the connections split over the replicas, CPU read around it (and around the passive replica's). */
async function measure(replicas: readonly Served[], key: string, redisPid: number | undefined, passive?: Served): Promise<Figures> {
  const cpuOf = (pid: number) => treeCpu(pid).ownUs;
  const before = replicas.map((r) => cpuOf(r.pid));
  const redisBefore = redisPid === undefined ? 0 : cpuOf(redisPid);
  const passiveBefore = passive === undefined ? 0 : cpuOf(passive.pid);
  const body = JSON.stringify({ key });
  const results = await Promise.all(
    replicas.map(
      (r) =>
        new Promise<autocannon.Result>((resolve, reject) => {
          autocannon(
            {
              url: `${r.url}/v2/keys.verifyKey`,
              method: 'POST',
              connections: Math.ceil(CONNECTIONS / replicas.length),
              duration: RUN_SECONDS,
              headers: { 'content-type': 'application/json' },
              body,
            },
            (error, result) => (error ? reject(error instanceof Error ? error : new Error(String(error))) : resolve(result)),
          );
        }),
    ),
  );
  const requests = results.reduce((sum, r) => sum + r['2xx'], 0);
  const errors = results.reduce((sum, r) => sum + r.non2xx + r.errors, 0);
  if (errors > 0) throw new Error(`${errors} answers were not 200`);
  const replicaCpuUs = replicas.reduce((sum, r, i) => sum + cpuOf(r.pid) - (before[i] as number), 0);
  // The passive replica may still be applying the last entries: wait until it idles before reading it.
  if (passive !== undefined) await sleep(500);
  const figures: Figures = {
    perSecond: requests / RUN_SECONDS,
    replicaCpuUs: replicaCpuUs / requests,
    redisCpuUs: redisPid === undefined ? undefined : (cpuOf(redisPid) - redisBefore) / requests,
  };
  if (passive !== undefined) figures.passiveCpuUs = (cpuOf(passive.pid) - passiveBefore) / requests;
  return figures;
}

/** Each configuration running: its replicas (the baseline is one in-memory process) and its keys. */
interface Running {
  config: Config;
  replicas: Served[];
  /** A replica that gets no requests (config `passive`). */
  passive?: Served;
  keys: Record<KeyKind, string>;
  redisPid: number | undefined;
}

async function startConfig(config: Config, redis: Redis): Promise<Running> {
  if (config === 'memory') {
    const one = await serve();
    return { config, replicas: [one], keys: await fixture(one.url), redisPid: undefined };
  }
  if (config === 'passive') {
    const loaded = await serve({ url: redis.url, prefix: config });
    const passive = await serve({ url: redis.url, prefix: config });
    return { config, replicas: [loaded], passive, keys: await fixture(loaded.url), redisPid: redis.pid };
  }
  const count = Number(config.slice('replicas-'.length));
  // Each configuration is its own simulator on the one Redis (its own prefix): none applies another's log.
  const replicas: Served[] = [];
  for (let i = 0; i < count; i++) replicas.push(await serve({ url: redis.url, prefix: config }));
  return { config, replicas, keys: await fixture((replicas[0] as Served).url), redisPid: redis.pid };
}

type Samples = Map<string, Figures[]>;

function row(config: Config, kind: KeyKind, samples: Figures[], baseline: number): string[] {
  const rate = median(samples.map((f) => f.perSecond));
  const replicaCpu = median(samples.map((f) => f.replicaCpuUs));
  const redisCpus = samples.map((f) => f.redisCpuUs).filter((v): v is number => v !== undefined);
  const redisCpu = redisCpus.length === 0 ? undefined : median(redisCpus);
  return [
    config === 'memory' ? 'in memory, 1 process' : config === 'passive' ? '1 replica + 1 passive' : `${config.slice('replicas-'.length)} replica(s) on Redis`,
    kind,
    fmtRate(rate),
    fmtRatio(rate / baseline),
    `${replicaCpu.toFixed(1)} µs`,
    redisCpu === undefined ? '—' : `${redisCpu.toFixed(1)} µs`,
    redisCpu === undefined ? '—' : fmtRate(1e6 / redisCpu),
  ];
}

/**
 * A model from the CPU figures, printed beside them and never instead: the replicas' CPU per request
 * grows by `apply` per added replica (each applies every request), from `own` (what the replica
 * that answers spends besides). With a core per replica, N replicas serve at most
 * 1 / (own / N + apply) requests a second, and no number of them more than 1 / apply.
 */
function scalingLine(kind: KeyKind, samples: Samples): string {
  const cpu = (n: number) => median((samples.get(`replicas-${n} ${kind}`) as Figures[]).map((f) => f.replicaCpuUs));
  const [first, last] = [REPLICA_COUNTS[0], REPLICA_COUNTS[REPLICA_COUNTS.length - 1]] as [number, number];
  const apply = (cpu(last) - cpu(first)) / (last - first);
  const own = cpu(first) - apply;
  if (!(apply > 0) || !(own > 0))
    return `   ${kind} key: the CPU figures are too noisy for the scaling model (apply ${apply.toFixed(1)} µs, own ${own.toFixed(1)} µs).`;
  const ceiling = (n: number) => fmtRate(1e6 / (own / n + apply));
  return `   ${kind} key, model with a core per replica: applying a request costs each replica ${apply.toFixed(1)} µs, answering it ${own.toFixed(1)} µs more; so 1, 2, 3 replicas serve at most ${ceiling(1)}, ${ceiling(2)}, ${ceiling(3)}, and no number of them more than ${fmtRate(1e6 / apply)} (predicted, not measured).`;
}

/** The apply cost measured alone: what a replica that answers nothing spends per request on the log. */
function passiveLine(kind: KeyKind, samples: Samples): string {
  const passive = median((samples.get(`passive ${kind}`) as Figures[]).map((f) => f.passiveCpuUs ?? 0));
  return `   ${kind} key, measured: a passive replica (no requests of its own) spends ${passive.toFixed(1)} µs a request applying the log, so no number of replicas serves more than ${fmtRate(1e6 / passive)} with a core each.`;
}

export async function storeReplicasReport(): Promise<{ text: string; summary: SummaryRow[] }> {
  if (!treeCpuAvailable()) return { text: 'Replicas on Redis: needs /proc (Linux) for the CPU figures; not run.\n', summary: [] };
  const redis = await startRedis();
  const configs: Config[] = ['memory', ...REPLICA_COUNTS.map((n) => `replicas-${n}` as const), 'passive'];
  const running: Running[] = [];
  const samples: Samples = new Map();
  try {
    for (const config of configs) running.push(await startConfig(config, redis));
    for (let repeat = 0; repeat < REPEATS; repeat++) {
      // Interleaved: each repetition measures every configuration once, so a noisy moment touches all.
      for (const r of running) {
        for (const kind of ['unlimited', 'hot'] as const) {
          progress(`store-replicas: repetition ${repeat + 1}/${REPEATS}, ${r.config}, ${kind} key`);
          const figures = await measure(r.replicas, r.keys[kind], r.redisPid, r.passive);
          const list = samples.get(`${r.config} ${kind}`) ?? [];
          list.push(figures);
          samples.set(`${r.config} ${kind}`, list);
        }
      }
    }
  } finally {
    for (const r of running) for (const replica of [...r.replicas, ...(r.passive === undefined ? [] : [r.passive])]) await stop(replica.child);
    await redis.close();
  }
  const rows: string[][] = [];
  const summary: SummaryRow[] = [];
  for (const kind of ['unlimited', 'hot'] as const) {
    const baseline = median((samples.get(`memory ${kind}`) as Figures[]).map((f) => f.perSecond));
    for (const config of configs) rows.push(row(config, kind, samples.get(`${config} ${kind}`) as Figures[], baseline));
  }
  const headers = ['configuration', 'key', 'verifications/s', 'vs in memory', 'replica CPU / request', 'Redis CPU / request', 'per Redis core'];
  const text = [
    `Replicas on Redis: keys.verifyKey, ${CONNECTIONS} connections split over the replicas, ${RUN_SECONDS} s runs, medians of ${REPEATS} interleaved repetitions.`,
    'Replica CPU is added over the replicas; "per Redis core" = verifications one Redis core carries at that CPU per request.',
    textTable(headers, rows),
    ...(['unlimited', 'hot'] as const).map((kind) => scalingLine(kind, samples)),
    ...(['unlimited', 'hot'] as const).map((kind) => passiveLine(kind, samples)),
    '',
  ].join('\n');
  return { text, summary };
}
