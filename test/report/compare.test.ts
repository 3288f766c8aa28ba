/**
 * `compareRuns` over hand-built reports: the block bootstrap (a candidate 20 % slower is "worse",
 * identical runs are never "worse", the same seed gives the same output), the several-runs method,
 * and the refusals of bad inputs.
 */
import { describe, expect, test } from 'vitest';
import { compareRuns, type CompareInput } from '../../src/report/compare.js';
import { ALL_OPERATIONS, type Comparison, type FigureComparison } from '../../src/report/compare-model.js';
import { seededRandom } from '../../src/report/compare-stats.js';
import { verdictLabel } from '../../src/report/compare-text.js';
import { parseWatch } from '../../src/report/compare-watch.js';
import { latencySeconds, reportFromSeconds } from '../helpers/compare-reports.js';

const OP = 'keys.verifyKey';
const OTHER = 'ratelimit.limit';

function runOf(seed: number, scale = 1, seconds = 20, perSecond = 200): CompareInput {
  const random = seededRandom(seed);
  const byOp = {
    [OP]: latencySeconds(random, seconds, perSecond).map((s) => s.map((ms) => ms * scale)),
    [OTHER]: latencySeconds(random, seconds, perSecond / 2, 1).map((s) => s.map((ms) => ms * scale)),
  };
  return { source: `run-${seed}-${scale}`, report: reportFromSeconds(byOp) };
}

function figure(c: Comparison, name: string, operation = OP): FigureComparison {
  const f = c.figures.find((x) => x.figure === name && x.operation === operation);
  if (f === undefined) throw new Error(`no ${name}(${operation})`);
  return f;
}

function parsedWatch(text: string) {
  const parsed = parseWatch(text);
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.watch;
}

function compared(...args: Parameters<typeof compareRuns>): Comparison {
  const result = compareRuns(...args);
  if (!result.ok) throw new Error(result.error);
  return result.comparison;
}

