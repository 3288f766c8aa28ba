/**
 * Runs a scenario the way `keysim run --target URL [--history]` does (the real runner, real HTTP)
 * against a test service, and gives back the report, its exit code and a readable digest of what
 * failed, for the tests of the live scenarios.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SCENARIOS } from '../../scenarios/index.js';
import { exitCodeOf } from '../../src/cli/commands/run.js';
import type { ExitCode } from '../../src/cli/exit-codes.js';
import { runScenario } from '../../src/load/run/runner.js';
import type { LoadSettings, Scenario } from '../../src/load/scenario/scenario.js';
import { detectUrlTarget, liveTarget, startEmbeddedSimulator } from '../../src/load/target/target.js';
import type { RunReport } from '../../src/report/model.js';
import type { PromiseSet } from '../../src/load/promises/index.js';
import { type Threshold, parseThreshold } from '../../src/load/run/thresholds.js';

/** A threshold expression parsed, as --threshold is (a test's own typo throws). */
function parsedThreshold(expression: string): Threshold {
  const parsed = parseThreshold(expression);
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.threshold;
}

const BASE: LoadSettings = { rate: 20, connections: 8, pipelining: 1, durationMs: 2_000, warmupMs: 0, timeoutMs: 10_000, model: 'open' };

export interface LiveRun {
  report: RunReport;
  exit: ExitCode;
  /** Failed checks, thresholds and invariant violations, one per line. */
  failures: string;
  logs: string[];
}

export async function runLive(
  name: string,
  /** `simulator: true`: a keysim simulator reached over its URL, recognised as `keysim run --target` does (its admin surface, its clock). */
  target: { url: string; rootKey: string; simulator?: boolean } | 'sim',
  /** `promises`: the promise set the run judges against (`--consistency`), default exact; `thresholds`: as `--threshold`. */
  options: { history?: boolean; settings?: Partial<LoadSettings>; seed?: number; promises?: PromiseSet; thresholds?: readonly string[] } = {},
): Promise<LiveRun> {
  const scenario = SCENARIOS[name] as Scenario<unknown>;
  const t =
    target === 'sim'
      ? await startEmbeddedSimulator({ seed: 3 })
      : target.simulator === true
        ? (await detectUrlTarget(target.url, target.rootKey)).target
        : liveTarget(target.url, target.rootKey);
  const dir = options.history === true ? mkdtempSync(join(tmpdir(), 'keysim-live-')) : undefined;
  const logs: string[] = [];
  try {
    const report = await runScenario({
      scenario,
      target: t,
      settings: { ...BASE, ...scenario.defaults, ...options.settings },
      seed: options.seed ?? 7,
      thresholds: (options.thresholds ?? []).map(parsedThreshold),
      ...(options.promises === undefined ? {} : { promises: options.promises }),
      keep: false,
      keysimVersion: 'test',
      log: (line) => logs.push(line),
      // These tests judge the scenarios' verdicts, not the generator's pace: on a busy machine a
      // run judged generator-limited (exit 97) would hide the verdict they are about.
      generatorLimits: { lateShare: 1, loopDelayP99Ms: Number.POSITIVE_INFINITY },
      ...(dir === undefined ? {} : { historyPath: join(dir, 'history.jsonl.gz') }),
    });
    const failures = [
      ...report.checks.filter((c) => !c.passed).map((c) => `check ${c.name}: ${c.detail}`),
      ...(report.invariants?.violations ?? []).map((v) => `invariant ${v.invariant} ${v.subject}: ${v.message}`),
      ...report.thresholds.filter((t) => !t.passed).map((t) => `threshold ${t.expression}: ${t.detail}`),
    ].join('\n');
    return { report, exit: exitCodeOf(report), failures, logs };
  } finally {
    await t.close();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  }
}
