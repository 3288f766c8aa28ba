/** Collects the violations a checker finds: the earliest per invariant and subject, with a count. */
import type { HistoryEvent } from '../history/index.js';
import type { InvariantId, Violation } from './types.js';

/** Keeps the earliest violation per invariant and subject, and counts the others. */
export class ViolationLog {
  readonly #byKey = new Map<string, { atMs: number; violation: Violation }>();

  add(invariant: InvariantId, subject: string, atMs: number, build: () => { message: string; witness: HistoryEvent[] }): void {
    const id = `${invariant}\0${subject}`;
    const known = this.#byKey.get(id);
    if (known !== undefined) {
      known.violation.occurrences++;
      if (atMs >= known.atMs) return;
      const built = build();
      known.atMs = atMs;
      known.violation.message = built.message;
      known.violation.witness = built.witness;
      return;
    }
    const built = build();
    this.#byKey.set(id, { atMs, violation: { invariant, subject, message: built.message, witness: built.witness, occurrences: 1 } });
  }

  violations(): Violation[] {
    return [...this.#byKey.values()].sort((a, b) => a.atMs - b.atMs).map((v) => v.violation);
  }
}

/** The most operations a witness shows. */
export const WITNESS_MAX = 6;

/** Distinct events by seq, at most WITNESS_MAX, the ones listed first kept first, shown in seq order. */
export function witness(...groups: ReadonlyArray<ReadonlyArray<HistoryEvent | undefined>>): HistoryEvent[] {
  const seen = new Map<number, HistoryEvent>();
  for (const group of groups) {
    for (const event of group) {
      if (event === undefined || seen.has(event.seq)) continue;
      if (seen.size >= WITNESS_MAX) break;
      seen.set(event.seq, event);
    }
  }
  return [...seen.values()].sort((a, b) => a.seq - b.seq);
}