describe('one run per side: the block bootstrap', () => {
  test('every recorded sample shifted by +20 %: p50, p90, p99 of each operation and of all are "worse" by the seconds alone, the watched ones listed', () => {
    const base = runOf(1);
    const slower = runOf(1, 1.2);
    // The bootstrap of the seconds alone: the between-run term, whose estimate from two halves can
    // widen a noisy p99, has its own tests (compare-between.test.ts) and the next one.
    const c = compared([base], [slower], { resamples: 300, betweenRuns: false });
    expect(c.method).toBe('bootstrap');
    for (const operation of [OP, OTHER, ALL_OPERATIONS]) {
      for (const name of ['p50', 'p90', 'p99']) {
        const f = figure(c, name, operation);
        expect(f.verdict, `${name}(${operation}) ${JSON.stringify(f.interval)}`).toBe('worse');
        expect(f.change).toBeCloseTo(0.2, 1);
        expect(f.interval!.low).toBeGreaterThan(0.05);
      }
    }
    expect(c.worse).toEqual(expect.arrayContaining([`p99(${OP})`, `p99(${OTHER})`]));
    // Throughput and errors did not move.
    expect(figure(c, 'throughput').verdict).toBe('same');
    expect(figure(c, 'errors', ALL_OPERATIONS).verdict).toBe('same');
  });

  test('the same +20 % with the between-run term (the default): p50 and p90 of each operation and of all stay "worse", p99 is never "same" or "better"', () => {
    const c = compared([runOf(1)], [runOf(1, 1.2)], { resamples: 300 });
    for (const operation of [OP, OTHER, ALL_OPERATIONS]) {
      for (const name of ['p50', 'p90']) expect(figure(c, name, operation).verdict, `${name}(${operation})`).toBe('worse');
      expect(['worse', 'inconclusive'], `p99(${operation})`).toContain(figure(c, 'p99', operation).verdict);
    }
  });

  test('the same run on both sides is "same" or "inconclusive", never "worse" or "better"', () => {
    const run = runOf(7, 1, 10, 50);
    const c = compared([run], [run], { resamples: 300 });
    for (const f of c.figures) expect(['same', 'inconclusive', 'not-judged'], `${f.figure}(${f.operation})`).toContain(f.verdict);
    expect(c.worse).toEqual([]);
  });

  test('two independent runs of one set-up are not "worse" at p50 (the interval holds the truth, 0)', () => {
    const c = compared([runOf(11)], [runOf(12)], { resamples: 300 });
    expect(figure(c, 'p50').interval!.low).toBeLessThan(0);
    expect(figure(c, 'p50').interval!.high).toBeGreaterThan(0);
    expect(figure(c, 'p50').verdict).not.toBe('worse');
  });

  test('deterministic: the same inputs and seed give the same comparison; another seed other intervals', () => {
    const base = runOf(3, 1, 10, 50);
    const cand = runOf(4, 1.05, 10, 50);
    const a = compared([base], [cand], { resamples: 200, seed: 9 });
    const b = compared([base], [cand], { resamples: 200, seed: 9 });
    const other = compared([base], [cand], { resamples: 200, seed: 10 });
    expect(JSON.stringify(b)).toBe(JSON.stringify(a));
    expect(JSON.stringify(other.figures)).not.toBe(JSON.stringify(a.figures));
    expect(a.settings).toMatchObject({ seed: 9, resamples: 200, blockSeconds: { baseline: 4, candidate: 4 } });
  });

  test('errors: a candidate with errors every second is "worse" on the error share (an absolute difference)', () => {
    const random = seededRandom(5);
    const base = reportFromSeconds({ [OP]: latencySeconds(random, 10, 100) });
    const cand = reportFromSeconds({ [OP]: latencySeconds(random, 10, 100) }, 5);
    const c = compared([{ source: 'a', report: base }], [{ source: 'b', report: cand }], { resamples: 200 });
    const errors = figure(c, 'errors', ALL_OPERATIONS);
    expect(errors.changeKind).toBe('absolute');
    expect(errors.change).toBeCloseTo(0.05, 6);
    expect(errors.verdict).toBe('worse');
    expect(c.worse).toContain('errors');
  });

  test('late sends are shown but not judged with one run per side; short runs are flagged', () => {
    const c = compared([runOf(1, 1, 5, 20)], [runOf(2, 1, 5, 20)], { resamples: 50 });
    expect(figure(c, 'late', ALL_OPERATIONS).verdict).toBe('not-judged');
    expect(c.notes.join(' ')).toMatch(/A run of 5 s leaves few seconds to resample/);
    expect(compared([runOf(1, 1, 10, 20)], [runOf(2, 1, 10, 20)], { resamples: 50 }).notes.join(' ')).not.toMatch(/few seconds/);
  });
});

describe('a generator-limited run', () => {
  const limitedRun = (input: CompareInput): CompareInput => {
    input.report.generator = {
      limited: true,
      reasons: ['41 % of the sends were late'],
      limits: { lateShare: 0.01, loopDelayP99Ms: 50 },
      phases: [],
      loadAverage: 9,
    };
    return input;
  };

  test('a generator-limited candidate 20 % slower: latency "worse" is held back as inconclusive with the reason; exit-worthy list empty', () => {
    const c = compared([runOf(1)], [limitedRun(runOf(1, 1.2))], { resamples: 200 });
    for (const name of ['p50', 'p90', 'p99']) {
      const f = figure(c, name);
      expect(f.verdict, name).toBe('inconclusive');
      expect(f.note).toMatch(/held back: the load generator could not keep its schedule on the candidate side/);
    }
    expect(c.worse).toEqual([]);
    expect(c.candidate[0]?.generatorLimited).toBe(true);
  });

  test('the same pair without the limit says "worse" (the hold-back is what changed the verdict)', () => {
    const c = compared([runOf(1)], [runOf(1, 1.2)], { resamples: 200 });
    expect(figure(c, 'p99').verdict).toBe('worse');
    expect(figure(c, 'p99').note).toBeUndefined();
  });

  test('the error share is still judged when a run is generator-limited: more errors stay "worse"', () => {
    const random = seededRandom(5);
    const base = { source: 'base', report: reportFromSeconds({ [OP]: latencySeconds(random, 20, 100) }) };
    const cand = limitedRun({ source: 'cand', report: reportFromSeconds({ [OP]: latencySeconds(random, 20, 100) }, 20) });
    const c = compared([base], [cand], { resamples: 200, watches: [parsedWatch('errors')] });
    expect(figure(c, 'errors', ALL_OPERATIONS).verdict).toBe('worse');
    expect(c.worse).toEqual(['errors']);
  });

  test('a comparison held back by a generator-limited run says the machine was the limit, not "collect more"', () => {
    const c = compared([runOf(1)], [limitedRun(runOf(1, 1.2))], { resamples: 200 });
    for (const name of ['p50', 'p99']) {
      expect(verdictLabel(figure(c, name)), name).toMatch(/the machine \(the load generator\) was the limit/);
      expect(verdictLabel(figure(c, name)), name).not.toMatch(/collect more/);
    }
    // Without the limit, an inconclusive figure still asks for more data.
    const plain = compared([runOf(1)], [runOf(1, 1.2)], { resamples: 200 });
    expect(verdictLabel({ ...figure(plain, 'p99'), verdict: 'inconclusive' })).toBe('inconclusive — collect more');
  });

  test('both sides limited: the note says so', () => {
    const c = compared([limitedRun(runOf(1))], [limitedRun(runOf(1, 1.3))], { resamples: 100 });
    expect(figure(c, 'p50').note).toMatch(/on both sides/);
  });
});

