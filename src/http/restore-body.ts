/**
 * `/_sim/restore`'s body `{ "snapshot": … }` read as it arrives, one record at a time
 * (SnapshotReader's way, engine/json-reader.ts): each record is checked and built into its stored
 * form as soon as its text is complete, so neither the body nor its parsed form is ever whole in
 * memory. That lets a snapshot of a million keys (hundreds of MB) restore over HTTP, bounded by
 * its own body limit (`restoreMaxBodyBytes`) instead of the one for ordinary requests.
 *
 * What the client gets back does not depend on the way the body was read: a syntax error, the
 * schema's violations (body no object, an unknown field, snapshot missing or nested too deep),
 * then the restore's own checks, each as if the body had been parsed whole. The state is swapped
 * only once the whole body has been read and checked (restoreStreamed in operator.ts).
 */
import type { IncomingMessage } from 'node:http';
import { StringDecoder } from 'node:string_decoder';
import {
  CheckedSnapshot,
  type EngineSnapshot,
  type FieldError,
  JsonReader,
  type JsonReaderSink,
  type ReadMode,
  type Result,
  SNAPSHOT_MAX_DEPTH,
  SnapshotBuilder,
  snapshotMode,
} from '../engine/index.js';
import { type BodySink, readLimited } from './body.js';
import { restoreRequest } from './schemas/admin.js';
import { validate } from './schema.js';

/** The default of `restoreMaxBodyBytes`: 1 GiB, about two million keys with credits and refill. */
export const RESTORE_STREAM_MAX_BODY_BYTES = 1024 * 1024 * 1024;

/** A restore body read and checked: what the restore route's handler receives as its input. */
export class StreamedRestore {
  /** Whether the snapshot listed its root keys, and their hashes (for the operator check, before any other). */
  readonly rootKeys: { listed: boolean; hashes: readonly unknown[] };
  /** The snapshot, checked, or its first problem. */
  readonly checked: Result<CheckedSnapshot>;
  /** What the journal keeps of this restore (set just before it runs, while the journal records). */
  journalCopy: { snapshot: EngineSnapshot } | undefined;

  constructor(rootKeys: { listed: boolean; hashes: readonly unknown[] }, checked: Result<CheckedSnapshot>) {
    this.rootKeys = rootKeys;
    this.checked = checked;
  }

  /** The journal serialises its entries: a streamed restore is journaled as the body it stands for. */
  toJSON(): unknown {
    return this.journalCopy ?? { snapshot: {} };
  }
}

export type StreamedBody =
  | { ok: true; checked: { ok: true; value: StreamedRestore } | { ok: false; errors: FieldError[] } }
  | { ok: false; reason: 'too_large' | 'aborted' }
  | { ok: false; reason: 'syntax'; problem: string };

class RestoreBodySink implements JsonReaderSink {
  rootIsObject = false;
  rootValue: unknown;
  /** How the snapshot field was given: not at all, as an object (read in parts), or as another value. */
  snapshot: 'none' | 'object' | 'value' = 'none';
  snapshotValue: unknown;
  builder: SnapshotBuilder | null = null;
  /** The snapshot's nesting so far (objects and arrays are levels, as the schema counts them). */
  depth = 0;
  readonly unknown = new Set<string>();

  mode(path: readonly string[]): ReadMode {
    if (path.length === 0) return 'object';
    if (path.length === 1) return path[0] === 'snapshot' ? 'object' : 'items';
    return snapshotMode(path[1] as string);
  }

  open(path: readonly string[], kind: 'object' | 'array'): void {
    if (path.length === 0) {
      this.rootIsObject = true;
    } else if (path.length === 1 && path[0] !== 'snapshot') {
      this.unknown.add(path[0] as string);
    } else if (path.length === 1) {
      // A later "snapshot" replaces an earlier one, as JSON.parse keeps the last.
      this.snapshot = 'object';
      this.builder = new SnapshotBuilder();
      this.depth = 1;
    } else if (kind === 'array') {
      this.#deepen(2);
      this.builder?.beginList(path[1] as string);
    }
  }

