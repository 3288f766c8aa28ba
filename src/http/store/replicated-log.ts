/**
 * The store's log: a Redis stream every replica appends its requests to (with the append script,
 * log-script.ts, batched by append-batch.ts) and reads back in full, in the stream's one total
 * order. Each replica applies every entry to its own copy of the state, so all copies go through
 * the same states; a request is answered by the replica that sent it, once it has applied the
 * request's own entry.
 *
 * A request whose append fails (Redis unreachable) is refused (`StoreUnavailable`) and never
 * applied anywhere. One appended but not yet applied here when the reader loses Redis, or not
 * applied within `answerTimeoutMs` (a Redis that hangs), is also refused, though it may have taken
 * effect: the answer is unknown. A busy machine alone never refuses one: while the reader reads,
 * only the long safety bound applies.
 */
import { randomUUID } from 'node:crypto';
import type { LogKeys, RedisLink } from './redis-link.js';
import { NO_GENESIS } from './log-script.js';
import { AppendBatcher } from './append-batch.js';

/** One entry of the log as a replica applies it. */
export interface LogEntry {
  id: string;
  /** Redis's clock when it was appended, Unix ms (never decreasing along the log). */
  stampMs: number;
  /** Its number in the log: 1, 2, 3 … (a replica that sees one skipped has lost entries to a trim). */
  count: number;
  /** The replica that appended it, and its number there. */
  origin: string;
  callNumber: number;
  payload: string;
}

/** The store cannot be used now: the request was not answered (HTTP 503). */
export class StoreUnavailable extends Error {
  override readonly name = 'StoreUnavailable';
}

export type { LogKeys };

/** Where a replica stands in the log: after the entry of this id and number ('0' and 0: before the first). */
export interface LogPosition {
  id: string;
  count: number;
}

type Waiter = { resolve: (value: unknown) => void; reject: (error: Error) => void; timer: NodeJS.Timeout };

/** Entries read per XREAD; the reader blocks at most this long when the log is idle, ms. */
const READ_COUNT = 1_000;
const READ_BLOCK_MS = 1_000;
/** After a failed read, the pause before the next try, ms. */
const READ_RETRY_MS = 100;

export class ReplicatedLog {
  readonly origin = randomUUID();
  readonly #link: RedisLink;
  readonly #keys: LogKeys;
  readonly #answerTimeoutMs: number;
  readonly #waiters = new Map<number, Waiter>();
  #reader: RedisLink | undefined;
  #nextCall = 0;
  #position: LogPosition = { id: '0', count: 0 };
  #closed = false;
  #loop: Promise<void> | undefined;
  readonly #batcher: AppendBatcher;

  constructor(link: RedisLink, keys: LogKeys, answerTimeoutMs: number) {
    this.#link = link;
    this.#keys = keys;
    this.#answerTimeoutMs = answerTimeoutMs;
    this.#batcher = new AppendBatcher((calls) => link.append(keys, this.origin, calls));
  }

