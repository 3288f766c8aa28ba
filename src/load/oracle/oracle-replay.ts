/**
 * The oracle's judgement, apart from where the journal comes from: entries replayed in order
 * through a fresh engine (src/http/replay.ts), one expected outcome kept per recorded request, then
 * every recorded answer compared with the replay's. The run feeds it from the live simulator
 * (oracle.ts); `keysim check` from the journal the run saved (journal-file.ts), so both reach
 * the same verdict.
 */
import { JournalReplayer, type JournalEntry, type JournalStart } from '../../http/index.js';
import { type HistoryEvent, type HistoryOutcome, historyOutcome } from '../history/index.js';
import { SEQ_HEADER } from '../history/index.js';
import { ORACLE_EXAMPLES_MAX } from '../invariants/index.js';
import type { JournalEnd } from '../history/index.js';
import type { OracleDifference, OracleSection } from '../../report/model.js';
import { OPERATIONS, type Operation } from '../scenario/index.js';

const V2_OPERATIONS = new Map<string, Operation>(OPERATIONS.map((op) => [`/v2/${op}`, op]));

/** The fields of two outcomes that differ, in a stable order (status first). */
function firstDifference(expected: HistoryOutcome, received: HistoryOutcome): { field: string; expected: string; received: string } | undefined {
  const fields = new Set<string>(['status', ...Object.keys(expected), ...Object.keys(received)]);
  for (const field of fields) {
    const a = JSON.stringify((expected as unknown as Record<string, unknown>)[field]) ?? 'absent';
    const b = JSON.stringify((received as unknown as Record<string, unknown>)[field]) ?? 'absent';
    if (a !== b) return { field, expected: a, received: b };
  }
  return undefined;
}

export class OracleReplay {
  readonly #replayer: JournalReplayer;
  /** seq → what a correct simulator answers (recorded requests only). */
  readonly #expected = new Map<number, { op: Operation; outcome: HistoryOutcome }>();

  private constructor(replayer: JournalReplayer) {
    this.#replayer = replayer;
  }

  /** A fresh engine in the journal's starting state; throws with the reason when it is unusable. */
  static create(start: JournalStart): OracleReplay {
    return new OracleReplay(JournalReplayer.create(start));
  }

  /** Entries replayed so far. */
  get replayed(): number {
    return this.#replayer.replayed;
  }

  /** Replays the next entry; throws when it is not the next one (a gap would replay on the wrong state). */
  replay(entry: JournalEntry): void {
    if (entry.index !== this.#replayer.replayed) {
      // A gap (or a journal restarted by someone else): the rest would replay on the wrong state.
      throw new Error(`the journal skipped from entry ${this.#replayer.replayed} to ${entry.index}`);
    }
    const answer = this.#replayer.apply(entry);
    const op = V2_OPERATIONS.get(entry.path);
    if (entry.seq === undefined || op === undefined) return;
    this.#expected.set(entry.seq, { op, outcome: historyOutcome(op, answer.status, answer.body) });
  }

  /** Compares every recorded answer with the replayed one, given how the journal ended. */
  compare(events: Iterable<HistoryEvent>, end: JournalEnd): OracleSection {
    const result: OracleSection = { verdict: 'agrees', compared: 0, skipped: 0, differences: 0, examples: [] };
    if (end.failure !== undefined) return { ...result, verdict: 'not-run', note: `the journal could not be read or replayed: ${end.failure}` };
    if (end.endedBecause !== undefined) return { ...result, verdict: 'not-run', note: `the journal ended during the run (${end.endedBecause})` };
    const differences: OracleDifference[] = [];
    let unmatched = 0;
    for (const event of events) {
      const expected = this.#expected.get(event.seq);
      if (event.outcome === 'unknown' || event.outcome.status >= 500) {
        result.skipped++;
        continue;
      }
      if (expected === undefined) {
        // Refused before execution (schema, Authorization, the API rate limit), hence never
        // journaled; or sent without the seq header; or executed after an overflow.
        result.skipped++;
        if (event.outcome.status === 200 && !end.overflowed) unmatched++;
        continue;
      }
      result.compared++;
      const diff = firstDifference(expected.outcome, event.outcome);
      if (diff !== undefined) differences.push({ seq: event.seq, op: event.op, ...diff });
    }
    differences.sort((a, b) => a.seq - b.seq);
    result.differences = differences.length;
    result.examples = differences.slice(0, ORACLE_EXAMPLES_MAX);
    if (differences.length > 0) result.verdict = 'differs';
    const notes: string[] = [];
    if (end.overflowed) notes.push('the journal overflowed: operations executed after that were not compared (drain it more often or raise its capacity)');
    if (unmatched > 0) notes.push(`${unmatched} answered operations had no journal entry with their seq (sent without the ${SEQ_HEADER} header?)`);
    if (notes.length > 0) result.note = notes.join('; ');
    if (result.compared === 0 && result.verdict === 'agrees')
      return { ...result, verdict: 'not-run', note: result.note ?? 'no recorded answer could be compared' };
    return result;
  }
}
