/**
 * One run, one verdict, on a busy machine: `tsx bench/busy-verdict.ts [--runs N] [--hogs N]`
 * (or `npm run bench busy`). Prints tallies, asserts nothing (a benchmark, not a timed test).
 *
 * Beside six CPU-bound processes it starts itself (`node -e` busy loops, killed at the end, also on
 * an error, Ctrl-C or SIGTERM, and ending by themselves after the longest the series can take), it runs `npm start`'s job — the built CLI, `keysim run mixed`, into a
 * temporary out folder — N times and counts the exit codes; then N runs of the same with every
 * answer 400 ms late (`--fault latencyMs=400`), which the mixed scenario's own threshold
 * `p99 < 250ms` must fail (no threshold is added), counting exit 99. The targets: at least 9 of 10
 * exit 0, and at least 9 of 10 exit 99, however busy the machine (a lagging generator's run is
 * inconclusive, 97, only when its lag may explain a failed threshold).
 *
 * Needs `npm run build` first. Bounded: each run is stopped after 7 minutes. `--series start` or
 * `--series fault` runs one of the two series only (default both).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadText } from './machine.js';
import type { SummaryRow } from './stats.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CLI = join(ROOT, 'dist', 'src', 'cli', 'main.js');
/**
 * A run's bound. The 400 ms series is long by nature: at 300 sends/s over the scenario's fixed
 * connections, answers 400 ms late drain the queue for about two minutes after the 12 s of load
 * (which is what its corrected latency measures), and a machine busy with other work stretches
 * that; a bound of 3 minutes killed runs still draining, so it is 7.
 */
const RUN_TIMEOUT_MS = 420_000;
const FAULT = 'latencyMs=400';

interface RunOutcome {
  code: number | string;
  /** The thresholds' verdicts and details, from the run's report.json. */
  thresholds: string[];
  limited: boolean | undefined;
  load: string;
}

/**
 * Busy-loops in other processes, so the run shares the machine's cores with them. Each ends by
 * itself after `lifetimeMs`, so that a benchmark killed outright (SIGKILL: no handler runs) leaves
 * no busy process behind on a shared machine.
 */
function startHogs(count: number, lifetimeMs: number): ChildProcess[] {
  const loop = `const end = Date.now() + ${Math.round(lifetimeMs)}; for (;;) { if (Date.now() > end) break; }`;
  return Array.from({ length: count }, () => spawn(process.execPath, ['-e', loop], { stdio: 'ignore' }));
}

function stopHogs(hogs: readonly ChildProcess[]): void {
  for (const hog of hogs) if (hog.exitCode === null && hog.signalCode === null) hog.kill('SIGKILL');
}

/** The report.json a run wrote into its out folder (one run folder), read for its verdicts. */
function readVerdicts(out: string): Pick<RunOutcome, 'thresholds' | 'limited'> {
  for (const folder of readdirSync(out)) {
    const file = join(out, folder, 'report.json');
    if (!existsSync(file)) continue;
    const report = JSON.parse(readFileSync(file, 'utf8')) as {
      thresholds: Array<{ expression: string; passed: boolean; inconclusive?: boolean; detail: string }>;
      generator?: { limited: boolean };
    };
    return {
      thresholds: report.thresholds.map((t) => `${t.passed ? 'passed' : t.inconclusive === true ? 'inconclusive' : 'failed'} ${t.expression}: ${t.detail}`),
      limited: report.generator?.limited,
    };
  }
  return { thresholds: [], limited: undefined };
}

/** The run in progress, stopped with the busy loops when the benchmark is. */
let current: ChildProcess | undefined;

/** One `keysim run mixed` on the built CLI; its exit code (or the signal that ended it). */
function runOnce(extra: readonly string[]): Promise<RunOutcome> {
  const out = mkdtempSync(join(tmpdir(), 'keysim-busy-'));
  const load = loadText();
  return new Promise<RunOutcome>((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, 'run', 'mixed', '--out', out, '--quiet', ...extra], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
    current = child;
    let stderr = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      stderr = (stderr + chunk).slice(-2_000);
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), RUN_TIMEOUT_MS);
    child.on('error', (error) => {
      clearTimeout(timer);
      rmSync(out, { recursive: true, force: true });
      reject(error);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      current = undefined;
      try {
        const verdicts = readVerdicts(out);
        if (code === 1 || code === 2) process.stderr.write(`  keysim exited ${code}: ${stderr.trim()}\n`);
        resolve({ code: code ?? String(signal), ...verdicts, load });
      } finally {
        rmSync(out, { recursive: true, force: true });
      }
    });
  });
}

