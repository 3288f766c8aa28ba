/** The exit code a run's report calls for; apart from the run command so that merge and --workers share it. */
import { runVerdict } from '../report/verdict.js';
import type { RunReport } from '../report/model.js';
import { EXIT, type ExitCode } from './exit-codes.js';

/**
 * The exit code a report calls for (the worst wins): interrupted 130 > target stopped 96 >
 * resources left 95 > invariant violated 100 > check failed 98 > threshold failed 99 >
 * inconclusive 97 (a threshold the generator's lag may explain, a check or an oracle that judged
 * nothing) > ok 0. The precedence is `runVerdict`'s (src/report/verdict.ts), the one
 * reading every rendering shows, so the exit code and the printed verdict cannot disagree.
 */
export function exitCodeOf(report: RunReport): ExitCode {
  return EXIT[runVerdict(report).cause];
}
