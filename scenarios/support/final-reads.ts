/**
 * The end-of-run reads of the built-in scenarios: each key's record (keys.getKey), asked again
 * when its answer never came (readOutcome). A read that never came in all its attempts is no
 * evidence: the checks that need it say "not judged" with the reason, never passed or failed.
 */
import { type Json, LostAnswers, SETUP_CONCURRENCY, type ScenarioContext, inParallel, isInt, isRecord, okData, readOutcome } from '../../src/index.js';

export interface KeyReads {
  /** Per key, in the order given: its record's `data`, a message saying what was wrong with the answer, or undefined when none came. */
  data: Array<Json | string | undefined>;
  /** The reads whose answer never came, and why. */
  lost: LostAnswers;
}

/** keys.getKey of every key, at most SETUP_CONCURRENCY at a time. */
export async function readKeys(ctx: Pick<ScenarioContext, 'api'>, keyIds: readonly string[]): Promise<KeyReads> {
  const lost = new LostAnswers();
  const data = await inParallel(keyIds, SETUP_CONCURRENCY, async (keyId) => {
    const outcome = await readOutcome(ctx, 'keys.getKey', { keyId });
    if (outcome.answered) return okData(outcome.response);
    lost.note(outcome.why);
    return undefined;
  });
  return { data, lost };
}

/** The balance (`credits.remaining`) of a read key; null for an unlimited key; NaN when the answer holds none. */
export function remainingOf(data: Json | string | undefined): number | null {
  if (data === undefined || typeof data === 'string') return Number.NaN;
  if (!isRecord(data.credits)) return null;
  const remaining = data.credits.remaining;
  return remaining === null ? null : isInt(remaining) ? remaining : Number.NaN;
}

/** "keys.getKey at the end: 2 answers never came (reset: socket hang up ×2)"-style reason for notJudged. */
export function lostReadsReason(lost: LostAnswers): string {
  return `keys.getKey at the end, each asked up to 3 times: ${lost.text()}`;
}
