/**
 * `keysim compare`: the figures of a baseline's runs against a candidate's, each change with a
 * confidence interval and a verdict (docs/compare.md). A pure function of the reports: the CLI
 * reads the files and prints.
 *
 * - Fewer than three runs on either side: the block bootstrap (compare-by-bootstrap.ts).
 * - Three or more runs on both sides: one figure per run (compare-by-runs.ts).
 *
 * Either way the figures a lagging generator distorts are held back, and the notes say what else
 * may explain a change (compare-caveats.ts).
 */
import { ALL_OPERATIONS, COMPARE_DEFAULTS, COMPARISON_SCHEMA, COMPARISON_VERSION, type Comparison, figureExpression } from './compare-model.js';
import { type Watch, checkWatches, defaultWatches } from './compare-watch.js';
import { type CompareInput, runRef, spectrumOf } from './compare-run-values.js';
import type { MethodSettings } from './compare-method.js';
import { compareByBootstrap } from './compare-by-bootstrap.js';
import { compareByRuns } from './compare-by-runs.js';
import { holdBackGeneratorLimited, inputNotes } from './compare-caveats.js';

export type { CompareInput } from './compare-run-values.js';

export interface CompareOptions {
  /** Practical threshold, 0..1 (default 0.05). */
  noise?: number;
  seed?: number;
  resamples?: number;
  confidence?: number;
  /** Bootstrap block length, seconds (default ⌈√seconds⌉). */
  blockSeconds?: number;
  /** Default: p99 of every operation and the error share of all. */
  watches?: readonly Watch[];
  /**
   * One or two runs per side: widen the bootstrap by the between-run term (default true;
   * docs/compare.md#the-between-run-term). False gives the bootstrap of the runs' seconds alone.
   */
  betweenRuns?: boolean;
}

export type CompareResult = { ok: true; comparison: Comparison } | { ok: false; error: string };

/** The operations every run has requests of, sorted; or why the runs cannot be compared. */
function sharedOperations(all: readonly CompareInput[]): { ok: true; operations: string[] } | { ok: false; error: string } {
  const names = (i: CompareInput) => i.report.operations.filter((o) => o.requests > 0).map((o) => o.operation);
  const operations = [...new Set(all.flatMap(names))].sort();
  for (const input of all) {
    const own = new Set(names(input));
    const missing = operations.filter((o) => !own.has(o));
    if (missing.length > 0) {
      return {
        ok: false,
        error: `${input.source} has no requests of ${missing.join(', ')}, which the other runs have: compare runs of the same scenario (it ran ${input.report.scenario.name}).`,
      };
    }
  }
  if (operations.length === 0) return { ok: false, error: 'No operation has any request in these runs: nothing to compare.' };
  return { ok: true, operations };
}

/** Compares the candidate's runs with the baseline's. An error names what is wrong with the inputs. */
export function compareRuns(baseline: readonly CompareInput[], candidate: readonly CompareInput[], options: CompareOptions = {}): CompareResult {
  const s: MethodSettings = {
    noise: options.noise ?? COMPARE_DEFAULTS.noise,
    seed: options.seed ?? COMPARE_DEFAULTS.seed,
    resamples: options.resamples ?? COMPARE_DEFAULTS.resamples,
    confidence: options.confidence ?? COMPARE_DEFAULTS.confidence,
    betweenRuns: options.betweenRuns ?? true,
    blockSeconds: options.blockSeconds,
  };
  if (baseline.length === 0 || candidate.length === 0) return { ok: false, error: 'Give at least one baseline run and one candidate run.' };
  const all = [...baseline, ...candidate];
  const shared = sharedOperations(all);
  if (!shared.ok) return shared;
  const compared = [...shared.operations, ALL_OPERATIONS];
  const watches = options.watches ?? defaultWatches(compared);
  const badWatch = checkWatches(watches, compared);
  if (badWatch !== undefined) return { ok: false, error: badWatch };

  const method = baseline.length >= 3 && candidate.length >= 3 ? 'runs' : 'bootstrap';
  const judged = method === 'runs' ? compareByRuns(baseline, candidate, compared, s) : compareByBootstrap(baseline, candidate, compared, s);
  if (!judged.ok) return judged;
  const { figures, notes, blockSeconds } = judged;
  const base = baseline.map((i) => i.report);
  const cand = candidate.map((i) => i.report);
  holdBackGeneratorLimited(figures, base, cand);
  const watchedNames = new Set(watches.map((w) => figureExpression(w.figure, w.operation)));
  for (const f of figures) f.watched = watchedNames.has(figureExpression(f.figure, f.operation));
  const worse = figures.filter((f) => f.watched && f.verdict === 'worse').map((f) => figureExpression(f.figure, f.operation));
  notes.push(...inputNotes(all, base, cand));
  return {
    ok: true,
    comparison: {
      schema: COMPARISON_SCHEMA,
      version: COMPARISON_VERSION,
      method,
      settings: {
        noise: s.noise,
        confidence: s.confidence,
        seed: s.seed,
        ...(method === 'bootstrap' ? { resamples: s.resamples, ...(blockSeconds === undefined ? {} : { blockSeconds }), betweenRuns: s.betweenRuns } : {}),
      },
      baseline: baseline.map(runRef),
      candidate: candidate.map(runRef),
      operations: compared,
      figures,
      watched: [...watchedNames],
      worse,
      spectra: compared.map((operation) => ({ operation, baseline: spectrumOf(base, operation), candidate: spectrumOf(cand, operation) })),
      notes,
    },
  };
}
