/**
 * Entry point of an HTTP benchmark server process: `http-server-child.ts sim|bare|bare-coalesced [--workers N]`. The server
 * runs alone in its process, so the load generator (in the parent) never shares its core.
 *
 * Protocol on stdio: once listening (and, for the simulator, once its fixture exists, created
 * through its own HTTP API) it prints one `READY <json>` line. Each `cpu` line on stdin is
 * answered with a `CPU <json>` line (the process's CPU time so far, µs). The process exits when
 * stdin closes (the parent ended, however it ended) or on SIGTERM/SIGINT, through process.exit
 * so that a `--cpu-prof` profile is written.
 */
import { createInterface } from 'node:readline';
import { existsSync } from 'node:fs';
import type * as HttpLayer from '../src/http/index.js';
import { createBareServer, listenBare } from './bare-server.js';
import { CPU_PREFIX, READY_PREFIX, type ServerCpu, type ServerKind, type ServerReady } from './http-server.js';

async function post(url: string, rootKey: string, path: string, body: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${rootKey}` },
    body: JSON.stringify(body),
  });
  const json = (await res.json()) as { data?: Record<string, unknown> };
  if (res.status !== 200 || json.data === undefined) throw new Error(`${path} answered ${res.status}: ${JSON.stringify(json)}`);
  return json.data;
}

async function start(kind: ServerKind): Promise<{ ready: ServerReady; close: () => Promise<void> }> {
  if (kind === 'bare' || kind === 'bare-coalesced') {
    const server = createBareServer({ coalesceWrites: kind === 'bare-coalesced' });
    const url = await listenBare(server);
    return {
      ready: { kind, url, pid: process.pid },
      close: () =>
        new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        }),
    };
  }
  // Real time, as `keysim serve` runs: rate-limit windows roll over during the benchmark.
  // Measure the simulator users run (`keysim serve`, compiled by `npm run build`), not the
  // sources through tsx, whose per-closure wrappers cost ~11 % CPU per request here.
  const built = new URL('../dist/src/http/index.js', import.meta.url);
  const layer = (existsSync(built) ? await import(built.href) : await import('../src/http/index.js')) as typeof HttpLayer;
  if (!existsSync(built)) process.stderr.write('http bench: dist/ not built, measuring the simulator from its sources (run npm run build)\n');
  const sim = await layer.createSimulator({ host: '127.0.0.1', port: 0, clock: 'system', startMs: Date.now(), seed: 1, workers });
  const { apiId } = await post(sim.url, sim.rootKey, '/v2/apis.createApi', { name: 'bench-api' });
  const { key } = await post(sim.url, sim.rootKey, '/v2/keys.createKey', { apiId, credits: { remaining: 1e12 } });
  const namespace = 'bench';
  await post(sim.url, sim.rootKey, '/_sim/namespaces.create', { name: namespace });
  if (typeof apiId !== 'string' || typeof key !== 'string') throw new Error('unexpected fixture answers');
  return { ready: { kind, url: sim.url, pid: process.pid, rootKey: sim.rootKey, apiId, key, namespace }, close: () => sim.close() };
}

const kind = process.argv[2];
// `sim --workers N`: the simulator with N HTTP worker processes (serve-workers.ts).
const workers = process.argv[3] === '--workers' ? Number(process.argv[4]) : 1;
if (kind !== 'sim' && kind !== 'bare' && kind !== 'bare-coalesced')
  throw new Error(`http-server-child: expected sim, bare or bare-coalesced, got ${String(kind)}`);
const server = await start(kind);

let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  // Do not wait for ever on a stuck connection: the profile (if any) is written by process.exit.
  const timer = setTimeout(() => process.exit(0), 2_000);
  void server.close().finally(() => {
    clearTimeout(timer);
    process.exit(0);
  });
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
const input = createInterface({ input: process.stdin });
input.on('line', (line) => {
  if (line.trim() !== 'cpu') return;
  const cpu = process.cpuUsage();
  process.stdout.write(`${CPU_PREFIX}${JSON.stringify({ userUs: cpu.user, systemUs: cpu.system } satisfies ServerCpu)}\n`);
});
input.on('close', stop);
process.stdout.write(`${READY_PREFIX}${JSON.stringify(server.ready)}\n`);