describe('three or more runs per side: run by run', () => {
  test('five runs 20 % slower: p50 "worse" by Mann–Whitney (p = 0.0079) and the ratio interval', () => {
    const base = [1, 2, 3, 4, 5].map((s) => runOf(s, 1, 5, 100));
    const cand = [1, 2, 3, 4, 5].map((s) => runOf(s + 100, 1.2, 5, 100));
    const c = compared(base, cand);
    expect(c.method).toBe('runs');
    const p50 = figure(c, 'p50');
    expect(p50.verdict).toBe('worse');
    expect(p50.p).toBeCloseTo(2 / 252, 6);
    expect(p50.baseline!.runs).toHaveLength(5);
    expect(p50.interval!.confidence).toBeGreaterThanOrEqual(0.95);
  });

  test('three runs on each side of one set-up: not "worse"; the confidence reached (90 %) is said', () => {
    const c = compared(
      [1, 2, 3].map((s) => runOf(s, 1, 5, 100)),
      [4, 5, 6].map((s) => runOf(s, 1, 5, 100)),
    );
    expect(c.worse).toEqual([]);
    expect(figure(c, 'p99').interval!.confidence).toBeCloseTo(0.9, 10);
    expect(c.notes.join(' ')).toMatch(/90\.0 % confidence/);
  });

  test('old reports without per-second histograms are compared run by run', () => {
    const strip = (i: CompareInput): CompareInput => ({ ...i, report: { ...i.report, timeline: [] } });
    const c = compared(
      [1, 2, 3].map((s) => strip(runOf(s, 1, 3, 50))),
      [4, 5, 6].map((s) => strip(runOf(s, 1.5, 3, 50))),
    );
    expect(figure(c, 'p50').verdict).toBe('worse');
  });
});

describe('bad inputs are refused with a message', () => {
  test('one old report per side: too old for a single-run comparison, and what to do', () => {
    const old = runOf(1, 1, 3, 10);
    const result = compareRuns([{ ...old, report: { ...old.report, timeline: [] } }], [runOf(2, 1, 3, 10)]);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error).toMatch(/too old for a comparison with fewer than three runs per side.*--baseline a b c --candidate d e f/);
  });

  test('an operation absent on one side', () => {
    const random = seededRandom(1);
    const other = { source: 'other.json', report: reportFromSeconds({ [OP]: latencySeconds(random, 3, 10) }) };
    const result = compareRuns([runOf(1, 1, 3, 10)], [other]);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error).toMatch(/other\.json has no requests of ratelimit\.limit/);
  });

  test('a watch of an operation the runs do not have names those they have', () => {
    const watch = parseWatch('p99(keys.verify)');
    if (!watch.ok) throw new Error(watch.error);
    const result = compareRuns([runOf(1, 1, 3, 10)], [runOf(2, 1, 3, 10)], { watches: [watch.watch] });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error).toMatch(/no operation "keys\.verify".*keys\.verifyKey, ratelimit\.limit/);
  });
});
