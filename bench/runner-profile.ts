/**
 * Where the load generator's time goes at its ceiling or at a fixed rate:
 * `tsx bench/runner-profile.ts [pipelining] [seconds] [rate]`. Starts the bare server in its own
 * process, then runs the generator in a child process under `node --cpu-prof`: a warm-up and one
 * measured run of keysim's open model (asked for `rate`, or without it for 2× what autocannon
 * managed in its warm-up), and, in a second child, of autocannon alone (at `rate` when given);
 * prints each profile's CPU time per completed request by layer and the functions with the most
 * self and inclusive time. Not part of `npm run bench`: a tool for when the runner ceiling is low.
 *
 * The profiler samples wall time, so time the shared machine preempts shows up in whatever was
 * running (often the write syscall); shares between functions are what to read.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';
import { startServer } from './http-server.js';
import { BODY, CONNECTIONS, HEADERS, PATH, REQUEST, ROOT_KEY } from './runner-generators.js';
import { loadRunnerModules } from './runner-modules.js';
import { RESULT_PREFIX, sendResult } from './subprocess.js';
import { fmtRate, textTable } from './stats.js';
import { type CallFrame, type CpuProfile, analyseProfile, layerTable, shareOfBusy, top } from './cpu-profile.js';

interface GeneratorResult {
  tool: 'keysim' | 'autocannon';
  /** Completed requests in the whole process (warm-up and measured run). */
  completedAll: number;
  rate: number;
  cpuUsPerRequest: number;
  late?: number;
  dropped?: number;
  planned?: number;
}

/** autocannon as fast as it goes, or at `rate` requests per second over all connections when rate > 0. */
async function autocannonRun(url: string, pipelining: number, seconds: number, rate: number): Promise<{ completed: number; rate: number }> {
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    autocannon(
      {
        url: `${url}${PATH}`,
        method: 'POST',
        connections: CONNECTIONS,
        pipelining,
        duration: seconds,
        headers: HEADERS,
        body: JSON.stringify(BODY),
        ...(rate > 0 ? { overallRate: rate } : {}),
      },
      (error, res) => (error === null || error === undefined ? resolve(res) : reject(error instanceof Error ? error : new Error(String(error)))),
    );
  });
  return { completed: result.requests.total, rate: result.requests.total / result.duration };
}

/** Child side: runs under --cpu-prof and exits, which writes the profile. */
async function generate(tool: 'keysim' | 'autocannon', url: string, pipelining: number, rate: number, seconds: number): Promise<GeneratorResult> {
  if (tool === 'autocannon') {
    const warm = await autocannonRun(url, pipelining, 2, rate);
    const cpu = process.cpuUsage();
    const run = await autocannonRun(url, pipelining, seconds, rate);
    const used = process.cpuUsage(cpu);
    return { tool, completedAll: warm.completed + run.completed, rate: run.rate, cpuUsPerRequest: (used.user + used.system) / run.completed };
  }
  const mods = await loadRunnerModules();
  const once = async (durationSeconds: number) => {
    const [phase] = mods.planPhases([{ name: 'profile', durationMs: durationSeconds * 1000, rate, warmup: false }]);
    if (phase === undefined) throw new Error('no phase');
    const executor = new mods.OpenModelExecutor({ url, rootKey: ROOT_KEY, connections: CONNECTIONS, pipelining, timeoutMs: 10_000, lateThresholdMs: 10 });
    const recorder = new mods.Recorder();
    const cpu = process.cpuUsage();
    const startMs = performance.now();
    recorder.startMeasuring(startMs);
    const phaseDone = executor.runPhase(phase, startMs, () => REQUEST, recorder);
    // Stopped at the end of the planned duration, as runner-ceiling.ts does (no wind-down).
    const { wallMs, used, completed } = await new Promise<{ wallMs: number; used: NodeJS.CpuUsage; completed: number }>((resolve) => {
      setTimeout(() => {
        const mark = { wallMs: performance.now() - startMs, used: process.cpuUsage(cpu), completed: recorder.requests };
        recorder.freeze();
        executor.stop();
        resolve(mark);
      }, phase.durationMs);
    });
    const outcome = await phaseDone;
    await executor.close();
    recorder.finish(wallMs);
    return { completed, rate: completed / (wallMs / 1000), cpuUsPerRequest: (used.user + used.system) / completed, outcome, planned: phase.count };
  };
  const warm = await once(2);
  const run = await once(seconds);
  return {
    tool,
    completedAll: warm.completed + run.completed,
    rate: run.rate,
    cpuUsPerRequest: run.cpuUsPerRequest,
    late: run.outcome.late,
    dropped: run.outcome.dropped,
    planned: run.planned,
  };
}

