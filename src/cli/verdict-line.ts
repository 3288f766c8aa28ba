/**
 * The last line a command prints: `PASS`, `FAIL` or `INCONCLUSIVE`, the exit code and one short
 * reason, e.g. `FAIL (exit 99): threshold p99(keys.verifyKey) < 50ms failed (measured 67 ms)`. The
 * line a CI log is searched for, so it is plain there; on a terminal it has a mark and a colour.
 */
import { type Headline, runVerdict } from '../report/verdict.js';
import type { RunReport } from '../report/model.js';
import { EXIT, type ExitCode } from './exit-codes.js';

/** How the line is decorated: ✓/✗/? marks and ANSI colour, each on or off. */
export interface LineStyle {
  marks: boolean;
  color: boolean;
}

/**
 * Marks and colour on a terminal only: not when the stream is not a TTY (a pipe, a CI log) or `CI`
 * is set. `NO_COLOR` (any non-empty value, https://no-color.org) turns colour off; `FORCE_COLOR`
 * (non-empty and not `0`) turns it on, as in most Node tools; `NO_COLOR` wins.
 */
export function lineStyle(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv = process.env): LineStyle {
  const terminal = stream.isTTY === true && (env.CI === undefined || env.CI === '' || env.CI === 'false');
  const noColor = env.NO_COLOR !== undefined && env.NO_COLOR !== '';
  const force = env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== '' && env.FORCE_COLOR !== '0' && env.FORCE_COLOR !== 'false';
  return { marks: terminal, color: !noColor && (terminal || force) };
}

/** The headline an exit code stands for: 0 passes, 97 (generator-limited) and 94 (history truncated) leave it open, every other code fails. */
export function headlineOfExit(code: ExitCode): Headline {
  if (code === EXIT.ok) return 'PASS';
  if (code === EXIT.generatorLimited || code === EXIT.historyTruncated) return 'INCONCLUSIVE';
  return 'FAIL';
}

const MARK: Record<Headline, string> = { PASS: '✓', FAIL: '✗', INCONCLUSIVE: '?' };
/** Green, red, yellow (bold). */
const COLOR: Record<Headline, string> = { PASS: '\x1b[1;32m', FAIL: '\x1b[1;31m', INCONCLUSIVE: '\x1b[1;33m' };

/** The final line for an exit code and its reason. */
export function verdictLine(code: ExitCode, reason: string, style: LineStyle): string {
  const headline = headlineOfExit(code);
  const word = style.marks ? `${MARK[headline]} ${headline}` : headline;
  const painted = style.color ? `${COLOR[headline]}${word}\x1b[0m` : word;
  return `${painted} (exit ${code}): ${reason}`;
}

/**
 * The reasons behind a command's exit code: the command keeps deciding its code as it does (the
 * worst of its runs), and notes each run's code with its reason here; the final line gives the
 * reason first noted for the code the command ends with.
 */
export class VerdictReasons {
  readonly #reasons = new Map<ExitCode, string>();

  /** A run's report: its code and reason are `runVerdict`'s (`label` names the run when there are several). */
  report(report: RunReport, label?: string): ExitCode {
    const verdict = runVerdict(report);
    const code = EXIT[verdict.cause];
    this.note(code, label === undefined ? verdict.reason : `${label}: ${verdict.reason}`);
    return code;
  }

  /** Any other outcome: a scenario that could not run, a report not saved, a worse comparison. */
  note(code: ExitCode, reason: string): void {
    if (!this.#reasons.has(code)) this.#reasons.set(code, reason);
  }

  /** The final line for the code the command ends with. */
  line(code: ExitCode, style: LineStyle): string {
    const reason = this.#reasons.get(code) ?? (code === EXIT.ok ? 'nothing failed' : 'see the messages above');
    return verdictLine(code, reason, style);
  }
}
