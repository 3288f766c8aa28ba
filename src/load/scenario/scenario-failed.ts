/**
 * The error of a run whose scenario could not set up or run. It is its own module because the
 * runner, its phase loop and the CLI all name it, and it carries what the run left on its target.
 */
import type { ResourcesSection } from '../../report/model.js';

/** The scenario could not set up or run: a clear message, no figures. */
export class ScenarioFailedError extends Error {
  /** What the run created, deleted and left before it failed (set by the runner). */
  resources: ResourcesSection | undefined;
  constructor(scenario: string, stage: string, cause: unknown) {
    super(`Scenario "${scenario}" failed during ${stage}: ${cause instanceof Error ? cause.message : String(cause)}`);
    this.name = 'ScenarioFailedError';
  }
}

/**
 * The run was refused before any load because of how it was asked (a scenario calling an unknown
 * operation, a scenario that needs a frozen clock against a simulator whose clock runs): a usage
 * error, not a failure of the target. `changedNothing` says the target was not touched at all.
 */
export class ScenarioRefusedError extends ScenarioFailedError {
  constructor(
    scenario: string,
    stage: string,
    cause: unknown,
    readonly changedNothing: boolean,
  ) {
    super(scenario, stage, cause);
    this.name = 'ScenarioRefusedError';
    this.message = `Scenario "${scenario}" was refused at ${stage}: ${cause instanceof Error ? cause.message : String(cause)}`;
  }
}