function layer(f: CallFrame): string {
  if (f.functionName === '(garbage collector)') return 'GC';
  if (f.functionName === '(program)') return '(program: V8/native, unattributed)';
  if (/\/src\/load\/recorder\./.test(f.url)) return 'keysim Recorder';
  if (/\/src\/load\/http1\//.test(f.url)) return 'keysim HTTP/1.1 client (src/load/http1)';
  if (/\/src\/load\//.test(f.url)) return 'keysim executor (src/load)';
  if (/\/src\/report\//.test(f.url)) return 'keysim histogram wrapper (src/report)';
  if (f.url.includes('node_modules/hdr-histogram-js')) return 'hdr-histogram-js';
  if (f.url.includes('node_modules/undici')) return 'undici';
  if (f.url.includes('node_modules/autocannon')) return 'autocannon';
  if (f.url.includes('node_modules/')) return `node_modules/${f.url.replace(/^.*node_modules\/((@[^/]+\/)?[^/]+).*$/, '$1')}`;
  if (f.url.startsWith('node:')) {
    const mod = f.url.slice('node:'.length);
    if (/^(net|internal\/stream_base_commons|internal\/net)/.test(mod)) return 'node:net';
    if (/^internal\/streams|^stream/.test(mod)) return 'node:streams';
    if (/^(events|internal\/event_target)/.test(mod)) return 'node:events';
    if (/^internal\/(process\/task_queues|timers|async_hooks)|^timers/.test(mod)) return 'node:timers/ticks/promises';
    if (/^(_http_|internal\/http|http)/.test(mod)) return 'node:http';
    return 'node: other';
  }
  if (f.url === '') return 'native/builtins (JSON, Buffer, writev, wasm …)';
  return 'other';
}

const SELF = fileURLToPath(import.meta.url);
const TSX = import.meta.resolve('tsx');

function profileChild(
  tool: 'keysim' | 'autocannon',
  url: string,
  pipelining: number,
  rate: number,
  seconds: number,
): Promise<{ result: GeneratorResult; profile: CpuProfile }> {
  const dir = mkdtempSync(join(tmpdir(), `keysim-runner-prof-${tool}-`));
  const args = [
    '--cpu-prof',
    `--cpu-prof-dir=${dir}`,
    '--cpu-prof-interval=200',
    '--import',
    TSX,
    SELF,
    'generate',
    tool,
    url,
    String(pipelining),
    String(rate),
    String(seconds),
  ];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let stdout = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (c: string) => {
      stdout += c;
    });
    child.on('close', (code) => {
      try {
        if (code !== 0) throw new Error(`generator child exited with ${String(code)}`);
        const line = stdout.split('\n').find((l) => l.startsWith(RESULT_PREFIX));
        const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
        if (line === undefined || file === undefined) throw new Error('generator child printed no result or wrote no profile');
        resolve({
          result: JSON.parse(line.slice(RESULT_PREFIX.length)) as GeneratorResult,
          profile: JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile,
        });
      } catch (error) {
        reject(error instanceof Error ? error : new Error(String(error)));
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
}

function print(result: GeneratorResult, profile: CpuProfile): void {
  const a = analyseProfile(profile, layer);
  const per = (ms: number) => `${((ms * 1000) / result.completedAll).toFixed(2)} µs`;
  const extra = result.tool === 'keysim' ? `; planned ${result.planned ?? 0}, late ${result.late ?? 0}, dropped ${result.dropped ?? 0}` : '';
  console.log(
    `\n== ${result.tool}: ${fmtRate(result.rate)} in the measured run, CPU ${result.cpuUsPerRequest.toFixed(1)} µs per completed request (process.cpuUsage)${extra}`,
  );
  console.log(
    `   profile: busy ${(a.busyMs / 1000).toFixed(1)} s ≈ ${per(a.busyMs)} per request over warm-up and run (${result.completedAll.toLocaleString('en-US')} requests)\n`,
  );
  console.log(layerTable(a, per));
  console.log('');
  console.log(
    textTable(
      ['function (self time)', 'ms', 'share', 'per request'],
      top(a.self, 30).map(([k, v]) => [k, v.toFixed(0), shareOfBusy(v, a), per(v)]),
    ),
  );
  console.log('');
  const interesting = top(a.inclusive, 600)
    .filter(([k]) => /src\/load|src\/report|undici|autocannon|hdr-histogram|^(parse|stringify|JSON) /.test(k))
    .slice(0, 35);
  console.log(
    textTable(
      ['function (inclusive time)', 'ms', 'share', 'per request'],
      interesting.map(([k, v]) => [k, v.toFixed(0), shareOfBusy(v, a), per(v)]),
    ),
  );
}

if (process.argv[2] === 'generate') {
  const [, , , tool, url, pipelining, rate, seconds] = process.argv;
  if ((tool !== 'keysim' && tool !== 'autocannon') || url === undefined) throw new Error('generate keysim|autocannon <url> <pipelining> <rate> <seconds>');
  sendResult(await generate(tool, url, Number(pipelining), Number(rate), Number(seconds)));
  process.exit(0);
} else {
  const pipelining = Number(process.argv[2] ?? 1);
  const seconds = Number(process.argv[3] ?? 5);
  const fixedRate = Number(process.argv[4] ?? 0);
  const server = await startServer('bare');
  try {
    const ac = await profileChild('autocannon', server.ready.url, pipelining, fixedRate, seconds);
    const rate = fixedRate > 0 ? fixedRate : Math.ceil((2 * ac.result.rate) / 1000) * 1000;
    const ks = await profileChild('keysim', server.ready.url, pipelining, rate, seconds);
    console.log(`pipelining ${pipelining}, ${CONNECTIONS} connections, ${seconds} s measured after a 2 s warm-up; keysim asked for ${fmtRate(rate)}`);
    print(ac.result, ac.profile);
    print(ks.result, ks.profile);
  } finally {
    await server.stop();
  }
}
