/**
 * Figure 7: how often `keysim compare` is right — information only, nothing is asserted.
 *
 * 20 pairs of fresh runs of one set-up (the `mixed` scenario on the embedded simulator, 8 s
 * each) are compared: every "worse" among them is a false alarm (target: at most 1). Then
 * 20 runs with an injected latency fault (a few ms on keys.verifyKey, 80 % of mixed's requests)
 * are each compared with one of the fault-free runs: every comparison should say "worse" (target:
 * at least 19). The watched figures are p50 and p99 of keys.verifyKey and the error share, with the
 * default noise (5 %), one run per side (block bootstrap, 1000 resamples).
 *
 * Runs are in this process, one after another (the simulator in its worker thread). A run the
 * generator could not pace is still compared and counted — `keysim compare` then holds a latency
 * "worse" back as inconclusive — and the figures are also given for the comparisons in which no
 * run was generator-limited, which is what a quiet machine gives. The same pairs are judged again with a larger
 * --noise (no new runs), to show what the threshold buys on a noisy machine. The judging itself is
 * compare-judge.ts, which compare-rejudge.ts shares to judge saved runs again.
 */
import { SCENARIOS } from '../scenarios/index.js';
import { runScenario } from '../src/load/run/runner.js';
import type { LoadSettings, Scenario } from '../src/load/scenario/scenario.js';
import { startEmbeddedSimulator } from '../src/load/target/target.js';
import type { RunReport } from '../src/report/model.js';
import { keysimVersion } from '../src/version.js';
import { type RunTriple, judgeTriples } from './compare-judge.js';
import { type SummaryRow, fmtInt, secondsSince } from './stats.js';
import { progress } from './subprocess.js';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * KEYSIM_BENCH_SAVE_RUNS=DIR keeps every run's report (same-<i>-a.json, same-<i>-b.json,
 * fault-<i>.json), so a change to the statistics can be judged again on the very same runs
 * (`tsx bench/compare-rejudge.ts DIR`) without sixty new runs on a machine that must be quiet.
 */
const SAVE_DIR = process.env['KEYSIM_BENCH_SAVE_RUNS'];
function save(name: string, report: RunReport): void {
  if (SAVE_DIR === undefined || SAVE_DIR === '') return;
  mkdirSync(SAVE_DIR, { recursive: true });
  writeFileSync(join(SAVE_DIR, `${name}.json`), JSON.stringify(report));
}

const PAIRS = 20;
const SETTINGS: LoadSettings = { model: 'open', rate: 200, connections: 16, pipelining: 1, durationMs: 8_000, warmupMs: 1_000, timeoutMs: 10_000 };
const FAULT = { latencyMs: { min: 2, max: 6 }, operations: ['keys.verifyKey'] } as const;

async function oneRun(seed: number, fault: boolean): Promise<RunReport> {
  const target = await startEmbeddedSimulator({ seed, ...(fault ? { faults: { latencyMs: { ...FAULT.latencyMs }, operations: [...FAULT.operations] } } : {}) });
  try {
    return await runScenario({
      scenario: SCENARIOS['mixed'] as Scenario<unknown>,
      target,
      settings: SETTINGS,
      seed,
      thresholds: [],
      keep: false,
      keysimVersion: keysimVersion(),
    });
  } finally {
    await target.close();
  }
}

export async function compareStatisticsReport(): Promise<{ text: string; summary: SummaryRow[] }> {
  const started = process.hrtime.bigint();
  const triples: RunTriple[] = [];
  let limited = 0;
  for (let i = 0; i < PAIRS; i++) {
    progress(`pair ${i + 1}/${PAIRS}`);
    const a = await oneRun(1000 + i, false);
    const b = await oneRun(2000 + i, false);
    const f = await oneRun(3000 + i, true);
    save(`same-${i + 1}-a`, a);
    save(`same-${i + 1}-b`, b);
    save(`fault-${i + 1}`, f);
    limited += [a, b, f].filter((r) => r.generator?.limited === true).length;
    triples.push({ a, b, f });
  }
  const judged = judgeTriples(triples, { betweenRuns: true });
  const text = [
    `Figure 7: keysim compare's verdicts (mixed scenario, ${SETTINGS.rate}/s for ${SETTINGS.durationMs / 1000} s after ${SETTINGS.warmupMs / 1000} s warm-up, one run per side;`,
    `fault: latencyMs=${FAULT.latencyMs.min}..${FAULT.latencyMs.max} on keys.verifyKey; watched: p50 and p99 of keys.verifyKey, errors; noise 5 %)`,
    ...judged.lines,
    `${limited} of ${PAIRS * 3} runs were generator-limited (the machine is shared); ${fmtInt(secondsSince(started))} s in all.`,
  ].join('\n');
  return {
    text,
    summary: [
      { figure: 'compare: false "worse" in 20 identical comparisons', median: String(judged.falseWorse), target: '≤ 1' },
      { figure: 'compare: "worse" in 20 comparisons with a latency fault', median: String(judged.detected), target: '≥ 19' },
    ],
  };
}
