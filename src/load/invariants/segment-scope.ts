/**
 * What one segment may judge over its own history (docs/checking.md#one-segments-own-verdict).
 *
 * A segment's history holds only its own operations; other segments (and a shared set-up) may
 * operate on the same keys and rate limits at the same time. A verdict stays sound on such a
 * subset only where the missing operations cannot change it:
 *
 * - ratelimit.no-over-admission: the admitted cost it counts per window is a lower bound of what
 *   the service counted; other segments' admissions only add to the service's count. Judged,
 *   against the higher of the replayed limit and the answer's (another segment may have raised an
 *   override this history set).
 * - ratelimit.no-false-denial: needs an upper bound of what the service counted, so every
 *   admission on the counter. Judged only on counters no other process can spend: the inline
 *   limits of keys this segment created (only its process holds such a key's secret). A key's
 *   attached limit (`rl_` id) may be its identity's, shared with keys of other segments; a
 *   namespace/identifier may be limited by every segment: those are left to the merge.
 * - credits (all four): a missing set or top-up raises the budget (a false over-spend); a missing
 *   spend lowers it (a false under-serve or inconsistent balance). Judged only on keys whose
 *   createKey is in this history and that no shared fixture names: no other process knows them,
 *   so every operation on them is here.
 *
 * Everything else is "not judged in one segment": keysim merge or keysim check over every
 * segment's history judges it (history-combine.ts).
 */
import type { HistoryEvent } from '../history/index.js';
import { okOutcome } from '../history/index.js';

/** Keys only this history's process can have used; undefined outside a segment (every key is). */
export function ownKeys(events: readonly HistoryEvent[], sharedKeyIds: readonly string[] | undefined, segment: boolean): ReadonlySet<string> | undefined {
  if (!segment) return undefined;
  const shared = new Set(sharedKeyIds ?? []);
  const own = new Set<string>();
  for (const event of events) {
    if (event.op !== 'keys.createKey') continue;
    const keyId = okOutcome(event)?.keyId;
    if (keyId !== undefined && !shared.has(keyId)) own.add(keyId);
  }
  return own;
}

/** Whether a rate-limit counter (ratelimit-collect.ts's names) can be spent only by this segment. */
export function ownCounter(counter: string, own: ReadonlySet<string> | undefined): boolean {
  if (own === undefined) return true;
  if (!counter.startsWith('key:')) return false;
  const keyId = counter.slice('key:'.length, counter.indexOf('\0'));
  return own.has(keyId);
}
