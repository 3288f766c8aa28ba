/**
 * The simulator's journal as the run folder keeps it (`journal.jsonl.gz`, beside the history), so
 * that `keysim check` can run the oracle again offline: the replay needs the journal's start (the
 * engine snapshot it began from) and every entry in order, and the verdict needs how the journal
 * ended (an overflow, a reset, a drain that failed).
 *
 * One JSON value per line, gzipped: a header `{ format, version, start }`, the entries as the
 * simulator handed them out, and a last line `{ end: { … } }` written when the run closed it. A
 * file without that last line was cut short (a killed run): what it holds is a correct prefix.
 * Written as the oracle drains (about once a second), through gzip; memory stays flat.
 */
import { createReadStream, createWriteStream, type WriteStream } from 'node:fs';
import { type Gzip, constants as zlibConstants, createGunzip, createGzip } from 'node:zlib';
import type { JournalEntry, JournalStart } from '../../http/index.js';

export const JOURNAL_FILE = 'journal.jsonl.gz';
const JOURNAL_FORMAT = 'keysim-journal';
const JOURNAL_VERSION = 1;

/** How the journal ended, as far as the oracle that drained it knows. */
export interface JournalEnd {
  /** The simulator stopped recording at its capacity: later operations are not in the file. */
  overflowed: boolean;
  /** Why the simulator ended the journal mid-run (e.g. a reset). */
  endedBecause?: string;
  /** Why the run could not read or replay the journal (the file then stops there). */
  failure?: string;
}

export class JournalFileWriter {
  readonly #gzip: Gzip;
  readonly #closed: Promise<void>;
  #error: Error | undefined;

  /**
   * Any error of either stream destroys both, so that both end with 'close': every wait below
   * listens for 'error' and 'close' besides what it waits for, and none can hang on a stream that
   * died (a full disk, a removed file system, a stream destroyed) while it waited.
   */
  private constructor(gzip: Gzip, file: WriteStream) {
    this.#gzip = gzip;
    this.#closed = new Promise<void>((resolve) => file.once('close', () => resolve()));
    const fail = (error: Error) => {
      this.#error ??= error;
      if (!gzip.destroyed) gzip.destroy(error);
      if (!file.destroyed) file.destroy(error);
    };
    gzip.on('error', fail);
    file.on('error', fail);
    // Closed by anyone before the end was written: the writes after it would never be flushed.
    gzip.once('close', () => {
      if (!file.destroyed && !file.writableFinished && !gzip.writableFinished)
        fail(new Error("the journal file's compressor was closed before the journal ended"));
    });
    gzip.pipe(file);
  }

  /** Creates (or truncates) the file and writes the journal's start. Rejects if it cannot be opened. */
  static async create(path: string, start: JournalStart): Promise<JournalFileWriter> {
    const file = createWriteStream(path);
    await new Promise<void>((resolve, reject) => {
      file.once('open', () => resolve());
      file.once('error', reject);
    });
    const writer = new JournalFileWriter(createGzip({ level: zlibConstants.Z_BEST_SPEED }), file);
    await writer.#write(`${JSON.stringify({ format: JOURNAL_FORMAT, version: JOURNAL_VERSION, start })}\n`);
    return writer;
  }

