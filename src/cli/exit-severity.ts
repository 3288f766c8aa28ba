/** Which of two exit codes wins when several runs or checks end in one process. */
import { EXIT, type ExitCode } from './exit-codes.js';

/**
 * With --baseline, a worse comparison (93) ranks below every verdict of the run itself: a
 * generator-limited run (97) makes its latency figures, and so the comparison, inconclusive, and an
 * explicit threshold that failed (99) is the stronger statement.
 */
const SEVERITY: ExitCode[] = [
  EXIT.ok,
  EXIT.compareWorse,
  EXIT.generatorLimited,
  EXIT.thresholdFailed,
  EXIT.checkFailed,
  EXIT.invariantViolated,
  EXIT.resourcesLeft,
  EXIT.targetStopped,
  EXIT.failure,
  EXIT.targetUnreachable,
  EXIT.usage,
  EXIT.interrupted,
];
/** The more severe of two exit codes (the order above). */
export function worseExitCode(a: ExitCode, b: ExitCode): ExitCode {
  return SEVERITY.indexOf(b) > SEVERITY.indexOf(a) ? b : a;
}
