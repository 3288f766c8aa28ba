/** The exit code of `keysim run` as its scenarios end, and the reasons its final line gives. */
import { EXIT, type ExitCode } from './exit-codes.js';
import { VerdictReasons } from './verdict-line.js';
import { worseExitCode as worse } from './exit-severity.js';

export class RunTally {
  exit: ExitCode = EXIT.ok;
  readonly reasons = new VerdictReasons();

  /** The exit code at least this bad, and the reason it says (when there is one to say). */
  worsen(code: ExitCode, reason?: string): void {
    this.exit = worse(this.exit, code);
    if (reason !== undefined) this.reasons.note(code, reason);
  }
}
