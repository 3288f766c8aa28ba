/**
 * Figure 7 judged again on saved runs: `npx tsx bench/compare-rejudge.ts DIR… [--runs-per-side K]`.
 *
 * DIR holds the reports `npx tsx bench/run-all.ts compare` keeps with KEYSIM_BENCH_SAVE_RUNS=DIR
 * (same-<i>-a.json, same-<i>-b.json, fault-<i>.json). Every complete triple is judged exactly as
 * the benchmark judges it (compare-judge.ts), twice: by the block bootstrap of the runs' seconds
 * alone, and widened by the between-run term (docs/compare.md#the-between-run-term), the default.
 * Both statistics thus meet the very same runs, and no run is made: the machine need not be quiet.
 * Then, per identical pair, the p50 change of keys.verifyKey with both intervals and the term.
 *
 * With `--runs-per-side K` (3 or more), the runs of every DIR are also pooled and judged K against
 * K, run by run (Mann–Whitney U), as `keysim compare --baseline … --candidate …` judges them
 * (compare-judge.ts judgeGroups): what the advice "three runs a side" buys on the same runs.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FigureComparison } from '../src/report/compare-model.js';
import { parseReport } from '../src/report/json.js';
import type { RunReport } from '../src/report/model.js';
import { type Judged, type RunTriple, judgeGroups, judgeTriples, p50Of } from './compare-judge.js';
import { textTable } from './stats.js';

function readReport(file: string): RunReport {
  const parsed = parseReport(readFileSync(file, 'utf8'));
  if (!parsed.ok) throw new Error(`${file}: ${parsed.error}`);
  return parsed.report;
}

/** The complete triples of DIR, in order of their number (a folder still being written has a partial last one, left out). */
export function savedTriples(dir: string): Array<RunTriple & { index: number }> {
  const triples: Array<RunTriple & { index: number }> = [];
  for (let i = 1; ; i++) {
    const files = [`same-${i}-a.json`, `same-${i}-b.json`, `fault-${i}.json`].map((f) => join(dir, f));
    if (!files.every((f) => existsSync(f))) break;
    const [a, b, f] = files.map(readReport) as [RunReport, RunReport, RunReport];
    triples.push({ a, b, f, index: i });
  }
  return triples;
}

const pct = (x: number | null | undefined) => (x === null || x === undefined || !Number.isFinite(x) ? '—' : `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)}`);
const interval = (f: FigureComparison) => (f.interval === null ? '—' : `[${pct(f.interval.low)}, ${pct(f.interval.high)}]`);

function perPair(old: Judged, next: Judged, indexes: readonly number[]): string {
  const rows = next.same.map((c, i) => {
    const o = old.same[i];
    if (o === undefined) throw new Error('the two judgements differ in length');
    const n50 = p50Of(c);
    const o50 = p50Of(o);
    return [
      String(indexes[i]),
      pct(n50.change),
      interval(o50),
      o50.verdict,
      interval(n50),
      n50.verdict,
      `${pct(n50.betweenRun?.baseline)} / ${pct(n50.betweenRun?.candidate)}`,
      o.worse.join(' ') || '—',
      c.worse.join(' ') || '—',
    ];
  });
  return textTable(
    [
      'pair',
      'p50 change %',
      'interval, seconds only',
      'verdict',
      'interval, with the term',
      'verdict',
      'term σ % (base / cand)',
      'worse, seconds only',
      'worse, with the term',
    ],
    rows,
  );
}

function judgeDir(dir: string): { triples: RunTriple[]; text: string } {
  const triples = savedTriples(dir);
  if (triples.length === 0) {
    process.stderr.write(`${dir}: no complete triple same-1-a.json, same-1-b.json, fault-1.json\n`);
    process.exit(2);
  }
  const limited = triples.flatMap((t) => [t.a, t.b, t.f]).filter((r) => r.generator?.limited === true).length;
  const old = judgeTriples(triples, { betweenRuns: false });
  const next = judgeTriples(triples, { betweenRuns: true });
  const fault = next.faulty.map((c) => p50Of(c).interval?.low ?? Number.NaN).filter(Number.isFinite);
  const text = [
    `Figure 7 judged again on ${triples.length} saved triples in ${dir} (${limited} of ${triples.length * 3} runs generator-limited).`,
    '',
    "The block bootstrap of the runs' seconds alone (before the between-run term):",
    ...old.lines,
    '',
    'Widened by the between-run term (the default):',
    ...next.lines,
    '',
    'Identical pairs, p50(keys.verifyKey):',
    perPair(
      old,
      next,
      triples.map((t) => t.index),
    ),
    '',
    `With the fault, the lowest lower bound of the p50 change's interval with the term: ${pct(Math.min(...fault))} %.`,
    '',
  ].join('\n');
  return { triples, text };
}

function main(): void {
  const args = process.argv.slice(2);
  const k = args.indexOf('--runs-per-side');
  const perSide = k >= 0 ? Number(args[k + 1]) : undefined;
  const dirs = args.filter((_, i) => k < 0 || (i !== k && i !== k + 1));
  if (dirs.length === 0 || dirs.some((d) => !existsSync(d)) || (perSide !== undefined && !(Number.isInteger(perSide) && perSide >= 3))) {
    process.stderr.write('usage: tsx bench/compare-rejudge.ts DIR… [--runs-per-side K]   (DIR: the runs KEYSIM_BENCH_SAVE_RUNS=DIR kept; K ≥ 3)\n');
    process.exit(2);
  }
  const all: RunTriple[] = [];
  for (const dir of dirs) {
    const { triples, text } = judgeDir(dir);
    all.push(...triples);
    process.stdout.write(text);
  }
  if (perSide !== undefined) {
    const fine = all.flatMap((t) => [t.a, t.b]);
    const faulty = all.map((t) => t.f);
    const groups = judgeGroups(fine, faulty, perSide);
    process.stdout.write(
      [
        '',
        `The ${all.length * 2} fault-free and ${all.length} faulty runs of ${dirs.length} folder(s) pooled, in the order they were made, ${perSide} runs per side (run by run, Mann–Whitney U; noise 5 %):`,
        ...groups.lines,
        '',
      ].join('\n'),
    );
  }
}

main();
