/** Named exit codes: thresholds failed and invariants violated are distinct from bad input. */
export const EXIT = {
  ok: 0,
  /** A bug or an unexpected failure (including a scenario that could not set up). */
  failure: 1,
  /** Bad flags, an unknown command or scenario: the message names the valid choices. */
  usage: 2,
  /** The target did not answer (or refused the root key) before the run: no report was written. */
  targetUnreachable: 3,
  /**
   * `keysim merge` (and `keysim run --workers`): a segment's report is missing, or a segment was
   * interrupted or failed, so the merged report is partial: its figures miss part of the plan.
   */
  mergePartial: 92,
  /**
   * `keysim compare` (and `keysim run --baseline`): a watched figure of the candidate is worse than
   * the baseline's, beyond the noise threshold over its whole confidence interval. For `run
   * --baseline` it ranks below every verdict of the run itself (see `exitCodeOf` in `run.ts`).
   */
  compareWorse: 93,
  /**
   * `keysim check`: the history was cut short (the run was killed while writing it). The part that
   * could be judged holds every invariant, but the rest was not checked: a partial verdict.
   */
  historyTruncated: 94,
  /**
   * Resources the run created on the target were left behind (a cleanup failed): `keysim cleanup
   * --tag <run tag>` deletes them.
   */
  resourcesLeft: 95,
  /** The target stopped answering during the run (e.g. every request refused): the run ended early. */
  targetStopped: 96,
  /**
   * Inconclusive, nothing failed. Either something judged nothing — a check every answer of which
   * never came (`not judged: …`), an oracle that compared no answer of a recorded history — or
   * the load generator could not keep its schedule (late sends, event-loop delay), and
   * a latency or throughput threshold could not be judged: it failed as measured but not over the
   * sends made on time with the generator's delay allowed for (or, for rps, there is no figure free
   * of the lag). Nothing failed. A run that lagged with every threshold judged exits on its verdicts.
   * Run on a quieter machine or lower the rate.
   * Precedence for one run: interrupted 130 > target stopped 96 > resources left 95 > invariant 100 >
   * check 98 > threshold 99 > 97 > compare worse 93 (run --baseline) > ok 0
   * (a failure outranks an inconclusive threshold).
   */
  generatorLimited: 97,
  /** A per-response or end-of-run check failed. */
  checkFailed: 98,
  /** A threshold such as `p99(keys.verifyKey) < 20ms` failed. */
  thresholdFailed: 99,
  /**
   * A credit or rate-limit invariant was violated, or the oracle found a difference (an answer of
   * the simulator differs from a replay of the run through a fresh engine).
   */
  invariantViolated: 100,
  /** Stopped by SIGINT: a partial report marked interrupted was written. */
  interrupted: 130,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** A usage error: the CLI prints the message (and help) and exits with EXIT.usage. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}
