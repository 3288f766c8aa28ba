/**
 * How figure 7 judges its runs, shared by the benchmark that makes the runs
 * (compare-statistics.ts) and the one that judges saved runs again (compare-rejudge.ts), so both
 * count the very same way: one run per side, the watched figures p50 and p99 of keys.verifyKey and
 * the error share, noise 5 % (then 10 % and 20 % on the same pairs), 1000 resamples, seed 1.
 */
import { type CompareInput, compareRuns } from '../src/report/compare.js';
import type { Comparison } from '../src/report/compare-model.js';
import { parseWatch } from '../src/report/compare-watch.js';
import type { RunReport } from '../src/report/model.js';
import { median, textTable } from './stats.js';

export const WATCHES = ['p50(keys.verifyKey)', 'p99(keys.verifyKey)', 'errors'].map((w) => {
  const parsed = parseWatch(w);
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.watch;
});

/** Two fault-free runs of one set-up (`a`, `b`) and a run with the latency fault (`f`), compared with `a`. */
export interface RunTriple {
  a: RunReport;
  b: RunReport;
  f: RunReport;
}

export interface JudgeOptions {
  /** The between-run term (docs/compare.md#the-between-run-term); false: the bootstrap of the seconds alone. */
  betweenRuns: boolean;
}

export function compareOne(a: RunReport, b: RunReport, label: string, noise: number, options: JudgeOptions): Comparison {
  const result = compareRuns([{ source: `${label} baseline`, report: a } satisfies CompareInput], [{ source: `${label} candidate`, report: b }], {
    watches: WATCHES,
    noise,
    betweenRuns: options.betweenRuns,
  });
  if (!result.ok) throw new Error(result.error);
  return result.comparison;
}

export function p50Of(c: Comparison) {
  const f = c.figures.find((x) => x.figure === 'p50' && x.operation === 'keys.verifyKey');
  if (f === undefined) throw new Error('no p50(keys.verifyKey) in the comparison');
  return f;
}

const p50Change = (c: Comparison) => (p50Of(c).change ?? Number.NaN) * 100;

export interface Judged {
  pairs: number;
  /** Comparisons of identical set-ups that said "worse" on a watched figure, at noise 5 %. */
  falseWorse: number;
  /** Comparisons with the fault that said "worse", at noise 5 %. */
  detected: number;
  same: Comparison[];
  faulty: Comparison[];
  /** The tables and sentences of figure 7. */
  lines: string[];
}

/** Judges every triple as figure 7 does. */
export function judgeTriples(triples: readonly RunTriple[], options: JudgeOptions): Judged {
  const n = triples.length;
  const same = triples.map((t, i) => compareOne(t.a, t.b, `same ${i + 1}`, 0.05, options));
  const faulty = triples.map((t, i) => compareOne(t.a, t.f, `fault ${i + 1}`, 0.05, options));
  const falseWorse = same.filter((c) => c.worse.length > 0).length;
  const detected = faulty.filter((c) => c.worse.length > 0).length;
  // Comparisons in which neither run's generator fell behind: what a quiet machine would give.
  const paced = (c: Comparison) => ![...c.baseline, ...c.candidate].some((r) => r.generatorLimited);
  const pacedSame = same.filter(paced);
  const pacedFaulty = faulty.filter(paced);
  const heldBack = (cs: Comparison[]) => cs.filter((c) => c.figures.some((f) => f.watched && f.note?.startsWith('held back') === true)).length;
  const tally = (cs: Comparison[]) => {
    const verdicts = cs.map((c) => p50Of(c).verdict);
    return ['worse', 'same', 'inconclusive', 'better'].map((v) => `${v} ${verdicts.filter((x) => x === v).length}`).join(', ');
  };
  const rows = [
    ['identical set-ups: comparisons "worse"', `${falseWorse} of ${n}`, '≤ 1', tally(same), `${median(same.map(p50Change)).toFixed(1)} %`],
    ['latency fault: comparisons "worse"', `${detected} of ${n}`, '≥ 19', tally(faulty), `${median(faulty.map(p50Change)).toFixed(1)} %`],
  ];
  const byNoise = [0.1, 0.2].map((noise) => {
    const s = triples.filter((t, i) => compareOne(t.a, t.b, `same ${i + 1}`, noise, options).worse.length > 0).length;
    const d = triples.filter((t, i) => compareOne(t.a, t.f, `fault ${i + 1}`, noise, options).worse.length > 0).length;
    return [`--noise ${noise * 100}%`, `${s} of ${n}`, `${d} of ${n}`];
  });
  const lines = [
    textTable(['comparisons', 'result', 'target', 'p50(keys.verifyKey) verdicts', 'median p50 change'], rows),
    `Of these, comparisons in which neither run was generator-limited: identical set-ups ${pacedSame.filter((c) => c.worse.length > 0).length} "worse" of ${pacedSame.length}, with the fault ${pacedFaulty.filter((c) => c.worse.length > 0).length} "worse" of ${pacedFaulty.length}.`,
    `Comparisons with a watched verdict held back as inconclusive because a run was generator-limited: identical ${heldBack(same)}, fault ${heldBack(faulty)}.`,
    'The same pairs judged with a larger practical threshold:',
    textTable(['threshold', 'identical: "worse"', 'fault: "worse"'], byNoise),
  ];
  return { pairs: n, falseWorse, detected, same, faulty, lines };
}