  /**
   * Resumes the state (`resume`: from the newest checkpoint, when there is one, answering where
   * that leaves it in the log), applies every entry after it (the state the other replicas
   * built), then keeps applying new ones as they come. `apply` answers what the entry's sender is
   * told. A gap in the log's numbers (entries trimmed before this replica read them) resumes again.
   */
  async start(apply: (entry: LogEntry) => unknown, resume: (starting: boolean) => Promise<LogPosition>): Promise<void> {
    this.#reader = await this.#link.duplicate();
    this.#position = await resume(true);
    for (;;) {
      const entries = await this.#read(false);
      if (entries.length === 0) break;
      if (this.#applyAll(entries, apply) !== undefined) this.#position = await resume(false);
    }
    this.#loop = this.#follow(apply, resume);
  }

  /** Keeps a checkpoint of the state after `entry` (the checkpoint script), trimming the log before the previous one. */
  async keepCheckpoint(entry: LogEntry, state: string): Promise<boolean> {
    return this.#link.checkpoint(this.#keys, entry.count, entry.id, state);
  }

  /** The newest checkpoint: its entry's number and id, and the state kept (JSON); undefined when none was kept. */
  async readCheckpoint(): Promise<(LogPosition & { state: string }) | undefined> {
    const reply = await this.#link.command(this.#keys.checkpoint, ['HMGET', this.#keys.checkpoint, 'c', 'id', 'state']);
    const [count, id, state] = Array.isArray(reply) ? (reply as Array<string | null>) : [];
    if (count == null || id == null || state == null) return undefined;
    return { count: Number(count), id, state };
  }

  /**
   * Appends `payload` (with the others this replica appends in the same turn, append-batch.ts) and
   * waits until this replica has applied it; answers what `apply` gave.
   */
  async submit(payload: string): Promise<unknown> {
    if (this.#closed) throw new StoreUnavailable('this replica is shutting down.');
    const callNumber = this.#nextCall++;
    const answered = new Promise<unknown>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiters.delete(callNumber);
        reject(
          new StoreUnavailable(`the request was sent to the store but not seen back within ${this.#answerTimeoutMs} ms; it may or may not have taken effect.`),
        );
      }, this.#answerTimeoutMs);
      this.#waiters.set(callNumber, { resolve, reject, timer });
    });
    // The reader may refuse the answer (Redis lost) while the append is still on its way and then
    // fails too: the append's error is what the caller gets, and this refusal must not go unheard
    // (an unhandled rejection would end the process).
    answered.catch(() => undefined);
    try {
      await this.#batcher.add({ callNumber, payload });
    } catch (error) {
      const waiter = this.#waiters.get(callNumber);
      if (waiter !== undefined) {
        clearTimeout(waiter.timer);
        this.#waiters.delete(callNumber);
      }
      throw new StoreUnavailable(appendFailure(error));
    }
    return answered;
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#failWaiters('this replica is shutting down.');
    await this.#reader?.close();
    await this.#loop;
    await this.#link.close();
  }

  async #follow(apply: (entry: LogEntry) => unknown, resume: (starting: boolean) => Promise<LogPosition>): Promise<void> {
    while (!this.#closed) {
      let entries: LogEntry[];
      try {
        entries = await this.#read(true);
      } catch (error) {
        if (this.#closed) break;
        // Redis is away: what this replica appended may never be seen back, so its answers are
        // unknown now. The client reconnects by itself; try again.
        this.#failWaiters(
          `the store was lost before the answer came back (${error instanceof Error ? error.message : String(error)}); the request may or may not have taken effect: read the state before repeating a change.`,
        );
        await new Promise((resolve) => setTimeout(resolve, READ_RETRY_MS));
        continue;
      }
      const gap = this.#applyAll(entries, apply);
      if (gap !== undefined) await this.#resumeAfterGap(gap, resume);
    }
  }

  /**
   * This replica fell behind a trimmed log: the answers it waits for may be among the entries it
   * never saw, so they are unknown; it resumes from the newest checkpoint and follows on from there.
   */
  async #resumeAfterGap(gap: string, resume: (starting: boolean) => Promise<LogPosition>): Promise<void> {
    this.#failWaiters(
      `this replica fell behind the store's log (${gap}) and resumed from its newest checkpoint; the request may or may not have taken effect: read the state before repeating a change.`,
    );
    for (;;) {
      try {
        this.#position = await resume(false);
        return;
      } catch (error) {
        if (this.#closed) return;
        this.#failWaiters(`the store could not be read (${error instanceof Error ? error.message : String(error)}).`);
        await new Promise((resolve) => setTimeout(resolve, READ_RETRY_MS));
      }
    }
  }

  /**
   * Applies a batch in order up to a number skipped (entries trimmed before this replica read
   * them: it fell more than a checkpoint behind, or the store was changed by hand); answers that
   * gap, for which the replica must resume from the newest checkpoint, or undefined.
   */
  #applyAll(entries: readonly LogEntry[], apply: (entry: LogEntry) => unknown): string | undefined {
    for (const entry of entries) {
      if (entry.count !== this.#position.count + 1) return `after entry ${this.#position.count} came entry ${entry.count}`;
      this.#applyOne(entry, apply);
    }
    return undefined;
  }

  #failWaiters(reason: string): void {
    for (const waiter of this.#waiters.values()) {
      clearTimeout(waiter.timer);
      waiter.reject(new StoreUnavailable(reason));
    }
    this.#waiters.clear();
  }

  #applyOne(entry: LogEntry, apply: (entry: LogEntry) => unknown): void {
    this.#position = { id: entry.id, count: entry.count };
    const waiter = entry.origin === this.origin ? this.#waiters.get(entry.callNumber) : undefined;
    let answer: unknown;
    try {
      answer = apply(entry);
    } catch (error) {
      if (waiter !== undefined) this.#settle(entry.callNumber, waiter, () => waiter.reject(error as Error));
      return;
    }
    if (waiter !== undefined) this.#settle(entry.callNumber, waiter, () => waiter.resolve(answer));
  }

  #settle(callNumber: number, waiter: Waiter, settle: () => void): void {
    clearTimeout(waiter.timer);
    this.#waiters.delete(callNumber);
    settle();
  }

  async #read(block: boolean): Promise<LogEntry[]> {
    const reader = this.#reader;
    if (reader === undefined) return [];
    const args = ['XREAD', 'COUNT', String(READ_COUNT), ...(block ? ['BLOCK', String(READ_BLOCK_MS)] : []), 'STREAMS', this.#keys.stream, this.#position.id];
    return entriesOf(await reader.command(this.#keys.stream, args));
  }
}

/** Why an append failed, for the 503's detail. */
function appendFailure(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  if (message.includes(NO_GENESIS)) {
    return 'the store no longer holds this simulator (Redis lost its data: restarted without persistence, or flushed); nothing was changed. Restart every replica to start a new simulator on it.';
  }
  return `the store cannot be reached (${message}); nothing was changed. Retry once it is back.`;
}

/** The entries of an XREAD reply on one stream (RESP2: [[name, [[id, [field, value, …]], …]]] or null). */
export function entriesOf(reply: unknown): LogEntry[] {
  if (!Array.isArray(reply) || reply.length === 0) return [];
  const messages = (reply[0] as [unknown, Array<[string, string[]]>])[1];
  return messages.map(([id, fields]) => {
    const value = (name: string) => {
      const at = fields.indexOf(name);
      return at === -1 || at % 2 === 1 ? '' : String(fields[at + 1]);
    };
    return { id: String(id), stampMs: Number(value('s')), count: Number(value('c')), origin: value('o'), callNumber: Number(value('n')), payload: value('p') };
  });
}
