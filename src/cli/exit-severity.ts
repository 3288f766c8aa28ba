/** Which of two exit codes wins when several runs or checks end in one process. */
import { EXIT, type ExitCode } from './exit-codes.js';

/**
 * Every exit code's rank, the least severe first. A `Record` over `ExitCode`, so a code added to
 * `EXIT` without a rank here does not compile (and test/cli/exit-severity.test.ts iterates `EXIT`).
 *
 * - With --baseline, a worse comparison (93) ranks below every verdict of the run itself: a
 *   generator-limited run (97) makes its latency figures, and so the comparison, inconclusive, and
 *   an explicit threshold that failed (99) is the stronger statement.
 * - A history cut short (94, `keysim check`) is a partial verdict whose judged part is clean:
 *   inconclusive like 97, and outranked by anything that failed.
 * - A partial merge (92) outranks every verdict of a run's figures (they miss part of the plan),
 *   as `mergeExitCode` says; a failure of keysim itself, bad input or a Ctrl-C outrank it.
 */
const RANK: Record<ExitCode, number> = {
  [EXIT.ok]: 0,
  [EXIT.compareWorse]: 1,
  [EXIT.generatorLimited]: 2,
  [EXIT.historyTruncated]: 3,
  [EXIT.thresholdFailed]: 4,
  [EXIT.checkFailed]: 5,
  [EXIT.invariantViolated]: 6,
  [EXIT.resourcesLeft]: 7,
  [EXIT.targetStopped]: 8,
  [EXIT.mergePartial]: 9,
  [EXIT.failure]: 10,
  [EXIT.targetUnreachable]: 11,
  [EXIT.usage]: 12,
  [EXIT.interrupted]: 13,
};

/** The exit codes from the least severe to the most. */
export const EXIT_SEVERITY: readonly ExitCode[] = (Object.keys(RANK).map(Number) as ExitCode[]).sort((a, b) => RANK[a] - RANK[b]);

/** The more severe of two exit codes (the order above). */
export function worseExitCode(a: ExitCode, b: ExitCode): ExitCode {
  return RANK[b] > RANK[a] ? b : a;
}
