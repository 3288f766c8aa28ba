/**
 * A/B of the simulator's HTTP throughput against another checkout of keysim, both beside the bare
 * server: `tsx bench/http-ab.ts <baseline checkout> [verifyKey|ratelimit] [seconds] [repetitions]
 * [wrk|autocannon]`. The baseline is a checkout with its dist/ built (e.g. `git worktree add` or
 * `git archive <commit> | tar -x -C <dir>`, a node_modules link, `npm run build`); this
 * checkout's dist/ must be built too. Each repetition runs baseline (A), this checkout (B) and
 * bare, in an order that rotates every repetition, at 100 connections, pipelining 10 then 1, and
 * prints per repetition the rates, B/A, A/bare, B/bare and each server's CPU time per request;
 * then the medians of the ratios. Short runs on a shared machine: read medians of ratios beside
 * the load average (docs/benchmarks.md#method), never one run. `KEYSIM_AB_PIN=1 taskset -c 0 npx
 * tsx bench/http-ab.ts …` keeps the servers on CPU 1 and the generator on CPU 0.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { type ServerProcess, startServer } from './http-server.js';
import { ENDPOINTS, type Endpoint, type RunResult, type RunSettings, checksPassed, runLoad, workloadFor } from './http-load.js';
import { findWrk, runWrk } from './wrk.js';
import { fmtRate, median, textTable } from './stats.js';
import { loadText } from './machine.js';

const baselineDir = process.argv[2];
if (baselineDir === undefined)
  throw new Error('usage: tsx bench/http-ab.ts <baseline checkout> [verifyKey|ratelimit] [seconds] [repetitions] [wrk|autocannon]');
const baselineChild = join(resolve(baselineDir), 'bench', 'http-server-child.ts');
if (!existsSync(baselineChild) || !existsSync(join(resolve(baselineDir), 'dist', 'src', 'http', 'index.js'))) {
  throw new Error(`${baselineDir}: not a keysim checkout with dist/ built (npm run build there)`);
}
const endpoint = (process.argv[3] ?? 'verifyKey') as Endpoint;
if (!ENDPOINTS.includes(endpoint)) throw new Error(`expected one of ${ENDPOINTS.join(', ')}`);
const seconds = Number(process.argv[4] ?? 3);
const repetitions = Number(process.argv[5] ?? 4);
const generator = process.argv[6] ?? 'wrk';
const wrk = generator === 'wrk' ? findWrk() : undefined;
if (generator === 'wrk' && wrk === undefined) throw new Error('wrk is not installed: pass autocannon');

function run(server: ServerProcess, settings: RunSettings, workload: ReturnType<typeof workloadFor>): Promise<RunResult> {
  return wrk === undefined ? runLoad(server, endpoint, workload, settings) : runWrk(wrk, server, endpoint, workload, settings);
}

const load = () => loadText();
const loadBefore = load();
const servers: ServerProcess[] = [];
try {
  const a = await startServer('sim', [], [], baselineChild);
  servers.push(a);
  const b = await startServer('sim');
  servers.push(b);
  const bare = await startServer('bare');
  servers.push(bare);
  // KEYSIM_AB_PIN=<cpu>: every server (all its threads) on that CPU, so that no run lands on the
  // generator's core by chance (run the script itself under `taskset -c <another cpu>`).
  const pin = process.env.KEYSIM_AB_PIN;
  if (pin !== undefined && pin !== '')
    for (const server of servers) execFileSync('taskset', ['-a', '-p', '-c', pin, String(server.ready.pid)], { stdio: 'ignore' });
  const named: Array<[string, ServerProcess]> = [
    ['A', a],
    ['B', b],
    ['bare', bare],
  ];
  for (const [, server] of named) {
    await run(server, { connections: 100, pipelining: 1, durationSeconds: 2 }, workloadFor(endpoint, server.ready.kind === 'sim' ? server.ready : a.ready));
  }
  for (const pipelining of [10, 1]) {
    const rows: string[][] = [];
    const ratios = { ba: [] as number[], abare: [] as number[], bbare: [] as number[], cpuA: [] as number[], cpuB: [] as number[], cpuBare: [] as number[] };
    for (let rep = 0; rep < repetitions; rep++) {
      const results = new Map<string, RunResult>();
      for (let i = 0; i < named.length; i++) {
        const [name, server] = named[(i + rep) % named.length] as [string, ServerProcess];
        const r = await run(
          server,
          { connections: 100, pipelining, durationSeconds: seconds },
          workloadFor(endpoint, server.ready.kind === 'sim' ? server.ready : a.ready),
        );
        if (!checksPassed(r)) throw new Error(`${name}: wrong answers (${r.ok2xx} 2xx of ${r.completed}, ${r.errors} errors)`);
        results.set(name, r);
      }
      const [ra, rb, rbare] = ['A', 'B', 'bare'].map((n) => results.get(n) as RunResult) as [RunResult, RunResult, RunResult];
      ratios.ba.push(rb.rate / ra.rate);
      ratios.abare.push(ra.rate / rbare.rate);
      ratios.bbare.push(rb.rate / rbare.rate);
      ratios.cpuA.push(ra.serverCpuUsPerRequest);
      ratios.cpuB.push(rb.serverCpuUsPerRequest);
      ratios.cpuBare.push(rbare.serverCpuUsPerRequest);
      rows.push([
        String(rep + 1),
        fmtRate(ra.rate),
        fmtRate(rb.rate),
        fmtRate(rbare.rate),
        (rb.rate / ra.rate).toFixed(2),
        (ra.rate / rbare.rate).toFixed(2),
        (rb.rate / rbare.rate).toFixed(2),
        `${ra.serverCpuUsPerRequest.toFixed(1)} / ${rb.serverCpuUsPerRequest.toFixed(1)} / ${rbare.serverCpuUsPerRequest.toFixed(1)}`,
      ]);
    }
    rows.push([
      'median',
      '',
      '',
      '',
      median(ratios.ba).toFixed(2),
      median(ratios.abare).toFixed(2),
      median(ratios.bbare).toFixed(2),
      `${median(ratios.cpuA).toFixed(1)} / ${median(ratios.cpuB).toFixed(1)} / ${median(ratios.cpuBare).toFixed(1)}`,
    ]);
    console.log(`\n${endpoint}, ${generator}, 100 connections, pipelining ${pipelining}, ${seconds} s per run (A = ${baselineDir}, B = this checkout)`);
    console.log(textTable(['rep', 'A', 'B', 'bare', 'B/A', 'A/bare', 'B/bare', 'CPU µs/request A / B / bare'], rows));
  }
} finally {
  await Promise.all(servers.map((s) => s.stop()));
}
console.log(`\nload average before ${loadBefore}, after ${load()}`);
