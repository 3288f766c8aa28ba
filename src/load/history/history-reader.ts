/**
 * Reading a history back (gzip or plain JSON lines), line by line, each line validated.
 *
 * A run that was killed leaves a history cut short: the gzip stream ends without its trailer, the
 * last line may be half written. Read with `allowTruncated`, such a file yields its complete lines
 * and says that it was truncated; `checkablePrefix` then keeps what the checkers can judge.
 */
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import type { HistoryEvent, HistoryHeader } from './history-format.js';
import { Invalid, validEvent, validHeader } from './history-validate.js';

/** A history file that cannot be read: the message names the file and, for a bad line, its number. */
export class HistoryFileError extends Error {
  constructor(
    readonly file: string,
    readonly line: number | undefined,
    detail: string,
  ) {
    super(line === undefined ? `${file}: ${detail}` : `${file}: line ${line}: ${detail}`);
    this.name = 'HistoryFileError';
  }
}

/** Longer lines are refused (a corrupt file must not exhaust memory). */
const MAX_LINE_CHARS = 4 * 1024 * 1024;

/** What reading found out about the end of the file (known once every line was read). */
interface Ending {
  truncated: boolean;
}

/** zlib's error for a stream that ends before its trailer: the file was cut short, not damaged. */
function isCutShort(error: unknown): boolean {
  return (error as { code?: unknown }).code === 'Z_BUF_ERROR';
}

async function* linesOf(path: string, ending: Ending, allowTruncated: boolean): AsyncGenerator<{ text: string; line: number }> {
  let handle;
  try {
    handle = await open(path, 'r');
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    throw new HistoryFileError(
      path,
      undefined,
      code === 'ENOENT' ? 'no such file' : `cannot be opened (${error instanceof Error ? error.message : String(error)})`,
    );
  }
  const magic = Buffer.alloc(2);
  const { bytesRead } = await handle.read(magic, 0, 2, 0);
  await handle.close();
  const gzipped = bytesRead === 2 && magic[0] === 0x1f && magic[1] === 0x8b;
  const file = createReadStream(path);
  let source: Readable = file;
  if (gzipped) {
    const gunzip = createGunzip();
    file.on('error', (error) => gunzip.destroy(error));
    source = file.pipe(gunzip);
  }
  source.setEncoding('utf8');
  let pending = '';
  let line = 0;
  try {
    for await (const chunk of source as AsyncIterable<string>) {
      pending += chunk;
      let start = 0;
      for (let nl = pending.indexOf('\n', start); nl !== -1; nl = pending.indexOf('\n', start)) {
        line++;
        yield { text: pending.slice(start, nl), line };
        start = nl + 1;
      }
      pending = pending.slice(start);
      if (pending.length > MAX_LINE_CHARS) throw new HistoryFileError(path, line + 1, `the line is longer than ${MAX_LINE_CHARS} characters`);
    }
  } catch (error) {
    if (error instanceof HistoryFileError) throw error;
    if (allowTruncated && gzipped && isCutShort(error)) {
      // The half-written line after the last newline is dropped: it never was a record.
      ending.truncated = true;
      return;
    }
    const detail = error instanceof Error ? error.message : String(error);
    throw new HistoryFileError(path, line + 1, gzipped ? `the gzip data is damaged or cut short after line ${line} (${detail})` : detail);
  } finally {
    file.destroy();
  }
  if (pending.length > 0) {
    // The writer ends every line with a newline: a last line without one was cut short.
    if (allowTruncated && !isJson(pending)) {
      ending.truncated = true;
      return;
    }
    yield { text: pending, line: line + 1 };
  }
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

function parseLine(path: string, text: string, line: number): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new HistoryFileError(path, line, 'not valid JSON');
  }
}

export interface OpenedHistory {
  header: HistoryHeader;
  /** The events, validated one by one as they are read (single pass). */
  events: AsyncIterable<HistoryEvent>;
  /** Whether the file was cut short (only with `allowTruncated`; known once `events` is read to the end). */
  readonly truncated: boolean;
}

export interface ReadOptions {
  /**
   * Read the complete lines of a history that was cut short (a run killed while writing it)
   * instead of refusing it; `truncated` tells.
   */
  allowTruncated?: boolean;
}

/**
 * Opens a history (gzip or plain JSON lines) and checks its header. Iterating `events` streams the
 * file; a bad line rejects with a HistoryFileError naming its line number. Blank lines are skipped.
 */
export async function openHistory(path: string, options: ReadOptions = {}): Promise<OpenedHistory> {
  const ending: Ending = { truncated: false };
  const lines = linesOf(path, ending, options.allowTruncated === true);
  const first = await lines.next();
  if (first.done === true) {
    throw new HistoryFileError(
      path,
      undefined,
      ending.truncated
        ? 'the file was cut short before its header line was complete: the run was stopped before anything of it was saved'
        : 'the file is empty: no header line',
    );
  }
  let header: HistoryHeader;
  try {
    header = validHeader(parseLine(path, first.value.text, first.value.line));
  } catch (error) {
    await lines.return(undefined);
    if (error instanceof Invalid) throw new HistoryFileError(path, first.value.line, error.message);
    throw error;
  }
  async function* events(): AsyncGenerator<HistoryEvent> {
    for await (const { text, line } of lines) {
      if (text.trim() === '') continue;
      try {
        yield validEvent(parseLine(path, text, line));
      } catch (error) {
        if (error instanceof Invalid) throw new HistoryFileError(path, line, error.message);
        throw error;
      }
    }
  }
  return {
    header,
    events: events(),
    get truncated() {
      return ending.truncated;
    },
  };
}

/** Reads a whole history into memory (the checkers need all of it anyway). */
export async function readHistory(path: string, options: ReadOptions = {}): Promise<{ header: HistoryHeader; events: HistoryEvent[]; truncated: boolean }> {
  const opened = await openHistory(path, options);
  const events: HistoryEvent[] = [];
  for await (const event of opened.events) events.push(event);
  return { header: opened.header, events, truncated: opened.truncated };
}

/** The part of a cut-short history that can be judged, and what was left out. */
export interface CheckablePrefix {
  events: HistoryEvent[];
  /** Operations read but left out: they may have been affected by operations the file lost. */
  leftOut: number;
  /** Wall time (Unix ms) before which every operation is in `events`; undefined when none is. */
  untilMs: number | undefined;
}

/**
 * What the checkers can judge of a truncated history: the operations that completed before any
 * operation missing from the file was sent. Sequence numbers are given at send time, in order, so
 * the first missing number m marks the earliest send the file may have lost; it was sent after
 * every operation numbered below m (all present). An operation that completed before the latest of
 * those sends cannot have seen a lost one's effect, and every operation that completed by then is
 * in the file (the file is written in completion order). Judging the rest could blame the service
 * for the effect of an operation the file lost.
 */
export function checkablePrefix(events: readonly HistoryEvent[]): CheckablePrefix {
  const seqs = new Set(events.map((e) => e.seq));
  let firstMissing = 0;
  while (seqs.has(firstMissing)) firstMissing++;
  let untilMs = Number.NEGATIVE_INFINITY;
  for (const e of events) if (e.seq < firstMissing && e.invokeMs > untilMs) untilMs = e.invokeMs;
  const kept = events.filter((e) => e.completeMs < untilMs);
  return { events: kept, leftOut: events.length - kept.length, untilMs: kept.length === 0 ? undefined : untilMs };
}