function tally(outcomes: readonly RunOutcome[]): string {
  const counts = new Map<string, number>();
  for (const o of outcomes) counts.set(String(o.code), (counts.get(String(o.code)) ?? 0) + 1);
  return [...counts]
    .sort((a, b) => b[1] - a[1])
    .map(([code, n]) => `exit ${code} ×${n}`)
    .join(', ');
}

async function series(label: string, runs: number, extra: readonly string[]): Promise<RunOutcome[]> {
  const outcomes: RunOutcome[] = [];
  for (let i = 0; i < runs; i++) {
    const outcome = await runOnce(extra);
    outcomes.push(outcome);
    process.stderr.write(
      `  ${label} ${i + 1}/${runs}: exit ${outcome.code} (load ${outcome.load}; ${outcome.limited === undefined ? 'no report' : outcome.limited ? 'the generator lagged' : 'the generator kept its schedule'})\n`,
    );
    for (const t of outcome.thresholds) if (!t.startsWith('passed') || outcome.code !== 0) process.stderr.write(`    ${t}\n`);
  }
  return outcomes;
}

/** The two series beside `hogs` busy processes; the printed tallies and the summary rows. */
export async function busyVerdictReport(runs = 10, hogs = 6, only: Series | 'both' = 'both'): Promise<{ text: string; summary: SummaryRow[] }> {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` first (the benchmark runs the built CLI, as npm start does).`);
  // The longest the two series can take (every run stopped at its timeout), and a minute more.
  const busy = startHogs(hogs, (only === 'both' ? 2 : 1) * runs * RUN_TIMEOUT_MS + 60_000);
  const onExit = () => {
    stopHogs(busy);
    current?.kill('SIGKILL');
  };
  const onSignal = () => {
    stopHogs(busy);
    current?.kill('SIGKILL');
    process.exit(130);
  };
  process.once('exit', onExit);
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    const before = loadText();
    const normal = only === 'fault' ? [] : await series('npm start', runs, []);
    const slow = only === 'start' ? [] : await series(`--fault ${FAULT}`, runs, ['--fault', FAULT]);
    const ok = normal.filter((o) => o.code === 0).length;
    const failed = slow.filter((o) => o.code === 99).length;
    const lagged = [...normal, ...slow].filter((o) => o.limited === true).length;
    const lines = [
      `Busy-machine verdict: keysim run mixed (npm start's job) beside ${hogs} busy-looping processes, ${runs} runs each; load average before ${before}, after ${loadText()} (1, 5, 15 min)`,
    ];
    const summary: SummaryRow[] = [];
    if (only !== 'fault') {
      lines.push(`  as it is:                                 ${tally(normal)} — ${ok} of ${runs} exit 0 (target ≥ 90 %)`);
      summary.push({ figure: `busy machine (${hogs} hogs): npm start exits 0`, median: `${ok}/${runs}`, target: '≥ 90 %' });
    }
    if (only !== 'start') {
      lines.push(
        `  every answer 400 ms late (--fault ${FAULT}): ${tally(slow)} — ${failed} of ${runs} exit 99 on the scenario's own "p99 < 250ms" (target ≥ 90 %)`,
      );
      summary.push({ figure: `busy machine (${hogs} hogs): 400 ms answers exit 99`, median: `${failed}/${runs}`, target: '≥ 90 %' });
    }
    lines.push(`  the generator lagged (over its limits) in ${lagged} of ${normal.length + slow.length} runs`);
    return { text: lines.join('\n'), summary };
  } finally {
    stopHogs(busy);
    process.off('exit', onExit);
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

type Series = 'start' | 'fault';

function seriesFlag(): Series | 'both' {
  const i = process.argv.indexOf('--series');
  if (i < 0) return 'both';
  const value = process.argv[i + 1];
  if (value === 'start' || value === 'fault' || value === 'both') return value;
  console.error(`--series takes start, fault or both, got ${value ?? 'nothing'}`);
  process.exit(2);
}

function flag(name: string, fallback: number): number {
  const i = process.argv.indexOf(name);
  if (i < 0) return fallback;
  const value = Number(process.argv[i + 1]);
  if (!Number.isInteger(value) || value < 1) {
    console.error(`${name} takes a whole number ≥ 1, got ${process.argv[i + 1] ?? 'nothing'}`);
    process.exit(2);
  }
  return value;
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const report = await busyVerdictReport(flag('--runs', 10), flag('--hogs', 6), seriesFlag());
  console.log(report.text);
}
