/**
 * keysim benchmarks: `npm run bench` (or `tsx bench/run-all.ts [verify] [memory] [clock] [http] [runner] [oracle] [compare] [workers] [busy] [replicas]`).
 *
 * Prints figures; never asserts on them ("Speed is measured, not asserted"). Each measurement
 * runs in a fresh child process; figures are medians of several runs with ratios against a
 * baseline measured in the same run, because the machine is shared and noisy. The exit code is
 * non-zero only when a benchmark fails to run, never because of a timing.
 */
import { describeMachine, machine, oneLineMachine } from './machine.js';
import { type SummaryRow, markdownTable, secondsSince } from './stats.js';
import { verifyReport } from './verify-throughput.js';
import { memoryKeysReport } from './memory-keys.js';
import { clockReport } from './clock-advance.js';
import { httpReport } from './http-throughput.js';
import { runnerReport } from './runner-ceiling.js';
import { oracleReport } from './oracle-overhead.js';
import { compareStatisticsReport } from './compare-statistics.js';
import { serveWorkersReport } from './serve-workers.js';
import { busyVerdictReport } from './busy-verdict.js';
import { storeReplicasReport } from './store-replicas.js';

type Section = 'verify' | 'memory' | 'clock' | 'http' | 'runner' | 'oracle' | 'compare' | 'workers' | 'busy' | 'replicas';
const SECTIONS: readonly Section[] = ['verify', 'memory', 'clock', 'http', 'runner', 'oracle', 'compare', 'workers', 'busy', 'replicas'];

const requested = process.argv.slice(2).filter((a): a is Section => (SECTIONS as readonly string[]).includes(a));
const unknownArgs = process.argv.slice(2).filter((a) => !(SECTIONS as readonly string[]).includes(a));
if (unknownArgs.length > 0) {
  console.error(`unknown argument(s): ${unknownArgs.join(' ')}; expected any of ${SECTIONS.join(', ')}`);
  process.exit(2);
}
const selected = requested.length > 0 ? SECTIONS.filter((s) => requested.includes(s)) : SECTIONS;

/**
 * The engine sections (verify, clock) should stay under three minutes even on a busy machine, the
 * memory section (a million keys created, snapshotted and restored) about two more; the http section (two generators where wrk is installed) takes about five minutes more on its own, and the runner section (the
 * load generator's own ceiling and memory) about two more; the oracle section (what the journal, the
 * replay and the history cost) under two more; the compare section (60 short runs: how often
 * `keysim compare` is right) about seven more; the workers section (`serve --workers`) about a
 * minute and a half more; the busy section (20 runs of `npm start`'s job beside six busy-looping
 * processes: one verdict per run on a busy machine) about six more; the replicas section (1 to 3
 * replicas on a Redis against one in-memory process) about three more.
 */

const reports: Record<Section, () => Promise<{ text: string; summary: SummaryRow[] }>> = {
  verify: verifyReport,
  // Memory does not depend on the machine's pace: one run (a minute or two) is the figure.
  memory: () => memoryKeysReport(1),
  clock: clockReport,
  http: httpReport,
  runner: runnerReport,
  oracle: oracleReport,
  compare: compareStatisticsReport,
  workers: serveWorkersReport,
  busy: () => busyVerdictReport(),
  replicas: storeReplicasReport,
};

const started = process.hrtime.bigint();
const m = machine();
console.log('keysim benchmarks: figures are printed, never asserted; "meets target" is information only.\n');
console.log(describeMachine(m));

const summary: SummaryRow[] = [];
let failed = false;
for (const section of selected) {
  console.error(`\n[${section}] running…`);
  try {
    const report = await reports[section]();
    console.log(`\n${report.text}`);
    summary.push(...report.summary);
  } catch (error) {
    failed = true;
    console.log(`\n[${section}] did not run: ${error instanceof Error ? error.message : String(error)}`);
  }
}

console.log('\nFor docs/benchmarks.md:\n');
console.log(
  markdownTable(
    ['figure', 'median', 'target'],
    summary.map((r) => [r.figure, r.median, r.target]),
  ),
);
console.log(`\nMeasured on ${oneLineMachine(m)}; medians of several runs on a shared machine (\`npm run bench\`).`);
console.error(`\nbench finished in ${secondsSince(started).toFixed(0)} s`);
if (failed) process.exitCode = 1;
