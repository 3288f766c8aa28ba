/**
 * Where the simulator's time goes under the HTTP benchmark's load: `tsx bench/http-profile.ts
 * [verifyKey|ratelimit] [seconds] [pipelining]`. Starts the simulator and the bare server in their
 * own processes with `--cpu-prof`, loads each with autocannon from this process (50 connections,
 * pipelining 1 unless given: the benchmark's other setting is 10), and prints each profile's CPU
 * time per request by layer and the functions with the most self and inclusive time. Not part of
 * `npm run bench`: a tool for when the ratio is low.
 *
 * The profiler samples wall time, so a process the shared machine preempts shows that time in
 * whatever it was doing (mostly the writev syscall); shares between functions are what to read.
 * Through tsx, .ts files are whitespace-minified (no useful line numbers) and named closures are
 * wrapped by `__name`; for the code as shipped, compile (`tsc -p tsconfig.json --noEmit false
 * --outDir <dir> --rootDir .`, with package.json and a node_modules link in <dir>) and run
 * `node <dir>/bench/http-profile.js`: the servers then start from the compiled files.
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ServerKind, type ServerProcess, startServer } from './http-server.js';
import { ENDPOINTS, type Endpoint, checksPassed, runLoad, workloadFor } from './http-load.js';
import { fmtRate, textTable } from './stats.js';
import { type CallFrame, type CpuProfile, analyseProfile, layerTable, shareOfBusy, top } from './cpu-profile.js';

const endpointArg = process.argv[2] ?? 'verifyKey';
if (!(ENDPOINTS as readonly string[]).includes(endpointArg)) throw new Error(`expected one of ${ENDPOINTS.join(', ')}`);
const endpoint = endpointArg as Endpoint;
const seconds = Number(process.argv[3] ?? 8);
const pipelining = Number(process.argv[4] ?? 1);
if (!Number.isInteger(pipelining) || pipelining < 1) throw new Error('pipelining: an integer ≥ 1');

/** The layer a frame belongs to, for the breakdown. */
function layer(f: CallFrame): string {
  if (f.functionName === '(idle)') return '(idle)';
  if (f.functionName === '(garbage collector)') return 'GC';
  if (f.functionName === '(program)') return '(program: V8/native, unattributed)';
  if (f.url.includes('/src/engine/')) return 'src/engine';
  if (f.url.includes('/src/http/')) return 'src/http';
  if (f.url.includes('/bench/')) return 'bench (bare server)';
  if (f.url.startsWith('node:')) {
    const mod = f.url.slice('node:'.length);
    if (/^(_http_|internal\/http|http)/.test(mod)) return 'node:http';
    if (/^(net|internal\/stream_base_commons|internal\/net)/.test(mod)) return 'node:net';
    if (/^internal\/streams|^stream/.test(mod)) return 'node:streams';
    if (/^internal\/crypto|^crypto/.test(mod)) return 'node:crypto (JS)';
    if (/^(events|internal\/event_target)/.test(mod)) return 'node:events';
    if (/^internal\/(process\/task_queues|timers|async_hooks)|^timers/.test(mod)) return 'node:timers/ticks';
    return 'node: other';
  }
  if (f.url === '') return 'native/builtins (JSON, Buffer, writev, hash …)';
  return 'other';
}

async function profileOne(kind: ServerKind, simForWorkload: ServerProcess | undefined): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), `keysim-prof-${kind}-`));
  const server = await startServer(kind, ['--cpu-prof', `--cpu-prof-dir=${dir}`, '--cpu-prof-interval=200']);
  try {
    const workload = workloadFor(endpoint, (simForWorkload ?? server).ready);
    const warm = await runLoad(server, endpoint, workload, { connections: 50, pipelining, durationSeconds: 2 });
    const run = await runLoad(server, endpoint, workload, { connections: 50, pipelining, durationSeconds: seconds });
    await server.stop();
    const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
    if (file === undefined) throw new Error(`no profile written in ${dir}`);
    const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile;
    const a = analyseProfile(profile, layer);
    // Start-up, warm-up and the measured run are all in the profile (start-up is a few hundred ms).
    const requests = warm.completed + run.completed;
    const perAll = (ms: number) => `${((ms * 1000) / requests).toFixed(1)} µs`;
    console.log(
      `\n== ${kind === 'sim' ? 'simulator' : 'bare node:http'}, ${endpoint}, pipelining ${pipelining}: ${fmtRate(run.rate)} over ${seconds} s, answers right: ${checksPassed(run) ? 'yes' : 'NO'}`,
    );
    console.log(
      `   server CPU time per request during the measured run (process.cpuUsage): ${run.serverCpuUsPerRequest.toFixed(1)} µs; server CPU ${Math.round(run.serverCpuShare * 100)} %`,
    );
    console.log(
      `   profile: ${(a.totalMs / 1000).toFixed(1)} s, busy (sampled wall time, not idle) ${(a.busyMs / 1000).toFixed(1)} s ≈ ${perAll(a.busyMs)} per request (warm-up and measured run, ~${Math.round(requests).toLocaleString('en-US')} requests)\n`,
    );
    console.log(layerTable(a, perAll));
    console.log('');
    console.log(
      textTable(
        ['function (self time)', 'ms', 'share'],
        top(a.self, 25).map(([k, v]) => [k, v.toFixed(0), shareOfBusy(v, a)]),
      ),
    );
    console.log('');
    const own = top(a.self, 400)
      .filter(([k]) => /src\//.test(k))
      .slice(0, 25);
    if (own.length > 0) {
      console.log(
        textTable(
          ['own code (self time)', 'ms', 'per request'],
          own.map(([k, v]) => [k, v.toFixed(0), perAll(v)]),
        ),
      );
      console.log('');
    }
    const interesting = top(a.inclusive, 400)
      .filter(([k]) => /src\/|bench\/|^(parse|stringify|randomUUID|hash|digest|writeHead|end|_write|writev) /.test(k))
      .slice(0, 30);
    console.log(
      textTable(
        ['function (inclusive time, own code and hot builtins)', 'ms', 'share'],
        interesting.map(([k, v]) => [k, v.toFixed(0), shareOfBusy(v, a)]),
      ),
    );
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

// The bare server needs the simulator's fixture only for identical request bytes.
const fixture = await startServer('sim');
await fixture.stop();
await profileOne('sim', undefined);
await profileOne('bare', fixture);
