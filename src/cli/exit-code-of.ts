/** The exit code a run's report calls for; apart from the run command so that merge and --workers share it. */
import { TARGET_STOPPED_CHECK } from '../load/run-report.js';
import { thresholdVerdict } from '../report/generator-text.js';
import type { RunReport } from '../report/model.js';
import { EXIT, type ExitCode } from './exit-codes.js';

/**
 * The exit code a report calls for (the worst wins): interrupted 130 > target stopped 96 >
 * resources left 95 > invariant violated 100 > check failed 98 > threshold failed 99 >
 * inconclusive threshold 97 > ok 0. A target that stopped answering is the run's first finding
 * (what it left behind is a consequence, still listed in the report). 97 is the verdict "could not
 * tell": a threshold the generator's lag may explain (thresholds.ts, pace-verdict.ts), when nothing
 * failed. A run whose generator lagged but whose every threshold could still be judged exits on its
 * verdicts (0 when they pass); its report keeps the banner saying the generator lagged.
 */
export function exitCodeOf(report: RunReport): ExitCode {
  if (report.status === 'interrupted') return EXIT.interrupted;
  if (report.checks.some((c) => c.name === TARGET_STOPPED_CHECK && !c.passed)) return EXIT.targetStopped;
  if ((report.resources?.unexpectedlyLeft ?? 0) > 0) return EXIT.resourcesLeft;
  if (report.invariants?.verdict === 'violated' || report.invariants?.oracle?.verdict === 'differs') return EXIT.invariantViolated;
  if (report.checks.some((c) => !c.passed)) return EXIT.checkFailed;
  if (report.thresholds.some((t) => thresholdVerdict(t) === 'failed')) return EXIT.thresholdFailed;
  if (report.thresholds.some((t) => thresholdVerdict(t) === 'inconclusive')) return EXIT.generatorLimited;
  return EXIT.ok;
}
