/**
 * The end of a run on its target's resources: on a target that outlives the run (a live
 * deployment, a remote simulator) the scenario's registered cleanups run, then a sweep by the
 * run's tag deletes what they missed (e.g. identities created by the load), and the ledger says
 * what was created, deleted and left. `--keep` leaves everything and says, in one message, how to
 * delete it later. The embedded simulator is discarded with the run: nothing is deleted.
 */
import type { ResourcesSection } from '../../report/model.js';
import { classifyTransportError } from '../answers/index.js';
import { writeOpenResources } from './resource-handover.js';
import { cleanupCommandFor, deleteResources, describeResource, findLeftovers, resourcesSection, type SweepOptions } from './resource-sweep.js';

export interface RunCleanupOptions {
  /** A live deployment or a remote simulator: what the run leaves stays there. */
  persistent: boolean;
  keep: boolean;
  /** The scenario's registered cleanups, in registration order (run in reverse). */
  cleanups: ReadonlyArray<() => Promise<void>>;
  sweep: SweepOptions;
  /** The target's URL, for the cleanup command. */
  url: string;
  /** Progress lines (hidden by --quiet). */
  log: (line: string) => void;
  /** Lines shown even with --quiet: what was left behind. */
  warn: (line: string) => void;
  /**
   * A segment of a shared set-up: what it leaves open is written here (resource-handover.ts), so
   * that the one teardown after the last segment deletes the keys its load created.
   */
  handoverPath?: string;
}

/** Writes what is left open for the teardown after the segments; a failure is said, never thrown. */
function handOver(options: RunCleanupOptions): void {
  if (options.handoverPath === undefined) return;
  try {
    writeOpenResources(options.handoverPath, options.sweep.ledger);
  } catch (error) {
    options.warn(
      `cannot write ${options.handoverPath} (${error instanceof Error ? error.message : String(error)}): the teardown after the segments will not know the keys this segment created; keysim cleanup --tag ${options.sweep.ledger.tag} --out with this run's reports folder reads its ledger`,
    );
  }
}

const MAX_NOTES = 10;
/** Deletes in a row without an answer after which the target is taken to be gone. */
const MAX_UNANSWERED = 3;

export async function cleanUpRun(options: RunCleanupOptions): Promise<ResourcesSection> {
  const { sweep, url, log, warn } = options;
  const { ledger } = sweep;
  if (!options.persistent) {
    ledger.discardFile();
    return resourcesSection(ledger, { disposal: 'discarded', url, notes: ['The embedded simulator is discarded with the run: nothing needed deleting.'] });
  }
  if (options.keep) {
    handOver(options);
    const section = resourcesSection(ledger, { disposal: 'kept', url });
    const left = section.kinds.reduce((sum, k) => sum + k.left, 0);
    // A segment's ledger file may be its sibling segments' too (one reports folder): it stays.
    if (options.handoverPath !== undefined) log(`left ${left} resources to the teardown after the last segment (listed in ${options.handoverPath})`);
    else if (left > 0)
      warn(`--keep: left ${left} resources on ${url}, named after the run's tag ${ledger.tag}; delete them with: ${cleanupCommandFor(url, ledger.tag)}`);
    else ledger.discardFile();
    return section;
  }

  const problems: string[] = [];
  const pending = [...options.cleanups].reverse();
  // A target that stopped answering would make every remaining cleanup wait for its timeout.
  let unanswered = 0;
  while (pending.length > 0 && unanswered < MAX_UNANSWERED) {
    const cleanup = pending.shift() as () => Promise<void>;
    try {
      await cleanup();
      unanswered = 0;
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      unanswered = classifyTransportError(error) === 'other' ? 0 : unanswered + 1;
      log(`cleanup failed: ${message}`);
      problems.push(`a cleanup failed: ${message}`);
    }
  }
  const stopped = unanswered >= MAX_UNANSWERED;
  if (stopped)
    problems.unshift(
      `the target stopped answering during the cleanup (${MAX_UNANSWERED} deletes in a row got no answer): ${pending.length} cleanups and the sweep by the run's tag were not attempted`,
    );
  // What the scenario's cleanups missed: created by a request whose answer was lost, by the load, …
  if (!stopped) {
    try {
      const leftovers = (await findLeftovers(sweep)).filter((e) => e.kind !== 'apis');
      if (leftovers.length > 0) log(`deleting ${leftovers.length} more resources of this run found by its tag`);
      for (const failure of await deleteResources(sweep, leftovers)) problems.push(`could not delete ${describeResource(failure.entry)}: ${failure.reason}`);
    } catch (error) {
      problems.push(`could not look for what the run left (by its tag): ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  const notes = problems.slice(0, MAX_NOTES);
  if (problems.length > MAX_NOTES) notes.push(`… and ${problems.length - MAX_NOTES} more problems.`);
  handOver(options);
  const section = resourcesSection(ledger, { disposal: 'cleaned', url, notes });
  if (section.cleanupCommand === undefined) {
    ledger.discardFile();
  } else {
    const left = section.kinds.filter((k) => k.kind !== 'apis' && k.left > 0).map((k) => `${k.left} ${k.kind}`);
    warn(`left on ${url}: ${left.join(', ')} (named after the run's tag ${ledger.tag}); delete them with: ${section.cleanupCommand}`);
  }
  return section;
}
