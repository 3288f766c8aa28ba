/** Ctrl-C during `keysim run`: the first stops the run and writes a partial report, the second quits at once. */
import { EXIT } from './exit-codes.js';

export class RunInterrupt {
  readonly controller = new AbortController();
  private sigints = 0;
  private readonly onSigint = (): void => {
    this.sigints++;
    if (this.sigints > 1) process.exit(EXIT.interrupted);
    process.stderr.write('\nkeysim: stopping (SIGINT); writing a partial report. Press Ctrl-C again to quit at once.\n');
    this.controller.abort();
  };

  constructor() {
    process.on('SIGINT', this.onSigint);
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** The run is over: Ctrl-C is node's again. */
  release(): void {
    process.off('SIGINT', this.onSigint);
  }
}
