/**
 * `keysim run … --baseline DIR`: every finished run compared with the baseline run of the same
 * scenario, the table printed, compare.{json,md,html} written into the run folder, and the verdict
 * folded into the exit code (93 when a watched figure is worse; below every verdict of the run
 * itself, see `exitCodeOf`).
 */
import type { Argv } from 'yargs';
import type { RunReport } from '../report/model.js';
import { type CompareInput, type CompareOptions, compareRuns } from '../report/compare.js';
import { COMPARE_DEFAULTS } from '../report/compare-model.js';
import { renderCompareTable } from '../report/compare-text.js';
import { EXIT, type ExitCode, UsageError } from './exit-codes.js';
import { findBaseline, writeComparison } from './compare-files.js';
import { compareOptionsOf, exitCodeOfComparison } from './commands/compare.js';

export interface BaselineFlags {
  baseline?: string;
  noise: string;
  watch: string[];
}

export interface Baselines {
  options: CompareOptions;
  byScenario: Map<string, CompareInput>;
}

/** The run flags of the comparison with a baseline. */
export function baselineFlagOptions<T>(y: Argv<T>): Argv<T> {
  return y
    .option('baseline', {
      type: 'string',
      describe:
        'Compare each run with this baseline at the end: a run folder, its report.json, or a folder of run folders (the newest run of the same scenario); exit 93 when a watched figure is worse',
    })
    .option('noise', { type: 'string', default: `${COMPARE_DEFAULTS.noise * 100}%`, describe: 'With --baseline: the practical threshold (see keysim compare)' })
    .option('watch', {
      type: 'string',
      array: true,
      default: [],
      describe: 'With --baseline: a watched figure, e.g. "p99(keys.verifyKey)" (repeatable; default p99 of every operation and errors)',
    }) as unknown as Argv<T>;
}

/** Finds a baseline for every scenario before any load is sent: a usage error when one is missing. */
export function prepareBaselines(flags: BaselineFlags, scenarios: readonly string[]): Baselines | undefined {
  if (flags.baseline === undefined) {
    if (flags.watch.length > 0) throw new UsageError('--watch chooses the figures of the comparison with a baseline: it needs --baseline DIR.');
    return undefined;
  }
  const options = compareOptionsOf({ noise: flags.noise, watch: flags.watch, seed: COMPARE_DEFAULTS.seed, resamples: COMPARE_DEFAULTS.resamples });
  const byScenario = new Map<string, CompareInput>();
  for (const scenario of scenarios) {
    const found = findBaseline(flags.baseline, scenario);
    if (found === undefined)
      throw new UsageError(
        `--baseline ${flags.baseline} holds no run of the scenario "${scenario}": give the run folder of a run of the same scenario (or a folder of run folders that has one).`,
      );
    byScenario.set(scenario, found);
  }
  return { options, byScenario };
}

/** Compares a finished run with its baseline; prints, writes the files into `folder`, returns the exit code it calls for. */
export function compareWithBaseline(
  baselines: Baselines,
  report: RunReport,
  folder: string,
  out: (text: string) => void,
  err: (text: string) => void,
): ExitCode {
  const baseline = baselines.byScenario.get(report.scenario.name);
  if (baseline === undefined) return EXIT.ok;
  const result = compareRuns([baseline], [{ source: folder, report }], baselines.options);
  if (!result.ok) {
    err(`keysim: the comparison with the baseline ${baseline.source} failed: ${result.error}\n`);
    return EXIT.usage;
  }
  out(`\ncompared with the baseline ${baseline.source}:\n${renderCompareTable(result.comparison)}`);
  const written = writeComparison(result.comparison, folder);
  out(`comparison: ${written.html}\n\n`);
  return exitCodeOfComparison(result.comparison);
}
