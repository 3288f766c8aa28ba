/**
 * What a segment of a shared set-up hands to the one teardown after the last segment
 * (docs/distributed.md#set-up-once): the resources its own load created and did not delete.
 *
 * A segment leaves everything to that teardown, but the keys its load created are in its own
 * ledger only, and keys cannot be found again by the run's tag (the public API does not list
 * them). So each such segment writes `resources.json` beside its partial report: its ledger's
 * open entries, ids only (no secret: a key is deleted by its id). `run --workers` adds the
 * workers' files to its ledger before its teardown; `keysim cleanup --resources PATH…` reads
 * those of segments run elsewhere.
 *
 *     { "schema": "keysim-resources", "version": 1, "tag": "keysim-…",
 *       "open": [{ "kind": "keys", "id": "key_…" }, { "kind": "overrides", "id": "keysim-…-u1", "namespace": "ns" }] }
 */
import { existsSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { RESOURCE_KINDS, type ResourceEntry, type ResourceKind, type ResourceLedger } from './resources.js';

/** The file's name in a segment's run folder. */
export const RESOURCES_FILE = 'resources.json';
export const RESOURCES_SCHEMA = 'keysim-resources';

export interface ResourcesFile {
  schema: typeof RESOURCES_SCHEMA;
  version: 1;
  /** The run's tag: a teardown or cleanup of another tag refuses the file. */
  tag: string;
  /** Created and not deleted, in creation order. */
  open: ResourceEntry[];
}

/** A file that is not a segment's resources, or names another run's tag. */
export class ResourcesFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ResourcesFileError';
  }
}

/** Writes the ledger's open entries (ids only) to `path`, whole or not at all (a temporary file renamed). */
export function writeOpenResources(path: string, ledger: ResourceLedger): void {
  const open = ledger.open.map((e): ResourceEntry => ({ kind: e.kind, id: e.id, ...(e.namespace === undefined ? {} : { namespace: e.namespace }) }));
  const file: ResourcesFile = { schema: RESOURCES_SCHEMA, version: 1, tag: ledger.tag, open };
  const temporary = `${path}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(file, null, 2)}\n`);
  renameSync(temporary, path);
}

const KINDS: ReadonlySet<string> = new Set(RESOURCE_KINDS);

function entryOf(value: unknown): ResourceEntry | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { kind, id, namespace } = value as Record<string, unknown>;
  if (typeof kind !== 'string' || !KINDS.has(kind) || typeof id !== 'string' || id === '') return undefined;
  if (namespace !== undefined && typeof namespace !== 'string') return undefined;
  return { kind: kind as ResourceKind, id, ...(namespace === undefined ? {} : { namespace }) };
}

/**
 * Reads a segment's resources: `path` is the file or the run folder holding it. Refuses a file of
 * another schema or, when `tag` is given, of another run (its ids would be another run's keys).
 */
export function readOpenResources(path: string, tag?: string): ResourcesFile {
  const file = existsSync(path) && statSync(path).isDirectory() ? join(path, RESOURCES_FILE) : path;
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new ResourcesFileError(`cannot read ${file}: ${error instanceof Error ? error.message : String(error)}`);
  }
  const p = (typeof parsed === 'object' && parsed !== null ? parsed : {}) as Record<string, unknown>;
  if (p.schema !== RESOURCES_SCHEMA || p.version !== 1 || typeof p.tag !== 'string' || !Array.isArray(p.open)) {
    throw new ResourcesFileError(`${file} is not a segment's ${RESOURCES_FILE} (schema ${RESOURCES_SCHEMA}, version 1)`);
  }
  if (tag !== undefined && p.tag !== tag) throw new ResourcesFileError(`${file} lists what run ${p.tag} created, not run ${tag}`);
  const open = p.open.map(entryOf);
  if (open.some((e) => e === undefined)) throw new ResourcesFileError(`${file} has an entry that is not a resource ({ kind, id, namespace? })`);
  return { schema: RESOURCES_SCHEMA, version: 1, tag: p.tag, open: open as ResourceEntry[] };
}