  value(path: readonly string[], value: unknown, depth: number): void {
    if (path.length === 0) {
      this.rootValue = value;
    } else if (path.length === 1 && path[0] !== 'snapshot') {
      this.unknown.add(path[0] as string);
    } else if (path.length === 1) {
      this.snapshot = 'value';
      this.snapshotValue = value;
      this.builder = null;
    } else {
      this.#deepen(1 + depth);
      this.builder?.field(path[1] as string, value);
    }
  }

  item(path: readonly string[], _index: number, value: unknown, depth: number): void {
    if (path.length < 2) return; // an item of an unknown field: only its name matters
    this.#deepen(2 + depth);
    this.builder?.item(path[1] as string, value);
  }

  /** Past the schema's bound nothing more is built: the body is refused anyway. */
  #deepen(depth: number): void {
    if (depth > this.depth) this.depth = depth;
    if (this.depth > SNAPSHOT_MAX_DEPTH) this.builder = null;
  }

  /** The schema's verdict on the body, as validate() would give it on the whole value, then the snapshot. */
  verdict(empty: boolean, sha256: (text: string) => string): { ok: true; value: StreamedRestore } | { ok: false; errors: FieldError[] } {
    if (empty) return schemaErrors({});
    if (!this.rootIsObject) return schemaErrors(this.rootValue);
    // The schema judges the fields by name; the snapshot's own contents were judged as they came.
    const probe: Record<string, unknown> = {};
    if (this.snapshot !== 'none') probe.snapshot = this.snapshot === 'object' ? {} : this.snapshotValue;
    for (const name of this.unknown) probe[name] = null;
    const checked = validate(restoreRequest, probe, 'body');
    const errors = checked.ok ? [] : checked.errors;
    if (this.snapshot === 'object' && this.depth > SNAPSHOT_MAX_DEPTH)
      errors.unshift({ location: 'body.snapshot', message: `is nested deeper than ${SNAPSHOT_MAX_DEPTH} levels` });
    if (errors.length > 0) return { ok: false, errors };
    const builder = this.builder as SnapshotBuilder;
    return { ok: true, value: new StreamedRestore(builder.rootKeys, CheckedSnapshot.from(builder.finish(), sha256)) };
  }
}

function schemaErrors(value: unknown): { ok: false; errors: FieldError[] } {
  const checked = validate(restoreRequest, value, 'body');
  // Only a value that is no restore body gets here: the schema always refuses it.
  return { ok: false, errors: checked.ok ? [{ location: 'body', message: 'must be an object with a snapshot' }] : checked.errors };
}

/** Feeds the body to the JSON reader as it arrives, and answers once it has all arrived. */
class RestoreReading implements BodySink {
  readonly #sink = new RestoreBodySink();
  readonly #reader = new JsonReader(this.#sink);
  readonly #decoder = new StringDecoder('utf8');
  readonly #sha256: (text: string) => string;
  readonly #resolve: (body: StreamedBody) => void;
  /** The first syntax error: from there the body is only read to its end, not parsed. */
  #problem: string | undefined;

  constructor(sha256: (text: string) => string, resolve: (body: StreamedBody) => void) {
    this.#sha256 = sha256;
    this.#resolve = resolve;
  }

  chunk(chunk: Buffer): void {
    if (this.#problem === undefined) this.#problem = this.#reader.write(this.#decoder.write(chunk));
  }

  end(): void {
    if (this.#problem === undefined) this.#problem = this.#reader.write(this.#decoder.end());
    if (this.#problem === undefined) this.#problem = this.#reader.end();
    if (this.#problem !== undefined) this.#resolve({ ok: false, reason: 'syntax', problem: this.#problem });
    else this.#resolve({ ok: true, checked: this.#sink.verdict(this.#reader.empty, this.#sha256) });
  }

  refuse(reason: 'too_large' | 'aborted'): void {
    this.#resolve({ ok: false, reason });
  }
}

/**
 * Reads a restore body from the request up to `maxBytes`, checking and building the snapshot as
 * it arrives. A body over the limit stops being read at once (the caller answers 413 and discards
 * the rest); a syntax error stops the building, but the body is still read to its end, as a body
 * read whole would be, before the 400.
 */
export function readRestoreBody(req: IncomingMessage, maxBytes: number, sha256: (text: string) => string): Promise<StreamedBody> {
  return new Promise((resolve) => readLimited(req, maxBytes, new RestoreReading(sha256, resolve)));
}
