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
 * --noise (no new runs), to show what the threshold buys on a noisy machine.
 */
import { SCENARIOS } from '../scenarios/index.js';
import { runScenario } from '../src/load/runner.js';
import type { LoadSettings, Scenario } from '../src/load/scenario.js';
import { startEmbeddedSimulator } from '../src/load/target.js';
import { type CompareInput, compareRuns } from '../src/report/compare.js';
import type { Comparison } from '../src/report/compare-model.js';
import { parseWatch } from '../src/report/compare-watch.js';
import type { RunReport } from '../src/report/model.js';
import { keysimVersion } from '../src/version.js';
import { type SummaryRow, fmtInt, median, secondsSince, textTable } from './stats.js';
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
const WATCHES = ['p50(keys.verifyKey)', 'p99(keys.verifyKey)', 'errors'].map((w) => {
  const parsed = parseWatch(w);
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.watch;
});

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

function compare(a: RunReport, b: RunReport, label: string, noise = 0.05): Comparison {
  const result = compareRuns([{ source: `${label} baseline`, report: a } satisfies CompareInput], [{ source: `${label} candidate`, report: b }], { watches: WATCHES, noise });
  if (!result.ok) throw new Error(result.error);
  return result.comparison;
}

function p50Change(c: Comparison): number {
  return (c.figures.find((f) => f.figure === 'p50' && f.operation === 'keys.verifyKey')?.change ?? Number.NaN) * 100;
}

export async function compareStatisticsReport(): Promise<{ text: string; summary: SummaryRow[] }> {
  const started = process.hrtime.bigint();
  const same: Comparison[] = [];
  const faulty: Comparison[] = [];
  let limited = 0;
  const pairs: Array<[RunReport, RunReport, RunReport]> = [];
  for (let i = 0; i < PAIRS; i++) {
    progress(`pair ${i + 1}/${PAIRS}`);
    const a = await oneRun(1000 + i, false);
    const b = await oneRun(2000 + i, false);
    const f = await oneRun(3000 + i, true);
    save(`same-${i + 1}-a`, a);
    save(`same-${i + 1}-b`, b);
    save(`fault-${i + 1}`, f);
    limited += [a, b, f].filter((r) => r.generator?.limited === true).length;
    pairs.push([a, b, f]);
    same.push(compare(a, b, `same ${i + 1}`));
    faulty.push(compare(a, f, `fault ${i + 1}`));
  }
  const falseWorse = same.filter((c) => c.worse.length > 0).length;
  const detected = faulty.filter((c) => c.worse.length > 0).length;
  // Comparisons in which neither run's generator fell behind: what a quiet machine would give.
  const paced = (c: Comparison) => ![...c.baseline, ...c.candidate].some((r) => r.generatorLimited);
  const pacedSame = same.filter(paced);
  const pacedFaulty = faulty.filter(paced);
  const heldBack = (cs: Comparison[]) => cs.filter((c) => c.figures.some((f) => f.watched && f.note?.startsWith('held back') === true)).length;
  const tally = (cs: Comparison[]) => {
    const verdicts = cs.map((c) => c.figures.find((f) => f.figure === 'p50' && f.operation === 'keys.verifyKey')?.verdict ?? 'n/a');
    return ['worse', 'same', 'inconclusive', 'better'].map((v) => `${v} ${verdicts.filter((x) => x === v).length}`).join(', ');
  };
  const rows = [
    ['identical set-ups: comparisons "worse"', `${falseWorse} of ${PAIRS}`, '≤ 1', tally(same), `${median(same.map(p50Change)).toFixed(1)} %`],
    ['latency fault: comparisons "worse"', `${detected} of ${PAIRS}`, '≥ 19', tally(faulty), `${median(faulty.map(p50Change)).toFixed(1)} %`],
  ];
  const byNoise = [0.1, 0.2].map((noise) => {
    const s = pairs.filter(([a, b], i) => compare(a, b, `same ${i + 1}`, noise).worse.length > 0).length;
    const d = pairs.filter(([a, , f], i) => compare(a, f, `fault ${i + 1}`, noise).worse.length > 0).length;
    return [`--noise ${noise * 100}%`, `${s} of ${PAIRS}`, `${d} of ${PAIRS}`];
  });
  const text = [
    `Figure 7: keysim compare's verdicts (mixed scenario, ${SETTINGS.rate}/s for ${SETTINGS.durationMs / 1000} s after ${SETTINGS.warmupMs / 1000} s warm-up, one run per side;`,
    `fault: latencyMs=${FAULT.latencyMs.min}..${FAULT.latencyMs.max} on keys.verifyKey; watched: p50 and p99 of keys.verifyKey, errors; noise 5 %)`,
    textTable(['comparisons', 'result', 'target', 'p50(keys.verifyKey) verdicts', 'median p50 change'], rows),
    `Of these, comparisons in which neither run was generator-limited: identical set-ups ${pacedSame.filter((c) => c.worse.length > 0).length} "worse" of ${pacedSame.length}, with the fault ${pacedFaulty.filter((c) => c.worse.length > 0).length} "worse" of ${pacedFaulty.length}.`,
    `Comparisons with a watched verdict held back as inconclusive because a run was generator-limited: identical ${heldBack(same)}, fault ${heldBack(faulty)}.`,
    'The same pairs judged with a larger practical threshold:',
    textTable(['threshold', 'identical: "worse"', 'fault: "worse"'], byNoise),
    `${limited} of ${PAIRS * 3} runs were generator-limited (the machine is shared); ${fmtInt(secondsSince(started))} s in all.`,
  ].join('\n');
  return {
    text,
    summary: [
      { figure: 'compare: false "worse" in 20 identical comparisons', median: String(falseWorse), target: '≤ 1' },
      { figure: 'compare: "worse" in 20 comparisons with a latency fault', median: String(detected), target: '≥ 19' },
    ],
  };
}
