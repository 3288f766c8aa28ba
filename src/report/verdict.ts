/**
 * One verdict per run, read once from the report and rendered the same everywhere: the terminal
 * summary and its final line, report.md, report.html and the JUnit file all take their states,
 * counts and headline from `runVerdict`, and the CLI's exit code is `EXIT[runVerdict(r).cause]`,
 * so no rendering can disagree with another or with the exit code. Pure.
 */
import { thresholdVerdict } from './generator-text.js';
import type { CheckResult, InvariantsSection, RunReport } from './model.js';

/** The failed check that marks a run ended early because the target stopped answering (exit 96). */
export const TARGET_STOPPED_CHECK = 'target answering';

/**
 * What decided a run's verdict, the worst first; each is the name of its exit code in the CLI's
 * `EXIT` table (src/cli/exit-codes.ts), which holds the numbers.
 */
export type VerdictCause =
  'interrupted' | 'targetStopped' | 'resourcesLeft' | 'invariantViolated' | 'checkFailed' | 'thresholdFailed' | 'generatorLimited' | 'ok';

export type Headline = 'PASS' | 'FAIL' | 'INCONCLUSIVE';
export type ThresholdState = 'passed' | 'failed' | 'inconclusive';
/** A check failed, held, or judged nothing (`inconclusive`: every answer it needed never came). */
export type CheckState = 'passed' | 'failed' | 'inconclusive';
/** An invariant held (`passed`), broke (`failed`) or had nothing in the history to judge (`unexercised`). */
export type InvariantState = 'passed' | 'failed' | 'unexercised';
export type OracleState = 'agrees' | 'differs' | 'not-run';

export interface Tally {
  passed: number;
  failed: number;
  inconclusive: number;
  total: number;
}

export interface RunVerdict {
  headline: Headline;
  cause: VerdictCause;
  /** One short reason, e.g. `threshold p99(keys.verifyKey) < 50ms failed (measured 67 ms)`. */
  reason: string;
  thresholds: Array<{ expression: string; state: ThresholdState }>;
  checks: Array<{ name: string; state: CheckState }>;
  thresholdTally: Tally;
  checkTally: Tally;
  /** Absent when the run recorded no history. */
  invariants: { state: 'clean' | 'violated' | 'not-checked'; each: Array<{ id: string; state: InvariantState }> } | undefined;
  /** Absent when the oracle was not asked for. */
  oracle: OracleState | undefined;
  /**
   * The invariants part as one word, the oracle accounted for: `violated` when an invariant broke
   * or the oracle differs, so a run failed by its oracle is never shown as clean.
   */
  invariantsHeadline: 'clean' | 'violated' | 'oracle differs' | 'not checked' | undefined;
}

function tally<S extends string>(states: readonly S[]): Tally {
  const count = (s: string) => states.filter((x) => x === s).length;
  return { passed: count('passed'), failed: count('failed'), inconclusive: count('inconclusive'), total: states.length };
}

/**
 * A check that passed without judging anything: a counting check all of whose requests got no
 * answer (`counts.unanswered` covers `counts.total`), or a scenario's check that says so itself —
 * `notJudged()` and the scenarios write its detail as `not judged: …` (or `inconclusive: …`). An
 * answer that never came is unknown, never evidence: such a check is inconclusive, not passed.
 */
/**
 * Whether a check's detail says it judged nothing (`not judged: …`, as scenario-checks.ts's
 * `notJudged` writes it, or `inconclusive …`): the one reading of that wording, for the verdict,
 * JUnit and the rule coverage.
 */
export function saysNotJudged(detail: string): boolean {
  return /^(not judged|inconclusive)\b/i.test(detail);
}

export function checkStateOf(c: CheckResult): CheckState {
  if (!c.passed) return 'failed';
  const counts = c.counts;
  if (counts !== undefined && counts.total > 0 && counts.failed === 0 && (counts.unanswered ?? 0) >= counts.total) return 'inconclusive';
  return saysNotJudged(c.detail) ? 'inconclusive' : 'passed';
}

/**
 * Whether the oracle was asked for and judged nothing (`not-run`) while the history recorded
 * operations: its silence is not an agreement.
 */
