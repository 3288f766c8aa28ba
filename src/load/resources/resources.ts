/**
 * The resources a run created on its target, and which of them it deleted: the ledger behind the
 * report's resources section and behind `keysim cleanup --tag`.
 *
 * The public API has no operation that lists keys (nor APIs), so a run that is killed could not
 * find its keys again by their names alone. The ledger is therefore also written, line by line
 * as things are created and deleted, to a file named after the run's tag; `keysim cleanup` reads
 * it back. Identities and overrides are found by listing as well (their externalId/identifier
 * starts with the tag), which catches what was created by a request whose answer was lost.
 */
import { appendFileSync, existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { ApiResponse, Operation } from '../scenario/index.js';

export const RESOURCE_KINDS = ['apis', 'keys', 'identities', 'overrides', 'namespaces'] as const;
export type ResourceKind = (typeof RESOURCE_KINDS)[number];

/** One created resource. `id` is what deletes it: keyId, identityId, identifier (overrides), name (namespaces), apiId. */
export interface ResourceEntry {
  kind: ResourceKind;
  id: string;
  /** Name or externalId, when it has one (shown, and a second reference for identities). */
  name?: string;
  /** Overrides: their namespace. */
  namespace?: string;
}

/** The folder (under the reports folder) where ledgers wait for `keysim cleanup`. */
export const LEDGER_FOLDER = '.resources';

/** Where the ledger of the run tagged `tag` is written under the reports folder `outDir`. */
export function ledgerPath(outDir: string, tag: string): string {
  return join(outDir, LEDGER_FOLDER, `${tag}.jsonl`);
}

const entryKey = (kind: ResourceKind, id: string, namespace?: string): string => `${kind}\u0000${namespace ?? ''}\u0000${id}`;

type Line = { event: 'created'; entry: ResourceEntry } | { event: 'deleted'; kind: ResourceKind; ref: string; namespace?: string };

export class ResourceLedger {
  readonly #created = new Map<string, ResourceEntry>();
  readonly #deleted = new Set<string>();
  /** Identities are deleted by id or externalId: externalId → id. */
  readonly #identityByName = new Map<string, string>();
  #path: string | undefined;

  /** `path`: append every event to this file (created with its folder); undefined: memory only. */
  constructor(
    readonly tag: string,
    path?: string,
  ) {
    this.#path = path;
    if (path !== undefined) mkdirSync(dirname(path), { recursive: true });
  }

  /** The file the ledger is written to, if any. */
  get path(): string | undefined {
    return this.#path;
  }

  /**
   * Reads a ledger file back (lines that do not parse, e.g. one cut short by a kill, are skipped).
   * `writable`: go on appending to the file (false: memory only, e.g. for a dry run).
   */
  static read(path: string, tag: string, writable = true): ResourceLedger {
    const ledger = new ResourceLedger(tag);
    const content = readFileSync(path, 'utf8');
    for (const text of content.split('\n')) {
      if (text.trim() === '') continue;
      let line: Line;
      try {
        line = JSON.parse(text) as Line;
      } catch {
        continue;
      }
      if (line.event === 'created') ledger.created(line.entry);
      else if (line.event === 'deleted') ledger.deleted(line.kind, line.ref, line.namespace);
    }
    if (writable) {
      // A line cut short by a kill must not swallow the next event appended.
      if (content !== '' && !content.endsWith('\n')) appendFileSync(path, '\n');
      ledger.#path = path;
    }
    return ledger;
  }

  #write(line: Line): void {
    // Synchronous, so that a run killed right after a creation still leaves its trace.
    if (this.#path === undefined) return;
    try {
      appendFileSync(this.#path, `${JSON.stringify(line)}\n`);
    } catch {
      // A full or vanished disk must not break the run: the ledger goes on in memory (the report still counts).
      this.#path = undefined;
    }
  }

  created(entry: ResourceEntry): void {
    const key = entryKey(entry.kind, entry.id, entry.namespace);
    if (this.#created.has(key) && !this.#deleted.has(key)) return;
    this.#created.set(key, entry);
    this.#deleted.delete(key);
    if (entry.kind === 'identities' && entry.name !== undefined) this.#identityByName.set(entry.name, entry.id);
    this.#write({ event: 'created', entry });
  }

  /** `ref`: what the delete named (an identity's id or externalId). Unknown references are ignored. */
  deleted(kind: ResourceKind, ref: string, namespace?: string): void {
    const id = kind === 'identities' ? (this.#identityByName.get(ref) ?? ref) : ref;
    const key = entryKey(kind, id, namespace);
    if (!this.#created.has(key) || this.#deleted.has(key)) return;
    this.#deleted.add(key);
    this.#write({ event: 'deleted', kind, ref: id, ...(namespace === undefined ? {} : { namespace }) });
  }

  /** Every resource created, in creation order. */
  get all(): ResourceEntry[] {
    return [...this.#created.values()];
  }

  /** Resources created and not (yet) deleted, in creation order. */
  get open(): ResourceEntry[] {
    return [...this.#created.entries()].filter(([key]) => !this.#deleted.has(key)).map(([, entry]) => entry);
  }

  isOpen(entry: ResourceEntry): boolean {
    const key = entryKey(entry.kind, entry.id, entry.namespace);
    return this.#created.has(key) && !this.#deleted.has(key);
  }

  /** Per kind: created and deleted. */
  counts(): Record<ResourceKind, { created: number; deleted: number }> {
    const out = Object.fromEntries(RESOURCE_KINDS.map((k) => [k, { created: 0, deleted: 0 }])) as Record<ResourceKind, { created: number; deleted: number }>;
    for (const [key, entry] of this.#created) {
      out[entry.kind].created++;
      if (this.#deleted.has(key)) out[entry.kind].deleted++;
    }
    return out;
  }

  /** Removes the file (nothing is left to clean up). */
  discardFile(): void {
    if (this.#path !== undefined && existsSync(this.#path)) rmSync(this.#path, { force: true });
    this.#path = undefined;
  }

  /**
   * Notes what a call of the public API created or deleted, from its answer: 200 to a create;
   * 200, 404 or 410 to a delete (gone either way). Any other call is ignored.
   */
  observe(op: Operation, body: unknown, response: ApiResponse): void {
    const b = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
    const data = typeof response.body === 'object' && response.body !== null ? (response.body as { data?: unknown }).data : undefined;
    const d = (typeof data === 'object' && data !== null ? data : {}) as Record<string, unknown>;
    const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
    const ok = response.status === 200;
    const gone = ok || response.status === 404 || response.status === 410;
    const named = (name: string | undefined) => (name === undefined ? {} : { name });
    switch (op) {
      case 'apis.createApi': {
        const id = str(d.apiId);
        if (ok && id !== undefined) this.created({ kind: 'apis', id, ...named(str(b.name)) });
        return;
      }
      case 'keys.createKey': {
        const id = str(d.keyId);
        if (ok && id !== undefined) this.created({ kind: 'keys', id, ...named(str(b.name)) });
        return;
      }
      case 'keys.deleteKey': {
        const id = str(b.keyId);
        if (gone && id !== undefined) this.deleted('keys', id);
        return;
      }
      case 'identities.createIdentity': {
        const id = str(d.identityId);
        if (ok && id !== undefined) this.created({ kind: 'identities', id, ...named(str(b.externalId)) });
        return;
      }
      case 'identities.deleteIdentity': {
        const ref = str(b.identity);
        if (gone && ref !== undefined) this.deleted('identities', ref);
        return;
      }
      case 'ratelimit.setOverride': {
        const namespace = str(b.namespace) ?? str(b.namespaceName);
        const identifier = str(b.identifier);
        if (ok && namespace !== undefined && identifier !== undefined) this.created({ kind: 'overrides', id: identifier, namespace });
        return;
      }
      case 'ratelimit.deleteOverride': {
        const namespace = str(b.namespace) ?? str(b.namespaceName);
        const identifier = str(b.identifier);
        if (gone && namespace !== undefined && identifier !== undefined) this.deleted('overrides', identifier, namespace);
        return;
      }
      default:
        return;
    }
  }
}
