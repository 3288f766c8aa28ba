/**
 * Figure 2: resident memory for 1,000,000 keys with credits and a monthly refill. Each run is a
 * fresh process started with --expose-gc: build the engine, collect, read memory; create the keys
 * through engine.keys.createKey (plaintexts are dropped, as a client would keep them, not the
 * engine); collect again and read memory.
 */
import { HASH_LABEL, HASH_SHORT, type HashVariant, buildEngine, createCreditKey } from './fixture.js';
import { progress, runChild, runPool } from './subprocess.js';
import { type SummaryRow, fmtInt, fmtMB, fmtNs, median, secondsSince, textTable, yesNo } from './stats.js';

export const MEMORY_TARGET_BYTES = 600e6;
export const MEMORY_KEYS = 1_000_000;
const PARALLEL = 2;

interface Usage {
  rss: number;
  heapUsed: number;
}

export interface MemoryChildResult {
  variant: HashVariant;
  keys: number;
  createSeconds: number;
  before: Usage;
  after: Usage;
}

function collect(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error('the memory benchmark needs node --expose-gc');
  for (let i = 0; i < 3; i++) gc();
}

function usage(): Usage {
  const { rss, heapUsed } = process.memoryUsage();
  return { rss, heapUsed };
}

/** Child side. */
export function measureMemory(variant: HashVariant, count: number): MemoryChildResult {
  const fx = buildEngine(variant);
  collect();
  const before = usage();
  const start = process.hrtime.bigint();
  for (let i = 0; i < count; i++) {
    createCreditKey(fx, 1_000);
    if ((i + 1) % 250_000 === 0) progress(`memory (${HASH_SHORT[variant]}): ${fmtInt(i + 1)} keys`);
  }
  const createSeconds = secondsSince(start);
  collect();
  const after = usage();
  // Reading the engine here keeps it (and its keys) alive through the measurement above.
  const keys = fx.engine.stats().keys;
  if (keys !== count) throw new Error(`expected ${count} keys, the engine holds ${keys}`);
  return { variant, keys, createSeconds, before, after };
}

export interface MemoryPlan {
  /** Runs with the engine's default hash (the figure against the target). */
  defaultRuns: number;
  /** Runs with node:crypto injected (context: the string the hash returns differs). */
  nodeRuns: number;
  /**
   * Time budget (a Date.now() instant): the first default and node runs always happen; further
   * runs start only while the previous batch's duration still fits before this instant.
   */
  finishBy?: number;
}

/** Parent side. */
export async function memoryReport(plan: MemoryPlan): Promise<{ text: string; summary: SummaryRow[] }> {
  // Memory does not depend on timing, so runs share the two cores (this halves the wall time).
  const first: HashVariant[] = [];
  if (plan.defaultRuns > 0) first.push('ts');
  if (plan.nodeRuns > 0) first.push('node');
  const rest: HashVariant[] = [
    ...Array<HashVariant>(Math.max(0, plan.defaultRuns - 1)).fill('ts'),
    ...Array<HashVariant>(Math.max(0, plan.nodeRuns - 1)).fill('node'),
  ];
  const run = (variant: HashVariant) => () =>
    runChild<MemoryChildResult>('memory', [variant, String(MEMORY_KEYS)], { exposeGc: true, timeoutMs: 170_000 });
  const all: MemoryChildResult[] = [];
  let skipped = 0;
  for (let batch = first; batch.length > 0; batch = rest.splice(0, PARALLEL)) {
    const started = Date.now();
    all.push(...(await runPool(batch.map(run), PARALLEL)));
    if (plan.finishBy !== undefined && rest.length > 0 && Date.now() + (Date.now() - started) > plan.finishBy) {
      skipped = rest.length;
      break;
    }
  }
  const groups = (['ts', 'node'] as const)
    .map((variant) => ({ variant, results: all.filter((r) => r.variant === variant) }))
    .filter((g) => g.results.length > 0);
  const target = `< ${fmtMB(MEMORY_TARGET_BYTES)}`;
  const rows = groups.map(({ variant, results }) => {
    const m = (f: (r: MemoryChildResult) => number) => median(results.map(f));
    const rssAfter = m((r) => r.after.rss);
    return [
      HASH_SHORT[variant],
      String(results.length),
      fmtInt(MEMORY_KEYS),
      fmtMB(m((r) => r.before.rss)),
      fmtMB(rssAfter),
      fmtMB(m((r) => r.before.heapUsed)),
      fmtMB(m((r) => r.after.heapUsed)),
      `${fmtInt(m((r) => (r.after.heapUsed - r.before.heapUsed) / r.keys))} B`,
      `${fmtInt(m((r) => (r.after.rss - r.before.rss) / r.keys))} B`,
      `${m((r) => r.createSeconds).toFixed(1)} s (${fmtNs(m((r) => (r.createSeconds * 1e9) / r.keys))}/key)`,
      target,
      yesNo(rssAfter < MEMORY_TARGET_BYTES),
    ];
  });
  const text = [
    `2. Resident memory for ${fmtInt(MEMORY_KEYS)} keys with credits and monthly refill (fresh process per run, --expose-gc, gc before each reading; median of the runs; 1 MB = 10^6 bytes)`,
    '',
    textTable(
      ['sha256', 'runs', 'keys', 'RSS before', 'RSS after', 'heap before', 'heap after', 'heap/key', 'RSS/key', 'createKey time', 'target (RSS after)', 'meets target'],
      rows,
    ),
    '',
    '   "before" = engine with its workspace, root key and API (the process includes the tsx loader); "after" = the same process holding the keys.',
    `   Runs go ${PARALLEL} at a time, so createKey time is indicative only (not a throughput figure).`,
    ...(skipped > 0 ? [`   ${skipped} further run(s) skipped to stay within the time budget (the machine is slow right now).`] : []),
  ].join('\n');
  const summary: SummaryRow[] = groups.map(({ variant, results }) => ({
    figure: `Resident memory (RSS), ${fmtInt(MEMORY_KEYS)} keys with credits + monthly refill, ${HASH_LABEL[variant]}${results.length === 1 ? ' (1 run)' : ''}`,
    median: `${fmtMB(median(results.map((r) => r.after.rss)))} (${fmtInt(median(results.map((r) => (r.after.heapUsed - r.before.heapUsed) / r.keys)))} B heap/key)`,
    target,
  }));
  return { text, summary };
}