function oracleNotJudged(section: InvariantsSection | undefined): boolean {
  return section?.oracle?.verdict === 'not-run' && section.operations > 0;
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** The measured value of a threshold as its reason says it (ms for a latency). */
function measured(actual: number | null, expression: string): string {
  if (actual === null) return 'no data';
  const rounded = Math.round(actual * 100) / 100;
  return /^\s*(p\d+|max|mean)/i.test(expression) ? `${rounded} ms` : String(rounded);
}

/** What a passing run held, e.g. `2 thresholds and 3 checks passed, invariants clean, oracle agrees`. */
function passReason(report: RunReport): string {
  const judged = [
    report.thresholds.length > 0 ? plural(report.thresholds.length, 'threshold') : '',
    report.checks.length > 0 ? plural(report.checks.length, 'check') : '',
  ].filter((x) => x !== '');
  const held = judged.length === 0 ? 'nothing failed' : `${judged.join(' and ')} passed`;
  const inv = report.invariants;
  return (
    held +
    (inv?.verdict === 'clean' ? ', invariants clean' : inv?.verdict === 'not-checked' ? ', invariants not checked' : '') +
    (inv?.oracle?.verdict === 'agrees' ? ', oracle agrees' : '')
  );
}

/**
 * The cause, the worst first: interrupted > target stopped > resources left > invariant violated
 * (or oracle differs) > check failed > threshold failed > inconclusive (a threshold the generator's
 * lag may explain, a check that judged nothing, an oracle that compared nothing: exit 97, whose
 * cause keeps the name `generatorLimited`) > ok. A target that
 * stopped answering is the run's first finding (what it left behind is a consequence). A
 * generator-limited run is inconclusive, which a real failure outranks: an error-rate threshold or
 * a check that failed did so whatever the generator's pace (an inconclusive latency threshold is
 * not a failed one).
 */
function causeOf(report: RunReport): { cause: VerdictCause; reason: string } {
  if (report.status === 'interrupted') return { cause: 'interrupted', reason: 'interrupted (SIGINT): the report is partial' };
  const stopped = report.checks.find((c) => c.name === TARGET_STOPPED_CHECK && !c.passed);
  if (stopped !== undefined) return { cause: 'targetStopped', reason: `the target stopped answering: ${stopped.detail}` };
  const left = report.resources?.unexpectedlyLeft ?? 0;
  if (left > 0)
    return { cause: 'resourcesLeft', reason: `${plural(left, 'resource')} left on the target (keysim cleanup --tag ${report.resources?.tag ?? '<tag>'})` };
  const inv = report.invariants;
  if (inv?.verdict === 'violated') {
    const broken = inv.invariants.filter((i) => !i.passed);
    const first = inv.violations[0];
    return {
      cause: 'invariantViolated',
      reason: `invariant ${broken.map((i) => i.id).join(', ')} violated${first === undefined ? '' : ` (${first.subject}: ${first.message})`}`,
    };
  }
  if (inv?.oracle?.verdict === 'differs')
    return { cause: 'invariantViolated', reason: `the oracle differs: ${plural(inv.oracle.differences, 'answer')} not what a fresh engine gives` };
  const check = report.checks.find((c) => !c.passed);
  if (check !== undefined) return { cause: 'checkFailed', reason: `check ${check.name} failed: ${check.detail}` };
  const threshold = report.thresholds.find((t) => thresholdVerdict(t) === 'failed');
  if (threshold !== undefined)
    return { cause: 'thresholdFailed', reason: `threshold ${threshold.expression} failed (measured ${measured(threshold.actual, threshold.expression)})` };
  // Inconclusive only when something could not be judged: a run whose generator lagged but whose
  // every threshold was judged anyway exits on those verdicts (its report keeps the banner).
  const inconclusive = report.thresholds.filter((t) => thresholdVerdict(t) === 'inconclusive').length;
  if (inconclusive > 0) {
    return { cause: 'generatorLimited', reason: `the load generator could not keep its schedule: ${plural(inconclusive, 'threshold')} not judged` };
  }
  // A check or the oracle that judged nothing is not a pass either (exit 97, named after its first cause).
  const unjudged = report.checks.find((c) => checkStateOf(c) === 'inconclusive');
  if (unjudged !== undefined)
    return { cause: 'generatorLimited', reason: `check ${unjudged.name} not judged: ${unjudged.detail.replace(/^(not judged|inconclusive)\b:?\s*/i, '')}` };
  if (oracleNotJudged(inv))
    return { cause: 'generatorLimited', reason: `the oracle judged nothing: ${inv?.oracle?.note ?? 'no recorded answer could be compared'}` };
  if (report.status === 'failed') return { cause: 'ok', reason: 'nothing failed, but the run ended before its planned end (see its notes)' };
  return { cause: 'ok', reason: passReason(report) };
}

/** The invariants part in one word or two, the oracle accounted for: a run its oracle failed is never `clean`. */
export function invariantsHeadlineOf(section: InvariantsSection): NonNullable<RunVerdict['invariantsHeadline']> {
  if (section.verdict === 'violated') return 'violated';
  if (section.oracle?.verdict === 'differs') return 'oracle differs';
  return section.verdict === 'clean' ? 'clean' : 'not checked';
}

/** The run's verdict: every item's state, the tallies, and the headline with its cause and reason. */
export function runVerdict(report: RunReport): RunVerdict {
  const { cause, reason } = causeOf(report);
  const thresholds = report.thresholds.map((t) => ({ expression: t.expression, state: thresholdVerdict(t) }));
  const checks = report.checks.map((c) => ({ name: c.name, state: checkStateOf(c) }));
  const inv = report.invariants;
  const oracle = inv?.oracle?.verdict;
  const invariants =
    inv === undefined
      ? undefined
      : {
          state: inv.verdict,
          each: inv.invariants.map((i) => ({ id: i.id, state: (!i.passed ? 'failed' : i.checked === 0 ? 'unexercised' : 'passed') as InvariantState })),
        };
  const invariantsHeadline = inv === undefined ? undefined : invariantsHeadlineOf(inv);
  return {
    headline: cause === 'ok' ? 'PASS' : cause === 'generatorLimited' ? 'INCONCLUSIVE' : 'FAIL',
    cause,
    reason,
    thresholds,
    checks,
    thresholdTally: tally(thresholds.map((t) => t.state)),
    checkTally: tally(checks.map((c) => c.state)),
    invariants,
    oracle,
    invariantsHeadline,
  };
}
