/**
 * What stops a run's load before its plan ends: a SIGINT (the run is "interrupted") or a target
 * that stopped answering (dead-target.ts: the run "failed"). Either stops the open model's
 * executor and aborts the signal the closed model listens to.
 */
import type { TargetStoppedVerdict } from '../answers/index.js';
import type { OpenModelExecutor } from '../executors/index.js';
import type { Recorder } from '../metrics/index.js';

export class LoadStop {
  #interrupted = false;
  #targetStopped: TargetStoppedVerdict | undefined;
  /** The open model's executor once it exists (a stop before that has nothing to stop). */
  executor: OpenModelExecutor | undefined;
  readonly #abort = new AbortController();
  readonly #recorder: Recorder;

  constructor(recorder: Recorder) {
    this.#recorder = recorder;
  }

  get interrupted(): boolean {
    return this.#interrupted;
  }

  get targetStopped(): TargetStoppedVerdict | undefined {
    return this.#targetStopped;
  }

  /** Aborted when the load stops, for the closed model. */
  get signal(): AbortSignal {
    return this.#abort.signal;
  }

  /** A SIGINT (the run's abort signal): a listener, so bound once. */
  readonly interrupt = (): void => {
    this.#interrupted = true;
    // Answers still arriving after a stop are cut short: they are not figures.
    this.#recorder.freeze();
    this.executor?.stop();
    this.#abort.abort();
  };

  /** The target stopped answering (dead-target.ts). */
  targetStoppedWith(verdict: TargetStoppedVerdict): void {
    this.#targetStopped = verdict;
    this.executor?.stop();
    this.#abort.abort();
  }
}
