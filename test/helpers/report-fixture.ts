/**
 * Hand-built run reports, small load settings and run options for tests: pure values, no server and
 * no socket (so unit-tier files can use them; `load.ts` re-exports them beside its stub servers).
 */
import type { RunOptions } from '../../src/load/run/run-options.js';
import type { LoadSettings } from '../../src/load/scenario/scenario.js';
import { encodeHistogram, newHistogram, percentilesMs, recordMs } from '../../src/report/histogram.js';
import { type OperationStats, REPORT_SCHEMA, REPORT_VERSION, type RunReport } from '../../src/report/model.js';

/** Small, bounded settings; override what a test needs. */
export function loadSettings(overrides: Partial<LoadSettings> = {}): LoadSettings {
  return { rate: 50, connections: 4, pipelining: 1, durationMs: 2_000, warmupMs: 0, timeoutMs: 10_000, model: 'open', ...overrides };
}

/** What a test changes of the run options: any field, and `settings` as overrides of `loadSettings()`. */
export type RunOptionsOverrides = Partial<Omit<RunOptions, 'scenario' | 'target' | 'settings'>> & { settings?: Partial<LoadSettings> };

/**
 * The options of one bounded test run of `scenario` against `target`: small settings
 * (`loadSettings`), seed 1, no thresholds, nothing kept, version `0.0.0-test`; override what the
 * test is about, e.g. `runOptions(scenario, target, { settings: { rate: 40 }, historyPath })`.
 */
export function runOptions(scenario: RunOptions['scenario'], target: RunOptions['target'], overrides: RunOptionsOverrides = {}): RunOptions {
  const { settings, ...rest } = overrides;
  return { scenario, target, settings: loadSettings(settings), seed: 1, thresholds: [], keep: false, keysimVersion: '0.0.0-test', ...rest };
}

export interface OperationFixture {
  operation: string;
  /** Latencies in ms, corrected (one sample per request), of sends the generator made on time. */
  latenciesMs: readonly number[];
  /** Corrected latencies of sends the generator started late: in the corrected figures, not the on-time ones. */
  lateLatenciesMs?: readonly number[];
  statuses?: Record<string, number>;
  codes?: Record<string, number>;
  ratelimit?: { allowed: number; denied: number };
  transportErrors?: Partial<OperationStats['transportErrors']>;
  checkFailures?: number;
}

/** Operation figures from raw latencies, recorded in real histograms so the figures agree. */
export function operationStats(fixture: OperationFixture, measuredMs = 1_000): OperationStats {
  const corrected = newHistogram();
  const onTime = newHistogram();
  for (const ms of fixture.latenciesMs) recordMs(onTime, ms);
  for (const ms of [...fixture.latenciesMs, ...(fixture.lateLatenciesMs ?? [])]) recordMs(corrected, ms);
  const requests = fixture.latenciesMs.length + (fixture.lateLatenciesMs?.length ?? 0);
  return {
    operation: fixture.operation,
    requests,
    ratePerSec: Math.round((requests / (measuredMs / 1000)) * 100) / 100,
    latency: { corrected: percentilesMs(corrected), uncorrected: percentilesMs(corrected) },
    histograms: { corrected: encodeHistogram(corrected), uncorrected: encodeHistogram(corrected) },
    onTime: { latency: percentilesMs(onTime), histogram: encodeHistogram(onTime) },
    statuses: fixture.statuses ?? (requests > 0 ? { '200': requests } : {}),
    codes: fixture.codes ?? {},
    ratelimit: fixture.ratelimit ?? { allowed: 0, denied: 0 },
    transportErrors: { timeout: 0, reset: 0, refused: 0, other: 0, ...fixture.transportErrors },
    checkFailures: fixture.checkFailures ?? 0,
  };
}

/** Sums operation figures into the `all` row (latencies merged from the raw samples). */
function overallOf(fixtures: readonly OperationFixture[], measuredMs: number): OperationStats {
  const sum = (pick: (f: OperationFixture) => Record<string, number> | undefined) => {
    const out: Record<string, number> = {};
    for (const f of fixtures) for (const [k, v] of Object.entries(pick(f) ?? {})) out[k] = (out[k] ?? 0) + v;
    return out;
  };
  const allLatencies = fixtures.flatMap((f) => f.latenciesMs);
  return operationStats(
    {
      operation: 'all',
      latenciesMs: allLatencies,
      lateLatenciesMs: fixtures.flatMap((f) => f.lateLatenciesMs ?? []),
      statuses: sum(
        (f) =>
          f.statuses ?? (f.latenciesMs.length + (f.lateLatenciesMs?.length ?? 0) > 0 ? { '200': f.latenciesMs.length + (f.lateLatenciesMs?.length ?? 0) } : {}),
      ),
      codes: sum((f) => f.codes),
      ratelimit: {
        allowed: fixtures.reduce((n, f) => n + (f.ratelimit?.allowed ?? 0), 0),
        denied: fixtures.reduce((n, f) => n + (f.ratelimit?.denied ?? 0), 0),
      },
      transportErrors: sum((f) => f.transportErrors) as Partial<OperationStats['transportErrors']>,
      checkFailures: fixtures.reduce((n, f) => n + (f.checkFailures ?? 0), 0),
    },
    measuredMs,
  );
}

export interface ReportFixture {
  operations: readonly OperationFixture[];
  measuredMs?: number;
  totals?: Partial<RunReport['totals']>;
  checks?: RunReport['checks'];
  status?: RunReport['status'];
}

/** A complete, valid RunReport built by hand (thresholds empty). */
export function minimalReport(fixture: ReportFixture): RunReport {
  const measuredMs = fixture.measuredMs ?? 1_000;
  const operations = fixture.operations.map((f) => operationStats(f, measuredMs));
  const overall = overallOf(fixture.operations, measuredMs);
  const errors =
    Object.values(overall.transportErrors).reduce((a, b) => a + b, 0) +
    Object.entries(overall.statuses)
      .filter(([s]) => Number(s) >= 500)
      .reduce((a, [, n]) => a + n, 0);
  return {
    schema: REPORT_SCHEMA,
    version: REPORT_VERSION,
    scenario: { name: 'fixture', description: 'A hand-built report for tests.' },
    status: fixture.status ?? 'completed',
    seed: 1,
    startedAt: '2026-01-02T03:04:05.000Z',
    finishedAt: '2026-01-02T03:04:07.000Z',
    measuredMs,
    target: { kind: 'simulator', url: 'http://127.0.0.1:1' },
    settings: { model: 'open', rate: 100, connections: 4, pipelining: 1, durationMs: measuredMs, warmupMs: 0, timeoutMs: 10_000 },
    environment: {
      keysimVersion: '0.0.0-test',
      node: process.version,
      platform: process.platform,
      arch: process.arch,
      cpus: 2,
      cpuModel: 'test',
      totalMemoryBytes: 1,
    },
    phases: [{ name: 'load', startMs: 0, durationMs: measuredMs, rate: 100, warmup: false }],
    totals: { requests: overall.requests, errors, ratePerSec: overall.ratePerSec, late: 0, lateThresholdMs: 10, dropped: 0, ...fixture.totals },
    overall,
    operations,
    timeline: [],
    checks: fixture.checks ?? [],
    thresholds: [],
    notes: [],
  };
}