  /** Rejects with the stream's error when it failed or was destroyed before (or while) writing. */
  async #write(text: string): Promise<void> {
    this.#throwIfBroken();
    if (this.#gzip.write(text)) return;
    await new Promise<void>((resolve, reject) => {
      const settle = (error?: Error) => {
        this.#gzip.off('drain', onDrain);
        this.#gzip.off('error', onError);
        this.#gzip.off('close', onClose);
        if (error === undefined) resolve();
        else reject(error);
      };
      const onDrain = () => settle();
      const onError = (error: Error) => settle(error);
      const onClose = () => settle(this.#error ?? new Error('the journal file was closed while a write waited for it'));
      this.#gzip.on('drain', onDrain);
      this.#gzip.on('error', onError);
      this.#gzip.on('close', onClose);
      // Destroyed between the write and these listeners: no event will come.
      if (this.#gzip.destroyed) onClose();
    });
  }

  #throwIfBroken(): void {
    if (this.#error !== undefined) throw this.#error;
    if (this.#gzip.destroyed) throw new Error('the journal file was closed before the journal ended');
  }

  /** Appends entries (in journal order) and pushes them to the file, so a killed run keeps them. */
  async append(entries: readonly JournalEntry[]): Promise<void> {
    if (entries.length === 0) return;
    await this.#write(`${entries.map((e) => JSON.stringify(e)).join('\n')}\n`);
    this.#gzip.flush(zlibConstants.Z_SYNC_FLUSH);
  }

  /** Writes how the journal ended and closes the file; rejects with the cause if writing failed. */
  async close(end: JournalEnd): Promise<void> {
    await this.#write(`${JSON.stringify({ end })}\n`).catch(() => undefined);
    if (!this.#gzip.destroyed) this.#gzip.end();
    // The file's 'close' comes after its end, or after any error (both streams are destroyed then).
    await this.#closed;
    if (this.#error !== undefined) throw this.#error;
  }

  /** For tests and for a run that gives up: destroys the streams as a failure would. */
  destroy(error: Error): void {
    this.#gzip.destroy(error);
  }
}

/** A journal file read back: its start, its entries in order, and its end (undefined: cut short). */
export interface JournalFile {
  start: JournalStart;
  entries: AsyncIterable<JournalEntry>;
  /** Known once `entries` is read to its end. */
  end(): JournalEnd | undefined;
}

/** The file's lines; a gzip stream cut short (a killed run) ends them early and sets `cut`. */
async function* linesOf(path: string, ending: { cut: boolean }): AsyncGenerator<string> {
  const file = createReadStream(path);
  const gunzip = createGunzip();
  file.on('error', (error) => gunzip.destroy(error));
  const source = file.pipe(gunzip).setEncoding('utf8');
  let pending = '';
  try {
    for await (const chunk of source as AsyncIterable<string>) {
      pending += chunk;
      let from = 0;
      for (let nl = pending.indexOf('\n', from); nl !== -1; nl = pending.indexOf('\n', from)) {
        yield pending.slice(from, nl);
        from = nl + 1;
      }
      pending = pending.slice(from);
    }
  } catch {
    // The half-written line after the last newline never was an entry: what came before stands.
    ending.cut = true;
    return;
  } finally {
    file.destroy();
  }
  if (pending !== '') ending.cut = true;
}

/** Opens a journal file; throws with the reason when it is not one. */
export async function openJournalFile(path: string): Promise<JournalFile> {
  const ending = { cut: false };
  const lines = linesOf(path, ending);
  const first = await lines.next();
  let header: { format?: unknown; version?: unknown; start?: JournalStart } | undefined;
  try {
    header = first.done === true ? undefined : (JSON.parse(first.value) as typeof header);
  } catch {
    header = undefined;
  }
  if (header?.format !== JOURNAL_FORMAT || header.version !== JOURNAL_VERSION || header.start === undefined) {
    await lines.return(undefined);
    throw new Error(`${path} is not a keysim journal (${JOURNAL_FORMAT} version ${JOURNAL_VERSION}), or was cut short before its start was saved`);
  }
  let end: JournalEnd | undefined;
  async function* entries(): AsyncGenerator<JournalEntry> {
    for await (const text of lines) {
      if (text.trim() === '') continue;
      const value = JSON.parse(text) as unknown;
      if (typeof value === 'object' && value !== null && 'end' in value) {
        end = (value as { end: JournalEnd }).end;
        return;
      }
      yield value as JournalEntry;
    }
  }
  return { start: header.start, entries: entries(), end: () => (ending.cut ? undefined : end) };
}
