/**
 * `keysim compare BASELINE CANDIDATE` (or `--baseline a b c --candidate d e f`): every figure of
 * the candidate's runs against the baseline's, with a confidence interval and a verdict
 * (docs/compare.md). Exit 93 when a watched figure is worse, 2 on bad inputs.
 */
import { mkdirSync } from 'node:fs';
import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs';
import { compareRuns, type CompareOptions } from '../../report/compare.js';
import { COMPARE_DEFAULTS, type Comparison } from '../../report/compare-model.js';
import { type Watch, parseNoise, parseWatch } from '../../report/compare-watch.js';
import { renderCompareJson, renderCompareMarkdown, renderCompareTable } from '../../report/compare-text.js';
import { renderCompareHtml } from '../../report/compare-html.js';
import { EXIT, type ExitCode, UsageError } from '../exit-codes.js';
import { readRunReport, writeComparison } from '../compare-files.js';
import { example } from '../help-example.js';

export interface CompareFlags {
  noise: string;
  watch: string[];
  seed: number;
  resamples: number;
  block?: number;
  /** false (`--no-between-runs`): one or two runs per side are judged on their seconds alone. */
  betweenRuns?: boolean;
}

interface CompareArgs extends CompareFlags {
  runs: string[];
  baseline: string[];
  candidate: string[];
  format: 'table' | 'md' | 'json' | 'html';
  out?: string;
}

/** The comparison options the flags ask for; a usage error names a bad flag. */
export function compareOptionsOf(flags: CompareFlags): CompareOptions {
  const noise = parseNoise(flags.noise);
  if (!noise.ok) throw new UsageError(noise.error);
  const watches: Watch[] = flags.watch.map((expression) => {
    const parsed = parseWatch(expression);
    if (!parsed.ok) throw new UsageError(parsed.error);
    return parsed.watch;
  });
  if (!Number.isSafeInteger(flags.seed)) throw new UsageError(`--seed must be an integer, got ${String(flags.seed)}.`);
  if (!(Number.isInteger(flags.resamples) && flags.resamples >= 100 && flags.resamples <= 100_000)) {
    throw new UsageError(`--resamples must be an integer from 100 to 100000, got ${String(flags.resamples)}.`);
  }
  if (flags.block !== undefined && !(Number.isInteger(flags.block) && flags.block >= 1))
    throw new UsageError(`--block must be a whole number of seconds ≥ 1, got ${String(flags.block)}.`);
  return {
    noise: noise.noise,
    seed: flags.seed,
    resamples: flags.resamples,
    ...(watches.length === 0 ? {} : { watches }),
    ...(flags.block === undefined ? {} : { blockSeconds: flags.block }),
    ...(flags.betweenRuns === false ? { betweenRuns: false } : {}),
  };
}

export function exitCodeOfComparison(comparison: Comparison): ExitCode {
  return comparison.worse.length > 0 ? EXIT.compareWorse : EXIT.ok;
}

export function compareCommand(args: CompareArgs): ExitCode {
  let baselinePaths = args.baseline;
  let candidatePaths = args.candidate;
  if (args.runs.length > 0) {
    if (args.runs.length !== 2 || baselinePaths.length > 0 || candidatePaths.length > 0) {
      throw new UsageError('Give two runs (keysim compare BASELINE CANDIDATE), or several per side with --baseline a b c --candidate d e f, not both.');
    }
    baselinePaths = [args.runs[0] as string];
    candidatePaths = [args.runs[1] as string];
  }
  if (baselinePaths.length === 0 || candidatePaths.length === 0) {
    throw new UsageError(
      'Name the runs to compare: keysim compare BASELINE CANDIDATE (run folders or report.json files), or --baseline a b c --candidate d e f.',
    );
  }
  const options = compareOptionsOf(args);
  const result = compareRuns(baselinePaths.map(readRunReport), candidatePaths.map(readRunReport), options);
  if (!result.ok) throw new UsageError(result.error);
  const c = result.comparison;
  const text =
    args.format === 'md'
      ? renderCompareMarkdown(c)
      : args.format === 'json'
        ? renderCompareJson(c)
        : args.format === 'html'
          ? renderCompareHtml(c)
          : renderCompareTable(c);
  process.stdout.write(text);
  if (args.out !== undefined) {
    mkdirSync(args.out, { recursive: true });
    const written = writeComparison(c, args.out);
    process.stderr.write(`keysim: wrote ${written.json}, ${written.markdown}, ${written.html}\n`);
  }
  return exitCodeOfComparison(c);
}

/** The flags `compare` shares with `run --baseline`. */
export function compareFlagOptions<T>(y: Argv<T>): Argv<T> {
  return y
    .option('noise', {
      type: 'string',
      default: `${COMPARE_DEFAULTS.noise * 100}%`,
      describe: 'Practical threshold: a change is worse or better only when its whole confidence interval is beyond ±noise',
    })
    .option('watch', {
      type: 'string',
      array: true,
      default: [],
      describe:
        'A figure whose "worse" fails the comparison (exit 93), e.g. "p99(keys.verifyKey)", "errors", "throughput(ratelimit.limit)" (repeatable; default: p99 of every operation and errors)',
    })
    .option('resamples', { type: 'number', default: COMPARE_DEFAULTS.resamples, describe: 'Bootstrap resamples (one or two runs per side)' })
    .option('block', { type: 'number', describe: "Bootstrap block length in seconds (default: √ of the run's seconds, rounded up)" })
    .option('between-runs', {
      type: 'boolean',
      default: true,
      describe:
        "With one or two runs per side, widen each interval by the variation between runs, estimated from each side's halves or runs (--no-between-runs: the seconds alone)",
    }) as unknown as Argv<T>;
}

export const compareCommandModule: CommandModule<object, CompareArgs> = {
  command: 'compare [runs..]',
  describe: 'Compare a candidate run with a baseline: every figure with a confidence interval and a verdict (exit 93 when a watched figure is worse)',
  builder: (y: Argv) =>
    compareFlagOptions(
      y
        .positional('runs', { type: 'string', array: true, default: [], describe: 'BASELINE CANDIDATE: two run folders or report.json files' })
        .option('baseline', { type: 'string', array: true, default: [], describe: 'Baseline runs (three or more: compared run by run)' })
        .option('candidate', { type: 'string', array: true, default: [], describe: 'Candidate runs' })
        .option('seed', { type: 'number', default: COMPARE_DEFAULTS.seed, describe: 'Seed of the bootstrap (the same inputs and seed give the same output)' })
        .option('format', { choices: ['table', 'md', 'json', 'html'] as const, default: 'table' as const, describe: 'What to print on stdout' })
        .option('out', { type: 'string', describe: 'Also write compare.json, compare.md and compare.html into this folder' }),
    )
      .example(...example('$0 compare reports/main-run reports/branch-run', 'one run per side: block bootstrap'))
      .example(...example('$0 compare --baseline a b c --candidate d e f --watch "p99(keys.verifyKey)"', 'three runs per side: Mann–Whitney U'))
      .example(...example('$0 compare base cand --format md > comment.md', 'Markdown for a pull-request comment')) as unknown as Argv<CompareArgs>,
  handler: (args: ArgumentsCamelCase<CompareArgs>) => {
    process.exitCode = compareCommand(args);
  },
};
