/**
 * The error of a run whose scenario could not set up or run. It is its own module because the
 * runner, its phase loop and the CLI all name it, and it carries what the run left on its target.
 */
import type { ResourcesSection } from '../report/model.js';

/** The scenario could not set up or run: a clear message, no figures. */
export class ScenarioFailedError extends Error {
  /** What the run created, deleted and left before it failed (set by the runner). */
  resources: ResourcesSection | undefined;
  constructor(scenario: string, stage: string, cause: unknown) {
    super(`Scenario "${scenario}" failed during ${stage}: ${cause instanceof Error ? cause.message : String(cause)}`);
    this.name = 'ScenarioFailedError';
  }
}
