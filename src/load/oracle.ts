/**
 * The oracle (simulator targets): a differential test of the simulator's HTTP layer under load.
 * The simulator journals the order in which it really executed the operations
 * (src/http/journal.ts); the runner drains that journal during the run, replays it through a
 * fresh engine (src/http/replay.ts) and, at the end, compares each replayed answer with the one
 * the client received — matched by the `x-keysim-seq` header every recorded request carries —
 * on the fields the history keeps (status, code, credits, remaining, reset, limits …).
 * Any difference is a failure: the engine under load, the HTTP layer or an injected fault
 * answered what a correct simulator executing the same order would not have.
 *
 * Memory: the simulator keeps only what was not drained yet (drained about once a second); here
 * one expected outcome per recorded request is kept until the comparison.
 */
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { JournalReplayer, type JournalEntry, type JournalStart, type JournalTake } from '../http/index.js';
import { type HistoryEvent, type HistoryOutcome, historyOutcome } from './history.js';
import { SEQ_HEADER } from './history-recording.js';
import { ORACLE_EXAMPLES_MAX } from './invariants-section.js';
import type { OracleDifference, OracleSection } from '../report/model.js';
import { OPERATIONS, type Operation } from './scenario.js';
import { ServiceCallError, detailOf, type HttpJsonClient } from './service-api.js';

/** The oracle's verdict, as the report shows it. */
export type OracleResult = OracleSection;

/**
 * Pages stay small and the replay yields every REPLAY_CHUNK entries: it runs on the load
 * generator's thread, and a long synchronous stretch would show up as latency (about 2–3 µs per
 * entry parsed and replayed: a chunk holds the event loop for a few ms at most).
 */
const TAKE_PAGE = 5_000;
const REPLAY_CHUNK = 1_000;
const V2_OPERATIONS = new Map<string, Operation>(OPERATIONS.map((op) => [`/v2/${op}`, op]));

async function admin<T>(client: HttpJsonClient, op: string, body: unknown): Promise<T> {
  const res = await client.post(`/_sim/${op}`, body, 'root');
  if (res.status !== 200) throw new ServiceCallError(`/_sim/${op}`, res.status, detailOf(res.body));
  return (res.body as { data: T }).data;
}

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

export class Oracle {
  readonly #client: HttpJsonClient;
  readonly #replayer: JournalReplayer;
  /** seq → what a correct simulator answers (recorded requests only). */
  readonly #expected = new Map<number, { op: Operation; outcome: HistoryOutcome }>();
  #draining: Promise<void> | undefined;
  #overflowed = false;
  #endedBecause: string | undefined;
  #failure: string | undefined;

  private constructor(client: HttpJsonClient, replayer: JournalReplayer) {
    this.#client = client;
    this.#replayer = replayer;
  }

  /** Starts the simulator's journal (before the scenario's setup, so fixtures are in it). */
  static async start(client: HttpJsonClient, capacity?: number): Promise<Oracle> {
    const start = await admin<JournalStart>(client, 'journal.start', capacity === undefined ? {} : { capacity });
    return new Oracle(client, JournalReplayer.create(start));
  }

  /** Entries replayed so far. */
  get replayed(): number {
    return this.#replayer.replayed;
  }

  /** A drain unless one is running (for a periodic timer: ticks must not queue up behind a slow drain). */
  drainIfIdle(): void {
    if (this.#draining === undefined) void this.drain();
  }

  /**
   * Takes what the journal holds and replays it. One drain at a time: a call while one runs
   * waits for it and then drains again, so after `await drain()` everything executed before the
   * call is replayed.
   */
  async drain(): Promise<void> {
    while (this.#draining !== undefined) await this.#draining;
    this.#draining = this.#drainAll().finally(() => {
      this.#draining = undefined;
    });
    await this.#draining;
  }

  async #drainAll(): Promise<void> {
    if (this.#failure !== undefined) return;
    try {
      for (;;) {
        const page = await admin<JournalTake>(this.#client, 'journal.take', { max: TAKE_PAGE });
        for (const [i, entry] of page.entries.entries()) {
          if (i > 0 && i % REPLAY_CHUNK === 0) await yieldToLoop();
          if (entry.index !== this.#replayer.replayed) {
            // A gap (or a journal restarted by someone else): the rest would replay on the wrong state.
            throw new Error(`the journal skipped from entry ${this.#replayer.replayed} to ${entry.index}`);
          }
          this.#replay(entry);
        }
        if (page.overflowed) this.#overflowed = true;
        if (page.endedBecause !== undefined) this.#endedBecause = page.endedBecause;
        if (page.entries.length < TAKE_PAGE) return;
      }
    } catch (error) {
      this.#failure = error instanceof Error ? error.message : String(error);
    }
  }

  #replay(entry: JournalEntry): void {
    const answer = this.#replayer.apply(entry);
    const op = V2_OPERATIONS.get(entry.path);
    if (entry.seq === undefined || op === undefined) return;
    this.#expected.set(entry.seq, { op, outcome: historyOutcome(op, answer.status, answer.body) });
  }

  /** Stops the journal (best effort: the run is over either way). */
  async stop(): Promise<void> {
    await admin(this.#client, 'journal.stop', {}).catch(() => undefined);
  }

  /** Compares every recorded answer with the replayed one. Call after the last `drain()`. */
  compare(events: Iterable<HistoryEvent>): OracleResult {
    const result: OracleResult = { verdict: 'agrees', compared: 0, skipped: 0, differences: 0, examples: [] };
    if (this.#failure !== undefined) return { ...result, verdict: 'not-run', note: `the journal could not be read or replayed: ${this.#failure}` };
    if (this.#endedBecause !== undefined) return { ...result, verdict: 'not-run', note: `the journal ended during the run (${this.#endedBecause})` };
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
        if (event.outcome.status === 200 && !this.#overflowed) unmatched++;
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
    if (this.#overflowed) notes.push('the journal overflowed: operations executed after that were not compared (drain it more often or raise its capacity)');
    if (unmatched > 0) notes.push(`${unmatched} answered operations had no journal entry with their seq (sent without the ${SEQ_HEADER} header?)`);
    if (notes.length > 0) result.note = notes.join('; ');
    if (result.compared === 0 && result.verdict === 'agrees') return { ...result, verdict: 'not-run', note: result.note ?? 'no recorded answer could be compared' };
    return result;
  }
}
