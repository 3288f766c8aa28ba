/**
 * A snapshot read from its JSON text in pieces (a file, a request body), one record at a time:
 * each record is checked and built into its stored form as soon as its text is complete
 * (snapshot-builder.ts), so the text and its parsed form are never in memory whole. A restore
 * from it costs about what the restored state costs.
 *
 * The document is the snapshot itself, the answer of `/_sim/snapshot` (`{ meta, data }`) or a
 * restore body (`{ snapshot }`), as a file saved from the simulator may be any of them.
 */
import { type Result, invalid } from './errors.js';
import { JsonReader, type JsonReaderSink, type ReadMode } from './json-reader.js';
import { SnapshotBuilder } from './snapshot-builder.js';
import { checkSnapshot } from './snapshot-check.js';
import { SNAPSHOT_LOCATION } from './snapshot-fields.js';
import { CheckedSnapshot } from './snapshot.js';

/** Fields of the root that may hold the snapshot: the answer of /_sim/snapshot, a restore body. */
const WRAPPERS = ['data', 'snapshot'] as const;

/** How a field of a snapshot object is read: its lists record by record, the rest whole. */
export function snapshotMode(name: string): ReadMode {
  return SnapshotBuilder.isList(name) ? 'items' : 'whole';
}

export class SnapshotReader implements JsonReaderSink {
  readonly #json = new JsonReader(this);
  readonly #sha256: (text: string) => string;
  /** The root object read as a snapshot. */
  readonly #root = new SnapshotBuilder();
  readonly #wrapped = new Map<string, SnapshotBuilder>();
  /** The root, when it is no object (it is then read whole). */
  #rootValue: unknown;
  #rootIsObject = false;
  #rootHasFormat = false;

  constructor(sha256: (text: string) => string) {
    this.#sha256 = sha256;
  }

  /** The next piece of the text; a syntax problem ("… at character N") ends the reading. */
  write(text: string): string | undefined {
    return this.#json.write(text);
  }

  /** The end of the text: the checked snapshot, or the first problem (syntax first, then the checks). */
  end(): Result<CheckedSnapshot> {
    const problem = this.#json.end();
    if (problem !== undefined) return invalid(SNAPSHOT_LOCATION, `The snapshot is not valid JSON: ${problem}.`);
    if (this.#json.empty) return invalid(SNAPSHOT_LOCATION, 'The snapshot is empty: it should hold a snapshot taken with /_sim/snapshot.');
    if (!this.#rootIsObject) {
      const refused = checkSnapshot(this.#rootValue, this.#sha256);
      if (!refused.ok) return refused;
    }
    return CheckedSnapshot.from(this.#chosen().finish(), this.#sha256);
  }

  /** As a snapshot file is read: the root when it has a format, else `data`, else `snapshot`. */
  #chosen(): SnapshotBuilder {
    if (this.#rootHasFormat) return this.#root;
    for (const name of WRAPPERS) {
      const builder = this.#wrapped.get(name);
      if (builder !== undefined) return builder;
    }
    return this.#root;
  }

  #builder(path: readonly string[]): SnapshotBuilder | undefined {
    return path.length === 1 ? this.#root : this.#wrapped.get(path[0] as string);
  }

  mode(path: readonly string[]): ReadMode {
    if (path.length === 0) return 'object';
    if (path.length === 1 && (WRAPPERS as readonly string[]).includes(path[0] as string)) return 'object';
    return snapshotMode(path[path.length - 1] as string);
  }

  open(path: readonly string[], kind: 'object' | 'array'): void {
    if (path.length === 0) this.#rootIsObject = true;
    else if (kind === 'object') this.#wrapped.set(path[0] as string, new SnapshotBuilder());
    else this.#builder(path)?.beginList(path[path.length - 1] as string);
  }

  value(path: readonly string[], value: unknown): void {
    if (path.length === 0) {
      this.#rootValue = value;
      return;
    }
    const name = path[path.length - 1] as string;
    if (path.length === 1) {
      if (name === 'format') this.#rootHasFormat = value !== undefined;
      // A wrapper field that is no object holds no snapshot (a later one replaces an earlier).
      this.#wrapped.delete(name);
    }
    this.#builder(path)?.field(name, value);
  }

  item(path: readonly string[], _index: number, value: unknown): void {
    this.#builder(path)?.item(path[path.length - 1] as string, value);
  }
}
