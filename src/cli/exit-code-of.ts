/** The exit code a run's report calls for; apart from the run command so that merge and --workers share it. */
import { TARGET_STOPPED_CHECK } from '../load/run-report.js';
import { thresholdVerdict } from '../report/generator-text.js';
import type { RunReport } from '../report/model.js';
import { EXIT, type ExitCode } from './exit-codes.js';

/**
 * The exit code a report calls for (the worst wins): interrupted 130 > target stopped 96 >
 * resources left 95 > invariant violated 100 > check failed 98 > threshold failed 99 >
 * generator-limited 97 > ok 0. A target that stopped answering is the run's first finding (what it
 * left behind is a consequence, still listed in the report). A generator-limited run is
 * inconclusive, which a real failure outranks: an error-rate threshold or a check that failed did
 * so whatever the generator's pace (an inconclusive latency threshold is not a failed one).
 */
export function exitCodeOf(report: RunReport): ExitCode {
  if (report.status === 'interrupted') return EXIT.interrupted;
  if (report.checks.some((c) => c.name === TARGET_STOPPED_CHECK && !c.passed)) return EXIT.targetStopped;
  if ((report.resources?.unexpectedlyLeft ?? 0) > 0) return EXIT.resourcesLeft;
  if (report.invariants?.verdict === 'violated' || report.invariants?.oracle?.verdict === 'differs') return EXIT.invariantViolated;
  if (report.checks.some((c) => !c.passed)) return EXIT.checkFailed;
  if (report.thresholds.some((t) => thresholdVerdict(t) === 'failed')) return EXIT.thresholdFailed;
  if (report.generator?.limited === true) return EXIT.generatorLimited;
  return EXIT.ok;
}
