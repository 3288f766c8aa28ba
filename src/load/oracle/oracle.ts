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
 * Given a path, the oracle also saves the journal there as it drains it (journal-file.ts), so
 * that `keysim check` on the run folder replays and compares again (oracle-replay.ts judges both).
 * Saving is a service to `keysim check`, not part of the judgement: when it fails, the replay and
 * the comparison go on (the differences found still fail the run) and the section says so.
 *
 * Memory: the simulator keeps only what was not drained yet (drained about once a second); here
 * one expected outcome per recorded request is kept until the comparison.
 */
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type { JournalStart, JournalTake } from '../../http/index.js';
import type { HistoryEvent } from '../history/index.js';
import { type JournalEnd, JournalFileWriter } from '../history/index.js';
import { OracleReplay } from './oracle-replay.js';
import type { OracleSection } from '../../report/model.js';
import { ServiceCallError, detailOf, type HttpJsonClient } from '../target/index.js';

/** The oracle's verdict, as the report shows it. */
export type OracleResult = OracleSection;

/**
 * Pages stay small and the replay yields every REPLAY_CHUNK entries: it runs on the load
 * generator's thread, and a long synchronous stretch would show up as latency (about 2–3 µs per
 * entry parsed and replayed: a chunk holds the event loop for a few ms at most).
 */
const TAKE_PAGE = 5_000;
const REPLAY_CHUNK = 1_000;

async function admin<T>(client: HttpJsonClient, op: string, body: unknown): Promise<T> {
  const res = await client.post(`/_sim/${op}`, body, 'root');
  if (res.status !== 200) throw new ServiceCallError(`/_sim/${op}`, res.status, detailOf(res.body));
  return (res.body as { data: T }).data;
}

export interface OracleOptions {
  /** The simulator journal's capacity (default the simulator's). */
  capacity?: number;
  /** Where to save the journal for `keysim check` (journal-file.ts); default: not saved. */
  journalPath?: string;
}

export class Oracle {
  readonly #client: HttpJsonClient;
  readonly #replay: OracleReplay;
  readonly #file: JournalFileWriter | undefined;
  #draining: Promise<void> | undefined;
  readonly #end: JournalEnd = { overflowed: false };
  #fileClosed = false;
  /** Why the journal could not be saved: the replay goes on, only `keysim check` cannot re-check. */
  #saveFailure: string | undefined;

  private constructor(client: HttpJsonClient, replay: OracleReplay, file: JournalFileWriter | undefined) {
    this.#client = client;
    this.#replay = replay;
    this.#file = file;
  }

  /** Starts the simulator's journal (before the scenario's setup, so fixtures are in it). */
  static async start(client: HttpJsonClient, options: OracleOptions | number = {}): Promise<Oracle> {
    const { capacity, journalPath } = typeof options === 'number' ? { capacity: options, journalPath: undefined } : options;
    const start = await admin<JournalStart>(client, 'journal.start', capacity === undefined ? {} : { capacity });
    const replay = OracleReplay.create(start);
    const file = journalPath === undefined ? undefined : await JournalFileWriter.create(journalPath, start);
    return new Oracle(client, replay, file);
  }

  /** Entries replayed so far. */
  get replayed(): number {
    return this.#replay.replayed;
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
    if (this.#end.failure !== undefined) return;
    try {
      for (;;) {
        const page = await admin<JournalTake>(this.#client, 'journal.take', { max: TAKE_PAGE });
        // Saved before it is replayed: `keysim check` then meets whatever made the replay fail.
        await this.#save(page.entries);
        for (const [i, entry] of page.entries.entries()) {
          if (i > 0 && i % REPLAY_CHUNK === 0) await yieldToLoop();
          this.#replay.replay(entry);
        }
        if (page.overflowed) this.#end.overflowed = true;
        if (page.endedBecause !== undefined) this.#end.endedBecause = page.endedBecause;
        if (page.entries.length < TAKE_PAGE) return;
      }
    } catch (error) {
      this.#end.failure = error instanceof Error ? error.message : String(error);
    }
  }

  /**
   * Appends a page to the saved journal. A failure to save (a full disk, a removed folder) is not a
   * failure of the oracle: the replay and the comparison go on, and the section says that
   * `keysim check` cannot re-check this run's oracle.
   */
  async #save(entries: JournalTake['entries']): Promise<void> {
    if (this.#file === undefined || this.#fileClosed || this.#saveFailure !== undefined) return;
    try {
      await this.#file.append(entries);
    } catch (error) {
      this.#saveFailed(error);
    }
  }

  #saveFailed(error: unknown): void {
    this.#saveFailure ??= error instanceof Error ? error.message : String(error);
  }

  /** Stops the journal and closes the saved journal; best effort, never rejects: the run is over either way. */
  async stop(): Promise<void> {
    await admin(this.#client, 'journal.stop', {}).catch(() => undefined);
    await this.#closeFile();
  }

  async #closeFile(): Promise<void> {
    if (this.#file === undefined || this.#fileClosed) return;
    this.#fileClosed = true;
    await this.#file.close({ ...this.#end }).catch((error: unknown) => this.#saveFailed(error));
  }

  /**
   * Compares every recorded answer with the replayed one. Call after the last `drain()`: the saved
   * journal is closed with how it ended, so that `keysim check` reaches this verdict again.
   */
  async compare(events: Iterable<HistoryEvent>): Promise<OracleResult> {
    await this.#closeFile();
    const section = this.#replay.compare(events, this.#end);
    if (this.#saveFailure === undefined) return section;
    const unsaved = `the journal could not be saved for keysim check (${this.#saveFailure}): this run's oracle cannot be re-checked from its folder`;
    return { ...section, note: section.note === undefined ? unsaved : `${section.note}; ${unsaved}` };
  }
}