/** Several runs per side: compared run by run (docs/compare.md: three or more, Mann–Whitney U). */
export function compareGroups(base: readonly RunReport[], cand: readonly RunReport[], label: string, noise: number): Comparison {
  const result = compareRuns(
    base.map((report, i) => ({ source: `${label} baseline ${i + 1}`, report })),
    cand.map((report, i) => ({ source: `${label} candidate ${i + 1}`, report })),
    { watches: WATCHES, noise },
  );
  if (!result.ok) throw new Error(result.error);
  return result.comparison;
}

/**
 * Figure 7 with `k` runs per side, from pooled runs: the fault-free runs in their order are cut
 * into groups of k, and groups 2j and 2j + 1 make identical comparison j; the runs with the fault,
 * cut the same way, make fault comparison j against group 2j. Nothing is chosen: the order is the
 * order the runs were made in.
 */
export function judgeGroups(
  fine: readonly RunReport[],
  faulty: readonly RunReport[],
  k: number,
  noise = 0.05,
): { lines: string[]; falseWorse: number; detected: number; comparisons: number } {
  const groups = (runs: readonly RunReport[]) => Array.from({ length: Math.floor(runs.length / k) }, (_, g) => runs.slice(g * k, g * k + k));
  const fineGroups = groups(fine);
  const faultGroups = groups(faulty);
  const n = Math.min(Math.floor(fineGroups.length / 2), faultGroups.length);
  const same: Comparison[] = [];
  const fault: Comparison[] = [];
  for (let j = 0; j < n; j++) {
    const base = fineGroups[2 * j] as RunReport[];
    same.push(compareGroups(base, fineGroups[2 * j + 1] as RunReport[], `same ${j + 1}`, noise));
    fault.push(compareGroups(base, faultGroups[j] as RunReport[], `fault ${j + 1}`, noise));
  }
  const falseWorse = same.filter((c) => c.worse.length > 0).length;
  const detected = fault.filter((c) => c.worse.length > 0).length;
  const tally = (cs: Comparison[]) =>
    ['worse', 'same', 'inconclusive', 'better'].map((v) => `${v} ${cs.filter((c) => p50Of(c).verdict === v).length}`).join(', ');
  const lines = [
    textTable(
      ['comparisons', 'result', 'p50(keys.verifyKey) verdicts', 'median p50 change'],
      [
        [`identical set-ups, ${k} runs per side: "worse"`, `${falseWorse} of ${n}`, tally(same), `${median(same.map(p50Change)).toFixed(1)} %`],
        [`latency fault, ${k} runs per side: "worse"`, `${detected} of ${n}`, tally(fault), `${median(fault.map(p50Change)).toFixed(1)} %`],
      ],
    ),
  ];
  return { lines, falseWorse, detected, comparisons: n };
}
